//! PolyCC (Zhu et al., "PolyCC: Poly-Algorithmic Congestion Control", SIGCOMM'23 demo): a pool
//! of CCAs run side by side on one flow. One pilot drives the sender, copilots advise, and a
//! fusion function computes the calibrated window or rate that is written back to the pool.
//!
//! Registered as `poly`:
//! `cca = { name = "poly", pilot = "bbr", copilots = ["cubic"], fuse = "max", on = "cwnd" }`.
//! Keys (defaults are the paper's §3.1 demonstration):
//! - `pilot` (`"bbr"`), `copilots` (`["cubic"]`): CCAs of the registry, names or tables with
//!   parameters; up to [`MAX_MEMBERS`] in all. An empty copilot list runs the pilot alone through
//!   the agent (used to measure the agent's own cost).
//! - `fuse`: `"max"` (default), `"min"`, `"closest"` (argmin |x_i − x*|), `"mean"` (weighted);
//!   `weights` (one per member, pool order, for `mean`; equal by default); `target` for
//!   `closest`: `"bdp"` (default, derived), `"intent"` or a number (bytes for `on = "cwnd"`,
//!   Mbit/s for `on = "rate"`).
//! - `on`: `"cwnd"` (default) or `"rate"`.
//! - `fuse_every`: `"ack"` (default for the built-in fusions: every ACK, loss, feedback and due
//!   timer, the paper's) or `"rtt"` (once per smoothed RTT; the default for Python fusions).
//! - `write_back`: `"all"` (default, the paper) or `"pilot"`.
//! - `rules`: rule-based pilot selection ([`filter`]), `min_dwell_rtts` (default 4).
//!
//! A user-defined fusion implements [`fusion::Fusion`]. Registered in a registry by name
//! ([`register_fusion`]) it is chosen with `fuse = "<name>"` like a built-in one (the
//! Python bindings register Python callables as `py:<name>`); or it is built into a CCA of its
//! own name with [`build_with_fusion`].
//!
//! One concept per file: [`agent`] (running the pool, fusing, writing back), [`members`] (a
//! member's value and the window ↔ rate conversions), [`filter`] (pilot selection),
//! [`signals`] (what rules measure), [`fusion`], [`fusion_registry`] (user fusions by name),
//! [`telemetry`].

pub mod agent;
pub mod filter;
pub mod fusion;
pub mod fusion_registry;
pub mod members;
pub mod signals;
pub mod telemetry;

#[cfg(test)]
mod tests;

pub use agent::{AgentConfig, Poly, Target, WriteBack};
pub use fusion_registry::{register_fusion, FusionFactory};
pub use telemetry::MAX_MEMBERS;

use crate::cc::{CcContext, CongestionControl};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, CcSpec, Params, Registry};
use filter::{Filter, Rule, RuleParams};
use fusion::{Every, Fusion};
use fusion_registry::{registered, registered_names};
use members::{Member, Quantity};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "poly";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "PolyCC (Zhu et al., SIGCOMM'23 demo): a pool of CCAs on one flow, pilot + copilots, fused window or rate (max, min, closest, weighted mean) written back; rule-based pilot changes";

/// Names of the built-in fusion functions.
pub const BUILTIN_FUSIONS: [&str; 4] = ["max", "min", "closest", "mean"];

/// Prefix of the fusions the Python bindings register (`fuse = "py:<name>"`).
pub const PY_PREFIX: &str = "py:";

/// §3.1: BBR pilots.
pub const DEFAULT_PILOT: &str = "bbr";
/// §3.1: CUBIC advises.
pub const DEFAULT_COPILOT: &str = "cubic";

/// Registers PolyCC under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<PolyParams>(), build);
}

/// `on` values: the quantity fused.
const ON: [&str; 2] = ["cwnd", "rate"];
/// `write_back` values.
const WRITE_BACK: [&str; 2] = ["all", "pilot"];
/// `fuse_every` values.
const FUSE_EVERY: [&str; 2] = ["ack", "rtt"];
/// Most windows a new pilot may be kept for: a typo guard (10 000 RTTs is minutes).
const MAX_DWELL_RTTS: f64 = 10_000.0;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct PolyParams {
    #[serde(default = "default_pilot")]
    pilot: CcSpec,
    #[serde(default = "default_copilots")]
    copilots: Vec<CcSpec>,
    fuse: Option<String>,
    #[serde(default = "default_on")]
    on: String,
    fuse_every: Option<String>,
    weights: Option<Vec<f64>>,
    target: Option<serde_json::Value>,
    #[serde(default = "default_write_back")]
    write_back: String,
    #[serde(default)]
    rules: Vec<RuleParams>,
    #[serde(default = "default_min_dwell")]
    min_dwell_rtts: u32,
}

