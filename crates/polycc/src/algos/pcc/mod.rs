//! The PCC family (Performance-oriented Congestion Control) as sans-IO rate controllers.
//!
//! - `monitor.rs`: monitor intervals, the measurement engine (per-packet attribution through
//!   [`crate::cc::CongestionControl::on_packet_acked`] and
//!   `on_packet_lost`, MI statistics, the ACK-burst reliability filter, extension and
//!   re-alignment).
//! - `utility.rs`: utility functions selected by name from a [`UtilityRegistry`] users can
//!   extend.
//! - `sender.rs`: the rate-based [`crate::cc::CongestionControl`] shared by all
//!   (pacing rate = the current MI's rate; a window of two RTTs of data that never limits it,
//!   or one BDP at that rate once the host is seen not to pace).
//! - `app_limited.rs`: the guard every controller runs under: an MI in which the sender was
//!   application-limited (it sent under half its rate, or the transport flagged its packets)
//!   never raises the rate, and caps it at twice the MI's delivered rate (RFC 7661 §4.3).
//! - `allegro.rs`, `vivace.rs`, `proteus.rs`: the control algorithms.
//!
//! Registry names: `pcc-allegro`, `pcc-vivace`, `proteus-p`, `proteus-s`, `proteus-h`. Each takes
//! `utility` (a name in [`UtilityRegistry::standard`]), the utilities' parameters `alpha`, `d`,
//! `threshold_mbps` (`proteus-h`'s switch-over rate; master requires it, here its absence makes
//! `proteus-h` behave as `proteus-p`), and `seed` (by default derived from the flow's own seed in
//! the [`CcContext`], so that flows differ); `pcc-allegro` takes `eps_min`, `eps_max`, `mi_rtts_min` and `mi_rtts_max` (T_m),
//! `first_mi_weight` and `start_rate_mbps`, the
//! others `probing_step`. To use a utility of your own, register it in a
//! [`UtilityRegistry`] and register a controller name whose builder calls [`build_allegro_with`]
//! or [`build_vivace_with`].

pub mod allegro;
pub mod app_limited;
pub mod monitor;
pub mod proteus;
pub mod rng;
pub mod sender;
pub mod utility;
pub mod vivace;

