//! A link's forward capacity: a constant `rate`, a `schedule` of steps and ramps, or a `trace`
//! (a mahimahi file or a synthesised one).

use super::budget::{self, Limits};
use crate::scenario::spec::{Capacity, LinkSpec, SchedulePoint, TraceSpec};
use crate::scenario::{Origin, ScenarioError};
use crate::trace;
use polycc::units::Duration;

/// The capacity of link `i`; exactly one of `rate`, `schedule`, `trace` is given. A synthesised
/// trace draws from the run's `seed`, mixed with the link's index, over `duration`.
pub(super) fn resolve_capacity(
    origin: &Origin,
    i: usize,
    l: &LinkSpec,
    seed: u64,
    duration: Duration,
    limits: &Limits,
) -> Result<Capacity, ScenarioError> {
    let at = |k: &str| format!("links[{i}].{k}");
    let given = [l.rate.is_some(), l.schedule.is_some(), l.trace.is_some()]
        .iter()
        .filter(|b| **b)
        .count();
    if given != 1 {
        return Err(origin.err(
            format!("links[{i}]"),
            "give exactly one of `rate`, `schedule`, `trace`",
        ));
    }
    if let Some(r) = &l.rate {
        if r.value.as_bps() == 0 {
            return Err(origin.err(at("rate"), "must be positive"));
        }
        Ok(Capacity::Constant(r.value))
    } else if let Some(points) = &l.schedule {
        resolve_schedule(origin, i, points)
    } else {
        let spec = l.trace.as_ref().expect("one of three");
        let (opps, period) = match spec {
            TraceSpec::File(p) => trace::load_mahimahi_within(
                &origin.base_dir.join(p),
                budget::max_trace_file_bytes(limits),
            ),
            TraceSpec::Synth(s) => {
                budget::check_synth(origin, &at("trace"), s, duration, limits)?;
                trace::synthesize(s, seed ^ (i as u64).wrapping_mul(0x9E37_79B9), duration)
            }
        }
        .map_err(|m| origin.err(at("trace"), m))?;
        Ok(Capacity::Trace {
            opportunities_ms: opps,
            period_ms: period,
            bytes_per_opportunity: trace::MAHIMAHI_OPPORTUNITY_BYTES,
        })
    }
}

/// A `schedule`: points in increasing time from "0s", the first not a ramp, not all zero.
fn resolve_schedule(
    origin: &Origin,
    i: usize,
    points: &[SchedulePoint],
) -> Result<Capacity, ScenarioError> {
    if points.is_empty() {
        return Err(origin.err(
            format!("links[{i}].schedule"),
            "needs at least one { at, rate } point",
        ));
    }
    let mut prev = None;
    let mut out = Vec::new();
    for (j, p) in points.iter().enumerate() {
        if prev.is_some_and(|t| p.at.value <= t) {
            return Err(origin.err(
                format!("links[{i}].schedule[{j}].at"),
                "points must be in increasing time order",
            ));
        }
        if j == 0 && p.ramp {
            return Err(origin.err(
                format!("links[{i}].schedule[{j}].ramp"),
                "the first point cannot ramp",
            ));
        }
        prev = Some(p.at.value);
        out.push((p.at.value, p.rate.value, p.ramp));
    }
    if !out[0].0.is_zero() {
        return Err(origin.err(
            format!("links[{i}].schedule[0].at"),
            "the first point must be at \"0s\"",
        ));
    }
    if out.iter().all(|p| p.1.as_bps() == 0) {
        return Err(origin.err(
            format!("links[{i}].schedule"),
            "capacity is zero throughout",
        ));
    }
    Ok(Capacity::Schedule(out))
}