fn default_pilot() -> CcSpec {
    CcSpec::named(DEFAULT_PILOT)
}
fn default_copilots() -> Vec<CcSpec> {
    vec![CcSpec::named(DEFAULT_COPILOT)]
}
fn default_on() -> String {
    "cwnd".to_string()
}
fn default_write_back() -> String {
    "all".to_string()
}
fn default_min_dwell() -> u32 {
    filter::DEFAULT_MIN_DWELL_RTTS
}

impl ParamTable for PolyParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "pilot",
            Kind::Cca,
            "the CCA that drives the flow (the pool's first member)",
            "PolyCC §3.1 (BBR pilots)",
        ),
        ParamSpec::new(
            "copilots",
            Kind::CcaList,
            "CCAs that run beside the pilot and advise; at most 7 (8 members in all)",
            "PolyCC §3.1 (CUBIC advises)",
        ),
        ParamSpec::new(
            "fuse",
            Kind::Text,
            "fusion function: max, min, closest, mean, or a registered one (py:<name>)",
            "PolyCC §3.1",
        )
        .when_absent("\"max\""),
        ParamSpec::new(
            "on",
            Kind::Choice(&ON),
            "the quantity fused and written back: the window or the pacing rate",
            "PolyCC §3.1",
        ),
        ParamSpec::new(
            "fuse_every",
            Kind::Choice(&FUSE_EVERY),
            "fuse on every ACK, loss, feedback and timer, or once per smoothed RTT",
            "PolyCC §2 (every ACK); polycc: per RTT for Python fusions",
        )
        .when_absent("ack for the built-in fusions, rtt for Python ones"),
        ParamSpec::new(
            "weights",
            Kind::NumberList,
            "one weight per member, pool order, for fuse = \"mean\"",
            "PolyCC §2",
        )
        .when_absent("equal weights"),
        ParamSpec::new(
            "target",
            Kind::Described("\"bdp\", \"intent\" or a number (bytes for cwnd, Mbit/s for rate)"),
            "x* of fuse = \"closest\" (argmin |x_i − x*|)",
            "PolyCC §2",
        )
        .when_absent("\"bdp\", the BDP estimate"),
        ParamSpec::new(
            "write_back",
            Kind::Choice(&WRITE_BACK),
            "members the fused value is written into",
            "PolyCC §2 (all)",
        ),
        ParamSpec::new(
            "rules",
            Kind::Described("list of rule tables { when, above | below | is, pilot }"),
            "rule-based pilot selection, first match wins at each measurement window",
            "PolyCC §2 pilot-copilot filter",
        ),
        ParamSpec::new(
            "min_dwell_rtts",
            Kind::Integer,
            "windows a new pilot keeps the flow before the rules may change it",
            "polycc: half a BBR gain cycle",
        )
        .range(1.0, MAX_DWELL_RTTS),
    ];
}

/// The registry builder of `poly`.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    registry: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(build_poly(NAME, p, ctx, registry, None)?))
}

/// Builds a PolyCC agent with a user-defined fusion function, for a builder registered under
/// `name`. The parameters are `poly`'s except `fuse`, `weights` and `target`, which the function
/// replaces.
pub fn build_with_fusion(
    name: &str,
    p: &Params,
    ctx: &CcContext,
    registry: &Registry,
    fusion: Box<dyn Fusion>,
) -> Result<Poly, CcError> {
    build_poly(name, p, ctx, registry, Some(fusion))
}