use crate::algos::pcc::rng::SplitMix64;
use crate::cc::{CcContext, CongestionControl};
use crate::params::{self, Bound, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use allegro::{AllegroConfig, AllegroControl};
use monitor::MonitorConfig;
use proteus::NoiseTolerance;
use sender::PccSender;
use serde::{Deserialize, Serialize};
pub use utility::{Utility, UtilityParams, UtilityRegistry};
use vivace::{VivaceConfig, VivaceControl};

/// One-line description of `pcc-allegro` shown in the registry listing.
pub const ALLEGRO_SUMMARY: &str =
    "PCC Allegro (NSDI'15): rate control by randomized controlled trials on a utility";
/// One-line description of `pcc-vivace` shown in the registry listing.
pub const VIVACE_SUMMARY: &str =
    "PCC Vivace (NSDI'18, PCC-Uspace master): gradient ascent on a latency-aware utility";
/// One-line description of `proteus-p` shown in the registry listing.
pub const PROTEUS_P_SUMMARY: &str =
    "PCC Proteus-P (SIGCOMM'20): Vivace with latency noise tolerance, primary";
/// One-line description of `proteus-s` shown in the registry listing.
pub const PROTEUS_S_SUMMARY: &str =
    "PCC Proteus-S (SIGCOMM'20): scavenger utility with RTT-deviation penalty";
/// One-line description of `proteus-h` shown in the registry listing.
pub const PROTEUS_H_SUMMARY: &str =
    "PCC Proteus-H (SIGCOMM'20): primary below threshold_mbps, scavenger above";

/// Registry names of the PCC family.
pub const NAMES: [&str; 5] = [
    "pcc-allegro",
    "pcc-vivace",
    "proteus-p",
    "proteus-s",
    "proteus-h",
];

/// Registers this module's controllers.
pub fn register(r: &mut Registry) {
    let allegro = Schema::of::<AllegroParams>();
    let vivace = Schema::of::<VivaceParams>();
    r.register_with_params("pcc-allegro", ALLEGRO_SUMMARY, allegro, build_allegro);
    r.register_with_params("pcc-vivace", VIVACE_SUMMARY, vivace, build_vivace);
    r.register_with_params("proteus-p", PROTEUS_P_SUMMARY, vivace, build_proteus_p);
    r.register_with_params("proteus-s", PROTEUS_S_SUMMARY, vivace, build_proteus_s);
    r.register_with_params("proteus-h", PROTEUS_H_SUMMARY, vivace, build_proteus_h);
}

fn default_alpha() -> f64 {
    utility::ALLEGRO_ALPHA
}
fn default_d() -> f64 {
    utility::PROTEUS_DEV_COEF
}
/// The seed of a controller whose scenario gives none: the transport's per-flow seed, mixed
/// with the creation time. Every flow must draw its own trial orders and MI lengths (Allegro
/// §3.1–3.2 randomise them so that competing senders do not act in lockstep); a constant default
/// gave every PCC flow the same sequence.
fn flow_seed(ctx: &CcContext) -> u64 {
    SplitMix64::new(ctx.seed ^ ctx.now.0.rotate_left(32)).next_u64()
}
fn default_eps_min() -> f64 {
    allegro::EPS_MIN
}
fn default_eps_max() -> f64 {
    allegro::EPS_MAX
}
fn default_mi_rtts_min() -> f64 {
    allegro::MI_RTTS_LO
}
fn default_mi_rtts_max() -> f64 {
    allegro::MI_RTTS_HI
}
fn default_first_mi_weight() -> f64 {
    allegro::FIRST_MI_WEIGHT
}
fn default_probing_step() -> f64 {
    vivace::PROBING_STEP
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct AllegroParams {
    utility: Option<String>,
    #[serde(default = "default_alpha")]
    alpha: f64,
    #[serde(default = "default_d")]
    d: f64,
    threshold_mbps: Option<f64>,
    #[serde(default = "default_eps_min")]
    eps_min: f64,
    #[serde(default = "default_eps_max")]
    eps_max: f64,
    #[serde(default = "default_mi_rtts_min")]
    mi_rtts_min: f64,
    #[serde(default = "default_mi_rtts_max")]
    mi_rtts_max: f64,
    #[serde(default = "default_first_mi_weight")]
    first_mi_weight: f64,
    start_rate_mbps: Option<f64>,
    seed: Option<u64>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct VivaceParams {
    utility: Option<String>,
    #[serde(default = "default_alpha")]
    alpha: f64,
    #[serde(default = "default_d")]
    d: f64,
    threshold_mbps: Option<f64>,
    #[serde(default = "default_probing_step")]
    probing_step: f64,
    seed: Option<u64>,
}

/// Largest `alpha` and `d`: far beyond any published value (100 and 0.0015), low enough that a
/// typo is caught.
const MAX_UTILITY_COEF: f64 = 1e6;

/// The utility's keys, shared by both parameter tables.
const ALPHA_PARAM: ParamSpec = ParamSpec::new(
    "alpha",
    Kind::Number,
    "steepness of the Allegro utilities' loss sigmoid (fair for up to alpha/2.2 + 1 senders)",
    "Allegro §2.2, Theorem 1",
)
.range(0.0, MAX_UTILITY_COEF);
const D_PARAM: ParamSpec = ParamSpec::new(
    "d",
    Kind::Number,
    "RTT-deviation coefficient of the Proteus scavenger and hybrid utilities, per µs",
    "Proteus SIGCOMM'20 (dossier §7.3)",
)
.range(0.0, MAX_UTILITY_COEF);
const THRESHOLD_PARAM: ParamSpec = ParamSpec::new(
    "threshold_mbps",
    Kind::Number,
    "rate above which the hybrid utility (proteus-h) acts as a scavenger, Mbit/s",
    "Proteus SIGCOMM'20; PCC-Uspace master requires it",
)
.range(1e-3, 1e7)
.when_absent("no threshold: proteus-h acts as proteus-p");
const SEED_PARAM: ParamSpec = ParamSpec::new(
    "seed",
    Kind::Integer,
    "seed of the randomised trial orders and MI lengths",
    "polycc: derived per flow, so that competing senders do not act in lockstep (Allegro §3.1)",
)
.when_absent("derived from the flow's seed");

impl ParamTable for AllegroParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "utility",
            Kind::Text,
            "utility function by name: allegro, allegro-latency, loss-resilient, vivace, ...",
            "Allegro §2.2",
        )
        .when_absent("\"allegro\""),
        ALPHA_PARAM,
        D_PARAM,
        THRESHOLD_PARAM,
        // A step above 0.5 would make a trial halve the rate or raise it by half.
        ParamSpec::new(
            "eps_min",
            Kind::Number,
            "first and smallest rate step of the randomized controlled trials",
            "Allegro §3.2",
        )
        .range(1e-4, 0.5),
        ParamSpec::new(
            "eps_max",
            Kind::Number,
            "largest rate step of the trials",
            "Allegro §3.2",
        )
        .bounds(Bound::Param("eps_min"), Bound::At(0.5)),
        // Below a quarter RTT an MI's packets have not been acknowledged before the next several
        // MIs start; above 10 RTTs the controller reacts over seconds (Fig. 16 spans 1 to 4.8).
        ParamSpec::new(
            "mi_rtts_min",
            Kind::Number,
            "shortest monitor interval (T_m), smoothed RTTs",
            "Allegro §3.1",
        )
        .range(0.25, 10.0),
        ParamSpec::new(
            "mi_rtts_max",
            Kind::Number,
            "longest monitor interval: an MI lasts U[min, max] smoothed RTTs",
            "Allegro §3.1",
        )
        .bounds(Bound::Param("mi_rtts_min"), Bound::At(10.0)),
        // Above 1 the first doubling would need more than the first MI's utility; at 0 any
        // second MI would win.
        ParamSpec::new(
            "first_mi_weight",
            Kind::Number,
            "weight of the first start-up MI's utility against the second's (1: the paper's rule)",
            "NSDI'15 code, `cc.h` `onMonitorEnds` (modong/pcc)",
        )
        .range(0.01, 1.0),
        // Up to 10 Tbit/s, the controller's own rate ceiling (`allegro::MAX_RATE_BPS`).
        ParamSpec::new(
            "start_rate_mbps",
            Kind::Number,
            "a fixed first rate, Mbit/s: no doubling start, trials around it from the first MI \
             (the authors' incast sender starts at 143 Mbit/s so)",
            "NSDI'15 code, `cc_incast.h` (modong/pcc)",
        )
        .range(1e-3, 1e7)
        .when_absent("the initial window per 100 ms, rescaled by the first RTT sample, doubling"),
        SEED_PARAM,
    ];
}

