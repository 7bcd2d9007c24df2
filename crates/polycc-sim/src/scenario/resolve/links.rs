//! Links: capacity, random loss and propagation delay with their schedule, jitter, the reverse
//! direction, ACK aggregation.

use super::budget::Limits;
use super::capacity::resolve_capacity;
use super::queues::dir_model;
use crate::scenario::spec::{Capacity, Direction, LinkSpec, Scenario};
use crate::scenario::{
    check_prob, nominal_rate, ConditionChange, LinkDirModel, LinkModel, Origin, ScenarioError,
};
use polycc::units::Duration;

/// Why a loss of 1.0 in force to the end of the run is refused: nothing is acknowledged, so the
/// transport never declares a loss and the summary would report none.
const TOTAL_LOSS: &str = "1.0 loses every packet to the end of the run: nothing arrives or is acknowledged, so no loss could even be measured; allowed: 0.0 to below 1.0 (for an outage, set loss = 1.0 at a schedule point and end it at a later one)";

/// Every link; `max_rtt_on_link` sizes buffers given in bdp.
pub(super) fn resolve_links(
    sc: &Scenario,
    origin: &Origin,
    max_rtt_on_link: &[Duration],
    full_packet: u64,
    limits: &Limits,
) -> Result<Vec<LinkModel>, ScenarioError> {
    sc.links
        .iter()
        .enumerate()
        .map(|(i, l)| resolve_link(sc, origin, i, l, max_rtt_on_link[i], full_packet, limits))
        .collect()
}

/// Link `i`, whose flows have RTTs up to `max_rtt`.
fn resolve_link(
    sc: &Scenario,
    origin: &Origin,
    i: usize,
    l: &LinkSpec,
    max_rtt: Duration,
    full_packet: u64,
    limits: &Limits,
) -> Result<LinkModel, ScenarioError> {
    let at = |k: &str| format!("links[{i}].{k}");
    let capacity = resolve_capacity(origin, i, l, sc.seed, sc.duration.value, limits)?;
    check_prob(origin, &at("loss"), l.loss)?;
    check_prob(origin, &at("ack_loss"), l.ack_loss)?;
    for (key, p) in [("loss", l.loss), ("ack_loss", l.ack_loss)] {
        if p >= 1.0 {
            return Err(origin.err(at(key), TOTAL_LOSS));
        }
    }
    let mut conditions = resolve_conditions(origin, i, l)?;
    let (forward, reverse) = resolve_directions(origin, i, l, capacity, max_rtt, full_packet)?;
    // A change at time zero is the link's starting condition.
    let start = match conditions.first() {
        Some(c) if c.at.is_zero() => conditions.remove(0),
        _ => ConditionChange {
            at: Duration::ZERO,
            loss: l.loss,
            ack_loss: l.ack_loss,
            delay: l.delay.value,
        },
    };
    // ACK aggregation happens where ACKs leave the reverse path, recorded on the link.
    let ack_aggregation = match &l.ack_aggregation {
        Some(a) if a.interval.value.is_zero() => {
            return Err(origin.err(at("ack_aggregation.interval"), "must be positive"))
        }
        Some(a) => Some(a.interval.value),
        None => None,
    };
    let jitter = l.jitter.as_ref();
    let rev_jitter = jitter
        .filter(|j| j.direction != Direction::Data)
        .map(|j| j.max.value);
    Ok(LinkModel {
        id: l.id.clone(),
        delay: start.delay,
        forward: LinkDirModel {
            loss: start.loss,
            jitter: jitter
                .filter(|j| j.direction != Direction::Ack)
                .map(|j| j.max.value),
            ack_aggregation,
            ..forward
        },
        conditions,
        reverse: reverse.map(|r| LinkDirModel {
            loss: start.ack_loss,
            jitter: rev_jitter,
            ..r
        }),
        reverse_loss: start.ack_loss,
        reverse_jitter: rev_jitter,
        jitter_reorder: jitter.is_some_and(|j| j.reorder),
    })
}

/// The forward direction's queue at `capacity`, and the reverse direction when the link has a
/// `reverse_rate` (without one the reverse direction is uncongested).
fn resolve_directions(
    origin: &Origin,
    i: usize,
    l: &LinkSpec,
    capacity: Capacity,
    max_rtt: Duration,
    full_packet: u64,
) -> Result<(LinkDirModel, Option<LinkDirModel>), ScenarioError> {
    let at = |k: &str| format!("links[{i}].{k}");
    let nominal_rate = nominal_rate(&capacity);
    let forward = dir_model(
        origin,
        &at("queue"),
        capacity,
        &l.queue,
        nominal_rate,
        max_rtt,
        full_packet,
    )?;
    let reverse = match &l.reverse_rate {
        None => None,
        Some(r) if r.value.as_bps() == 0 => {
            return Err(origin.err(at("reverse_rate"), "must be positive"))
        }
        Some(r) => Some(dir_model(
            origin,
            &at("reverse_queue"),
            Capacity::Constant(r.value),
            &l.reverse_queue,
            r.value,
            max_rtt,
            full_packet,
        )?),
    };
    Ok((forward, reverse))
}

/// The schedule points that change loss or delay, each with the full condition from then on.
fn resolve_conditions(
    origin: &Origin,
    i: usize,
    l: &LinkSpec,
) -> Result<Vec<ConditionChange>, ScenarioError> {
    let mut conditions = Vec::new();
    let mut last_point = 0;
    let (mut loss, mut ack_loss, mut delay) = (l.loss, l.ack_loss, l.delay.value);
    for (j, p) in l.schedule.iter().flatten().enumerate() {
        if p.loss.is_none() && p.ack_loss.is_none() && p.delay.is_none() {
            continue;
        }
        if let Some(x) = p.loss {
            check_prob(origin, &format!("links[{i}].schedule[{j}].loss"), x)?;
            loss = x;
        }
        if let Some(x) = p.ack_loss {
            check_prob(origin, &format!("links[{i}].schedule[{j}].ack_loss"), x)?;
            ack_loss = x;
        }
        if let Some(x) = &p.delay {
            delay = x.value;
        }
        conditions.push(ConditionChange {
            at: p.at.value,
            loss,
            ack_loss,
            delay,
        });
        last_point = j;
    }
    // An outage must end: a total loss left in force to the end of the run is refused.
    if let Some(c) = conditions.last() {
        for (key, p) in [("loss", c.loss), ("ack_loss", c.ack_loss)] {
            if p >= 1.0 {
                return Err(origin.err(
                    format!("links[{i}].schedule[{last_point}].{key}"),
                    TOTAL_LOSS,
                ));
            }
        }
    }
    Ok(conditions)
}