fn build_poly(
    name: &str,
    p: &Params,
    ctx: &CcContext,
    registry: &Registry,
    custom: Option<Box<dyn Fusion>>,
) -> Result<Poly, CcError> {
    let bad = |message: String| CcError::BadParams {
        name: name.to_string(),
        message,
    };
    let params: PolyParams = params::parse(name, p)?;
    // The schema admitted only the values of ON and WRITE_BACK.
    let quantity = match params.on.as_str() {
        "rate" => Quantity::Rate,
        _ => Quantity::Cwnd,
    };
    let write_back = match params.write_back.as_str() {
        "pilot" => WriteBack::Pilot,
        _ => WriteBack::All,
    };
    let n = 1 + params.copilots.len();
    if n > MAX_MEMBERS {
        return Err(bad(format!(
            "the pool has {n} members (pilot + {} copilots); at most {MAX_MEMBERS}",
            params.copilots.len()
        )));
    }
    let (fusion, target): (Box<dyn Fusion>, Target) = match custom {
        Some(f) => {
            for (key, set) in [
                ("fuse", params.fuse.is_some()),
                ("weights", params.weights.is_some()),
                ("target", params.target.is_some()),
            ] {
                if set {
                    return Err(bad(format!(
                        "{key} is not taken: {name}'s fusion function is {}",
                        f.name()
                    )));
                }
            }
            (f, Target::Bdp)
        }
        // A registered fusion: `target` reaches it (it may read one), `weights` is `mean`'s.
        None => match params.fuse.as_deref().and_then(|f| registered(registry, f)) {
            Some(f) => {
                if params.weights.is_some() {
                    return Err(bad(format!(
                        "weights apply to fuse = \"mean\", not {:?}",
                        f.name()
                    )));
                }
                (f, parse_target(&params, quantity).map_err(bad)?)
            }
            None => builtin_fusion(&params, quantity, n, registry).map_err(bad)?,
        },
    };

    let mut specs = Vec::with_capacity(n);
    specs.push(("pilot".to_string(), params.pilot));
    specs.extend(
        params
            .copilots
            .into_iter()
            .enumerate()
            .map(|(i, s)| (format!("copilots[{i}]"), s)),
    );
    let srtt = crate::estimators::rtt::INITIAL_RTT;
    let mut members = Vec::with_capacity(n);
    for (role, spec) in specs {
        let cc = registry
            .build(&spec, ctx)
            .map_err(|e| bad(format!("{role}: {e}")))?;
        // The write-back calibrates every member on every ACK.
        if n > 1 && !cc.accepts_calibration() {
            return Err(bad(format!(
                "{role}: {} cannot share a pool (yet): it learns from its own sending, as the \
                 PCC family does, and every write-back of the fused value restarts its search, \
                 so it never backs off and the pool floods the path (pilot cubic with copilot \
                 pcc-vivace on 20 Mbit/s: 99 % loss); run it alone, or as a pilot with no \
                 copilots",
                spec.name()
            )));
        }
        members.push(Member::new(spec.name().to_string(), cc, srtt));
    }
    let names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
    let rules = params
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| Rule::parse(i, r, &names))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    // The schema admitted only the values of FUSE_EVERY.
    let every = match params.fuse_every.as_deref() {
        None => fusion.default_every(),
        Some("rtt") => Every::Rtt,
        Some(_) => Every::Event,
    };
    let cfg = AgentConfig {
        quantity,
        fusion,
        target,
        write_back,
        filter: Filter::new(rules, params.min_dwell_rtts),
        every,
    };
    Ok(Poly::new(ctx, members, cfg))
}

/// The built-in fusion named by `fuse`, with its `weights` or `target`.
fn builtin_fusion(
    params: &PolyParams,
    q: Quantity,
    n: usize,
    registry: &Registry,
) -> Result<(Box<dyn Fusion>, Target), String> {
    let fuse = params.fuse.as_deref().unwrap_or("max");
    let f: Box<dyn Fusion> = match fuse {
        "max" => Box::new(fusion::Extreme(fusion::Pick::Largest)),
        "min" => Box::new(fusion::Extreme(fusion::Pick::Smallest)),
        "closest" => Box::new(fusion::Closest),
        "mean" => {
            let w = params.weights.clone().unwrap_or_else(|| vec![1.0; n]);
            if w.len() != n {
                return Err(format!(
                    "weights has {} values; the pool has {n} members (pilot first)",
                    w.len()
                ));
            }
            Box::new(fusion::WeightedMean::new(w).ok_or_else(|| {
                "weights must be finite, non-negative and not all zero".to_string()
            })?)
        }
        other => {
            let mut known = BUILTIN_FUSIONS.join(", ");
            for r in &registered_names(registry) {
                known.push_str(", ");
                known.push_str(r);
            }
            let hint = if other.starts_with(PY_PREFIX) {
                "; a Python fusion is passed to the run that uses it \
                 (polycc.run(..., fusions={...})) or named by reference, \
                 fuse = \"py:<module>:<function>\" or \"py:<file.py>:<function>\""
            } else {
                ""
            };
            return Err(format!("fuse = {other:?} is not one of {known}{hint}"));
        }
    };
    if params.weights.is_some() && fuse != "mean" {
        return Err(format!("weights apply to fuse = \"mean\", not {fuse:?}"));
    }
    if params.target.is_some() && fuse != "closest" {
        return Err(format!(
            "target applies to fuse = \"closest\", not {fuse:?}"
        ));
    }
    Ok((f, parse_target(params, q)?))
}

/// `target`: the BDP estimate when absent.
fn parse_target(params: &PolyParams, q: Quantity) -> Result<Target, String> {
    Ok(match &params.target {
        None => Target::Bdp,
        Some(serde_json::Value::String(s)) if s == "bdp" => Target::Bdp,
        Some(serde_json::Value::String(s)) if s == "intent" => Target::Intent,
        Some(serde_json::Value::Number(x)) => {
            let v = x.as_f64().unwrap_or(f64::NAN);
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("target = {x} must be positive"));
            }
            match q {
                Quantity::Cwnd => Target::Given(v),
                // Mbit/s in the scenario, bit/s inside.
                Quantity::Rate => Target::Given(v * 1e6),
            }
        }
        Some(other) => {
            return Err(format!(
                "target = {other} is not \"bdp\", \"intent\" or a number (bytes for on = \"cwnd\", Mbit/s for on = \"rate\")"
            ))
        }
    })
}