impl ParamTable for VivaceParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "utility",
            Kind::Text,
            "utility function by name: vivace, vivace-signed, proteus-scavenger, proteus-hybrid, ...",
            "Vivace NSDI'18; Proteus SIGCOMM'20",
        )
        .when_absent("the flavour's: vivace (pcc-vivace, proteus-p), proteus-scavenger (proteus-s), proteus-hybrid (proteus-h)"),
        ALPHA_PARAM,
        D_PARAM,
        THRESHOLD_PARAM,
        ParamSpec::new(
            "probing_step",
            Kind::Number,
            "ε of the probing pairs: rates (1 ± ε)·x",
            "PCC-Uspace master kProbingStepSize (dossier §7.2)",
        )
        .range(1e-3, 0.5),
        SEED_PARAM,
    ];
}

fn bad(name: &str, message: String) -> CcError {
    CcError::BadParams {
        name: name.to_string(),
        message,
    }
}

fn build_allegro(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    build_allegro_with("pcc-allegro", p, ctx, &UtilityRegistry::standard())
}

/// Builds an Allegro controller named `name` whose `utility` parameter is looked up in
/// `utilities` (default `allegro`).
pub fn build_allegro_with(
    name: &'static str,
    p: &Params,
    ctx: &CcContext,
    utilities: &UtilityRegistry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let q: AllegroParams = params::parse(name, p)?;
    let up = UtilityParams {
        alpha: q.alpha,
        d: q.d,
        threshold_mbps: q.threshold_mbps,
    };
    let u = utilities
        .build(q.utility.as_deref().unwrap_or("allegro"), &up)
        .map_err(|m| bad(name, m))?;
    let cfg = AllegroConfig {
        eps_min: q.eps_min,
        eps_max: q.eps_max,
        mi_rtts_min: q.mi_rtts_min,
        mi_rtts_max: q.mi_rtts_max,
        first_mi_weight: q.first_mi_weight,
        seed: q.seed.unwrap_or_else(|| flow_seed(ctx)),
    };
    let ctl = match q.start_rate_mbps {
        Some(mbps) => {
            AllegroControl::with_fixed_start(cfg, u, crate::units::Rate::from_bps_f64(mbps * 1e6))
        }
        None => AllegroControl::new(cfg, u, PccSender::<AllegroControl>::initial_rate(ctx)),
    };
    Ok(Box::new(PccSender::new(
        name,
        ctx,
        ctl,
        MonitorConfig {
            extend_unreliable: false,
        },
    )))
}

/// Which member of the Vivace/Proteus family to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VivaceFlavour {
    /// PCC Vivace (NSDI'18): gradient ascent on the latency-aware utility, no noise tolerance.
    Vivace,
    /// Proteus-P (SIGCOMM'20): Vivace with latency noise tolerance, as a primary flow.
    ProteusP,
    /// Proteus-S (SIGCOMM'20): the scavenger utility, which also penalises RTT deviation, so it
    /// yields to primary flows.
    ProteusS,
    /// Proteus-H (SIGCOMM'20): primary below its `threshold_mbps`, scavenger above.
    ProteusH,
}

/// Builds a Vivace-family controller named `name` whose `utility` parameter is looked up in
/// `utilities` (the flavour's own utility by default).
pub fn build_vivace_with(
    name: &'static str,
    flavour: VivaceFlavour,
    p: &Params,
    ctx: &CcContext,
    utilities: &UtilityRegistry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let q: VivaceParams = params::parse(name, p)?;
    // Proteus-H has no default threshold (PCC-Uspace master requires one). Every registered
    // name must also build without parameters (tests/invariants.rs), so without a threshold the
    // hybrid never reaches its scavenger half: it runs as Proteus-P.
    let threshold = match flavour {
        VivaceFlavour::ProteusH => Some(q.threshold_mbps.unwrap_or(f64::INFINITY)),
        _ => q.threshold_mbps,
    };
    let up = UtilityParams {
        alpha: q.alpha,
        d: q.d,
        threshold_mbps: threshold,
    };
    let default_utility = match flavour {
        VivaceFlavour::Vivace | VivaceFlavour::ProteusP => "vivace",
        VivaceFlavour::ProteusS => "proteus-scavenger",
        VivaceFlavour::ProteusH => "proteus-hybrid",
    };
    let u = utilities
        .build(q.utility.as_deref().unwrap_or(default_utility), &up)
        .map_err(|m| bad(name, m))?;
    let cfg = VivaceConfig {
        probing_step: q.probing_step,
        seed: q.seed.unwrap_or_else(|| flow_seed(ctx)),
        scavenger: flavour == VivaceFlavour::ProteusS,
    };
    let noise = (flavour != VivaceFlavour::Vivace).then(NoiseTolerance::new);
    let ctl = VivaceControl::new(cfg, u, noise, PccSender::<VivaceControl>::initial_rate(ctx));
    Ok(Box::new(PccSender::new(
        name,
        ctx,
        ctl,
        MonitorConfig {
            extend_unreliable: true,
        },
    )))
}

fn build_vivace(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    build_vivace_with(
        "pcc-vivace",
        VivaceFlavour::Vivace,
        p,
        ctx,
        &UtilityRegistry::standard(),
    )
}

fn build_proteus_p(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    build_vivace_with(
        "proteus-p",
        VivaceFlavour::ProteusP,
        p,
        ctx,
        &UtilityRegistry::standard(),
    )
}

fn build_proteus_s(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    build_vivace_with(
        "proteus-s",
        VivaceFlavour::ProteusS,
        p,
        ctx,
        &UtilityRegistry::standard(),
    )
}

fn build_proteus_h(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    build_vivace_with(
        "proteus-h",
        VivaceFlavour::ProteusH,
        p,
        ctx,
        &UtilityRegistry::standard(),
    )
}

/// A steady 20 ms path with 1000-byte packets, for the controllers' unit tests.
#[cfg(test)]
pub(crate) fn test_path() -> sender::PathView {
    use crate::estimators::rtt::RttSnapshot;
    use crate::units::{Duration, Time};
    let ms20 = Duration::from_millis(20);
    sender::PathView {
        now: Time::ZERO,
        mss: 1000,
        rtt: RttSnapshot {
            smoothed: ms20,
            min: ms20,
            latest: ms20,
            has_sample: true,
            ..RttSnapshot::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::PacedPath;
    use crate::cc::Calibration;
    use crate::registry::CcSpec;
    use crate::units::{Bytes, Duration, Rate, Time};

    const MSS: Bytes = 1000;
    const NAMES: [&str; 5] = [
        "pcc-allegro",
        "pcc-vivace",
        "proteus-p",
        "proteus-s",
        "proteus-h",
    ];

    fn build(spec: serde_json::Value) -> Result<Box<dyn CongestionControl>, CcError> {
        let spec: CcSpec = serde_json::from_value(spec).expect("spec");
        Registry::standard().build(&spec, &CcContext::new(MSS))
    }

    /// Mean goodput (Mbit/s) and mean queueing delay sampled every 10 ms over [from, to) s.
    fn run(
        cc: &mut dyn CongestionControl,
        path: &mut PacedPath,
        from: u64,
        to: u64,
    ) -> (f64, Duration) {
        path.run_until(cc, Time::ZERO + Duration::from_secs(from));
        let d0 = path.delivered();
        let mut q = 0u64;
        let steps = (to - from) * 100;
        for i in 1..=steps {
            path.run_until(
                cc,
                Time::ZERO + Duration::from_secs(from) + Duration::from_millis(10 * i),
            );
            q += path.queue_delay().0;
        }
        let mbps = (path.delivered() - d0) as f64 * 8.0 / (to - from) as f64 / 1e6;
        (mbps, Duration(q / steps))
    }

    #[test]
    fn every_name_builds_and_parameters_are_validated() {
        for name in NAMES {
            let cc = build(serde_json::json!({ "name": name })).expect(name);
            assert_eq!(cc.name(), name);
            assert!(cc.wants_packet_detail());
            assert!(cc.pacing_rate().is_some_and(|r| r.as_bps() > 0));
            assert!(cc.cwnd() >= 2 * MSS);
        }
        assert!(build(serde_json::json!({"name": "proteus-h", "threshold_mbps": 20})).is_ok());
        assert!(build(
            serde_json::json!({"name": "pcc-allegro", "utility": "loss-resilient",
            "eps_min": 0.02, "eps_max": 0.04, "seed": 9})
        )
        .is_ok());
        for bad in [
            serde_json::json!({"name": "pcc-allegro", "eps_min": 0.05, "eps_max": 0.01}),
            serde_json::json!({"name": "pcc-allegro", "mi_rtts_min": 2.0, "mi_rtts_max": 1.0}),
            serde_json::json!({"name": "pcc-allegro", "mi_rtts_min": 0.1}),
            serde_json::json!({"name": "pcc-allegro", "utility": "nope"}),
            serde_json::json!({"name": "pcc-allegro", "probing_step": 0.05}),
            serde_json::json!({"name": "pcc-vivace", "eps_min": 0.01}),
            serde_json::json!({"name": "proteus-s", "d": -1}),
            serde_json::json!({"name": "proteus-h", "threshold_mbps": 0}),
            serde_json::json!({"name": "pcc-vivace", "utility": "proteus-hybrid"}),
        ] {
            assert!(
                matches!(build(bad.clone()), Err(CcError::BadParams { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn closed_loop_vivace_fills_the_link_with_a_small_queue() {
        // 20 Mbit/s, 40 ms, 1-BDP buffer.
        let mut path = PacedPath::new(MSS, Rate::from_mbps(20), Duration::from_millis(40));
        let mut cc = build(serde_json::json!({"name": "pcc-vivace"})).unwrap();
        let (mbps, queue) = run(cc.as_mut(), &mut path, 10, 30);
        assert!(mbps > 17.0, "goodput {mbps}");
        // The deviation the last judged MI's utility saw is reported.
        let dev = cc.telemetry().get("rtt_dev_used_us").expect("telemetry");
        assert!(dev.is_finite() && dev >= 0.0, "{dev}");
        assert!(queue < Duration::from_millis(5), "queue {queue}");
        // The window never limits the rate: it covers two RTTs of data at the MI rate.
        let rate = cc.pacing_rate().unwrap();
        assert!(cc.cwnd() >= rate.bytes_in(Duration::from_millis(80)));
    }

    #[test]
    fn closed_loop_allegro_keeps_its_rate_under_random_loss() {
        // 1 % loss (every 100th packet), 20 Mbit/s, 40 ms: the safe utility still rises with
        // rate below 5 % loss, so Allegro fills the link.
        let mut path = PacedPath::new(MSS, Rate::from_mbps(20), Duration::from_millis(40));
        path.loss_every = 100;
        let mut cc = build(serde_json::json!({"name": "pcc-allegro"})).unwrap();
        let (mbps, _) = run(cc.as_mut(), &mut path, 10, 30);
        assert!(mbps > 18.0, "goodput {mbps}");
    }

    #[test]
    fn unpaced_host_without_packet_detail_keeps_the_rate_near_the_link() {
        // The per-ACK benchmark's loop: a host that sends whatever the window allows (no
        // pacing) and reports only aggregate ACKs and losses, 20 Mbit/s, 20 ms, 1-BDP buffer.
        // With a two-RTT window Vivace, Proteus-P and Proteus-H ran away to 50+ Mbit/s within
        // 10 s, losing most of what they sent (the full queue made the lower trial of each
        // pair look worse).
        let link = 20.0;
        for name in NAMES {
            for detail in [false, true] {
                let spec: CcSpec =
                    serde_json::from_value(serde_json::json!({ "name": name })).expect("spec");
                let mut cc = Registry::standard()
                    .build(&spec, &CcContext::new(1200))
                    .expect("builds");
                let mut path = PacedPath::new(1200, Rate::from_mbps(20), Duration::from_millis(20));
                path.paced = false;
                path.detail = detail;
                path.run_until(cc.as_mut(), Time::ZERO + Duration::from_secs(10));
                let (sent0, lost0) = path.packets();
                let mut rates = vec![];
                for i in 1..=200 {
                    path.run_until(
                        cc.as_mut(),
                        Time::ZERO + Duration::from_secs(10) + Duration::from_millis(100 * i),
                    );
                    rates.push(cc.pacing_rate().expect("rate").as_mbps_f64());
                }
                let (sent, lost) = path.packets();
                let loss = (lost - lost0) as f64 / (sent - sent0) as f64;
                let send_mbps = (sent - sent0) as f64 * 1200.0 * 8.0 / 20.0 / 1e6;
                let goodput = send_mbps * (1.0 - loss);
                let mean = rates.iter().sum::<f64>() / rates.len() as f64;
                let max = rates.iter().cloned().fold(0.0, f64::max);
                eprintln!(
                    "{name} detail={detail}: sent {send_mbps:.2} Mbit/s, loss {loss:.4}, \
                     rate mean {mean:.2} max {max:.2} Mbit/s"
                );
                // Proteus-S stays lower: each change of an unpaced window sends (or holds) a
                // burst, an RTT deviation its scavenger utility penalises (paced, it fills
                // this link).
                let floor = if name == "proteus-s" { 0.4 } else { 0.9 };
                assert!(goodput > floor * link, "{name} detail={detail}: {goodput}");
                assert!(loss < 0.01, "{name} detail={detail}: loss {loss}");
                // The window is the rate's BDP at the min RTT. Latency-aware utilities settle
                // near the link rate; Allegro's loss-based one only learns where the buffer
                // overflows, at (BDP + buffer) / min RTT = 2x the link here.
                let bound = if name == "pcc-allegro" { 2.2 } else { 1.3 };
                assert!(
                    mean < bound * link && max < (bound + 0.3) * link,
                    "{name} detail={detail}: rate mean {mean}, max {max}"
                );
                let rate = cc.pacing_rate().expect("rate");
                assert!(cc.cwnd() <= rate.bytes_in(Duration::from_millis(20)) + 2 * 1200);
            }
        }
    }

    #[test]
    fn application_limited_flows_do_not_raise_their_rate_and_ramp_when_data_comes() {
        // app_limited.rs: 2 Mbit/s of application data on a 20 Mbit/s, 40 ms path for 30 s,
        // then bulk data. Without the guard Allegro reached 5.66 Mbit/s over 1-30 s; the Vivace
        // family's trials tie on this smooth source and it stays put either way (the drift it
        // shows with bursty request/response data is in polycc-sim's tests/pcc.rs).
        for name in NAMES {
            let mut cc = build(serde_json::json!({ "name": name })).unwrap();
            let mut path = PacedPath::new(MSS, Rate::from_mbps(20), Duration::from_millis(40));
            path.limit_app(Some(Rate::from_mbps(2)));
            let (mut start_max, mut max) = (0.0f64, 0.0f64);
            for i in 1..=300 {
                path.run_until(cc.as_mut(), Time::ZERO + Duration::from_millis(100 * i));
                let r = cc.pacing_rate().unwrap().as_mbps_f64();
                if i <= 10 {
                    start_max = start_max.max(r);
                } else {
                    max = max.max(r);
                }
            }
            let app_mbps = path.delivered() as f64 * 8.0 / 30.0 / 1e6;
            path.limit_app(None);
            let (sent0, lost0) = path.packets();
            let (bulk_mbps, queue) = run(cc.as_mut(), &mut path, 40, 60);
            let (sent, lost) = path.packets();
            let loss = (lost - lost0) as f64 / (sent - sent0) as f64;
            eprintln!(
                "{name}: app-limited delivered {app_mbps:.2} Mbit/s, max rate {start_max:.2} \
                 (0-1 s) {max:.2} (1-30 s) Mbit/s; bulk 40-60 s {bulk_mbps:.2} Mbit/s, \
                 loss 30-60 s {loss:.4}, queue {queue}"
            );
            assert!(app_mbps > 1.9, "{name}: {app_mbps}");
            // An MI that sends at least half its rate is validated and may raise it, so the
            // rate settles near twice the 2 Mbit/s used (a little more: an MI's send rate is
            // over the time its packets took), plus Allegro's ε (4.66); the starting phase's
            // doublings run an RTT ahead of the first judged MI (< 16).
            assert!(max < 5.0, "{name}: max rate {max}");
            assert!(
                start_max < 16.0,
                "{name}: max rate in the first second {start_max}"
            );
            assert!(bulk_mbps > 17.0, "{name}: bulk {bulk_mbps}");
            // Allegro's loss-based utility settles where the buffer overflows (a few % loss,
            // as for any bulk Allegro flow on this path; §2.2 puts two flows' equilibrium at up
            // to 5 %, and 30-60 s holds the climb from 2 Mbit/s): 3.1-7.1 % over flow seeds
            // 1-10.
            let max_loss = if name == "pcc-allegro" { 0.08 } else { 0.001 };
            assert!(loss < max_loss, "{name}: loss {loss}");
        }
    }

    /// The first 40 pacing rates a controller chooses on a 20 Mbit/s, 40 ms path.
    fn rates(spec: serde_json::Value, flow_seed: u64) -> Vec<u64> {
        let spec: CcSpec = serde_json::from_value(spec).expect("spec");
        let ctx = CcContext {
            seed: flow_seed,
            ..CcContext::new(MSS)
        };
        let mut cc = Registry::standard().build(&spec, &ctx).expect("builds");
        let mut path = PacedPath::new(MSS, Rate::from_mbps(20), Duration::from_millis(40));
        let mut out = vec![];
        for i in 1..=40 {
            path.run_until(cc.as_mut(), Time::ZERO + Duration::from_millis(100 * i));
            out.push(cc.pacing_rate().unwrap().as_bps());
        }
        out
    }

    #[test]
    fn flows_draw_their_own_random_choices_unless_a_seed_is_given() {
        for name in ["pcc-allegro", "proteus-s"] {
            // Two flows of one run get different transport seeds: their MI lengths and trial
            // orders, hence their rate sequences, differ.
            let plain = serde_json::json!({ "name": name });
            assert_ne!(rates(plain.clone(), 1), rates(plain.clone(), 2), "{name}");
            // The same transport seed replays exactly, and an explicit `seed` overrides it.
            assert_eq!(rates(plain.clone(), 1), rates(plain, 1), "{name}");
            let fixed = serde_json::json!({ "name": name, "seed": 5 });
            assert_eq!(rates(fixed.clone(), 1), rates(fixed, 2), "{name}");
        }
    }

    #[test]
    fn calibration_and_adoption_restart_around_the_given_rate() {
        let mut path = PacedPath::new(MSS, Rate::from_mbps(20), Duration::from_millis(40));
        let mut cc = build(serde_json::json!({"name": "proteus-p"})).unwrap();
        path.run_until(cc.as_mut(), Time::ZERO + Duration::from_secs(2));
        let now = path.now;
        cc.calibrate(
            now,
            &Calibration {
                pacing_rate: Some(Rate::from_mbps(7)),
                ..Calibration::default()
            },
        );
        assert_eq!(cc.telemetry().state, "probing");
        let r = cc.pacing_rate().unwrap().as_mbps_f64();
        assert!(
            (r - 7.0 * 0.95).abs() < 1e-6 || (r - 7.0 * 1.05).abs() < 1e-6,
            "{r}"
        );
        let h = cc.handover_state();
        let mut next = build(serde_json::json!({"name": "pcc-allegro"})).unwrap();
        next.adopt(now, &h);
        assert_eq!(next.telemetry().state, "decision_making");
        let r2 = next.pacing_rate().unwrap().as_mbps_f64();
        assert!(
            (r2 / h.pacing_rate.unwrap().as_mbps_f64() - 1.0).abs() < 0.011,
            "{r2}"
        );
        assert!(next.cwnd() >= 2 * MSS);
    }
}
