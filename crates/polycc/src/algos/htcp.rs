//! H-TCP as Linux `net/ipv4/tcp_htcp.c` (Leith & Shorten, "H-TCP: TCP for high-speed and
//! long-distance networks", PFLDnet 2004; draft-leith-tcp-htcp-06).
//!
//! The additive increase grows with the time Δ since the last congestion event: Reno's one
//! segment per RTT for the first Δ_L = 1 s, then `1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²`. With the
//! Linux defaults (both module parameters on):
//! - RTT scaling: that factor is multiplied by `RTT_min / 100 ms` (the ratio clamped to
//!   [0.1, 2], the result to at least 1), so flows with different RTTs gain window at similar
//!   rates per second;
//! - adaptive backoff: at a congestion event the window is multiplied by
//!   `beta = RTT_min / RTT_max` clamped to [0.5, 0.8], and the increase is scaled by
//!   `2(1 − beta)` so that the average window matches what beta = 0.5 would give;
//! - bandwidth switch: when the maximum throughput measured in the last congestion epoch differs
//!   from the previous epoch's by more than 20 %, beta falls back to 0.5 (a change in the
//!   network, or a new flow to make room for); adaptive beta is used again only after an epoch
//!   with stable throughput (Linux's `modeswitch`).
//!
//! Slow start is Reno's. Differences from Linux: floating-point arithmetic (Linux truncates the
//! increase factor to an integer, and keeps beta in 1/128, so its BETA_MAX is 102/128 ≈ 0.797);
//! alpha is recomputed on every ACK in congestion avoidance rather than at each whole-segment
//! increase; there is no undo of spurious reductions (the trait has no such signal).

use crate::algos::reno;
use crate::algos::reno::{reno_family_methods, reno_window_in, ByteCarry, RenoFamily, RenoWindow};
use crate::cc::{CcContext, CongestionControl, HandoverState, Telemetry};
use crate::estimators::rtt::RttSnapshot;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::AckEvent;
use crate::units::{Bytes, Duration, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "htcp";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "H-TCP (Linux tcp_htcp.c): increase grows with time since the last loss; adaptive backoff";

/// tcp_htcp.c ALPHA_BASE: Reno's one segment per RTT.
pub const ALPHA_BASE: f64 = 1.0;
/// tcp_htcp.c BETA_MIN: the backoff when adaptive backoff is off or not yet trusted.
pub const BETA_MIN: f64 = 0.5;
/// tcp_htcp.c BETA_MAX: the most of the window adaptive backoff keeps.
pub const BETA_MAX: f64 = 0.8;
/// tcp_htcp.c htcp_alpha_update: Δ_L, the low-speed period after a congestion event (HZ).
pub const DELTA_L: Duration = Duration::from_secs(1);
/// tcp_htcp.c htcp_alpha_update: RTT scaling compares RTT_min with 100 ms (`(HZ<<3)/(10·minRTT)`).
pub const RTT_SCALING_REF: Duration = Duration::from_millis(100);
/// tcp_htcp.c: the scale is clamped to [0.5, 10], i.e. RTT_min/100 ms to [0.1, 2].
const RTT_SCALING_RATIO_MIN: f64 = 0.1;
const RTT_SCALING_RATIO_MAX: f64 = 2.0;
/// tcp_htcp.c htcp_beta_update: adaptive backoff only when RTT_min exceeds 10 ms.
pub const ADAPTIVE_BETA_MIN_RTT: Duration = Duration::from_millis(10);
/// tcp_htcp.c measure_rtt: RTT_max follows a sample only if it is at most 20 ms above it
/// (a filter against outliers).
pub const MAX_RTT_STEP: Duration = Duration::from_millis(20);
/// tcp_htcp.c htcp_param_update: at each congestion event RTT_max fades towards RTT_min, keeping
/// 95 % of the difference (routing changes).
const MAX_RTT_FADE: f64 = 0.95;
/// tcp_htcp.c htcp_beta_update: the bandwidth switch keeps adaptive beta while
/// `4·old_maxB ≤ 5·maxB ≤ 6·old_maxB`, i.e. maxB within ±20 % of the previous epoch's.
const BW_SWITCH_LOW: f64 = 4.0 / 5.0;
const BW_SWITCH_HIGH: f64 = 6.0 / 5.0;
/// tcp_htcp.c measure_achieved_throughput: throughput samples are smoothed with gain 1/4.
const THROUGHPUT_GAIN: f64 = 1.0 / 4.0;
/// tcp_htcp.c: in the first 3 RTT_min after a backoff a throughput sample restarts the filter.
const BACKOFF_SETTLE_RTTS: u64 = 3;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct HtcpParams {
    #[serde(default = "default_true")]
    use_rtt_scaling: bool,
    #[serde(default = "default_true")]
    use_bandwidth_switch: bool,
}

fn default_true() -> bool {
    true
}

impl ParamTable for HtcpParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "use_rtt_scaling",
            Kind::Bool,
            "scale the increase by RTT_min / 100 ms, so flows of different RTTs gain alike per second",
            "Linux tcp_htcp.c module parameter use_rtt_scaling",
        ),
        ParamSpec::new(
            "use_bandwidth_switch",
            Kind::Bool,
            "fall back to beta = 0.5 when an epoch's peak throughput moves by more than 20 %",
            "Linux tcp_htcp.c module parameter use_bandwidth_switch",
        ),
    ];
}

/// Builds H-TCP from scenario parameters (`use_rtt_scaling`, `use_bandwidth_switch`).
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: HtcpParams = params::parse(NAME, p)?;
    Ok(Box::new(Htcp::new(
        ctx,
        HtcpConfig {
            use_rtt_scaling: params.use_rtt_scaling,
            use_bandwidth_switch: params.use_bandwidth_switch,
        },
    )))
}

/// Registers this module's controllers.
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<HtcpParams>(), build);
}

/// Linux's module parameters; both default to on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HtcpConfig {
    /// Linux `use_rtt_scaling`: scale the increase by RTT_min / 100 ms, so that flows with
    /// different RTTs gain window at similar rates per second.
    pub use_rtt_scaling: bool,
    /// Linux `use_bandwidth_switch`: fall back to beta = 0.5 when an epoch's maximum
    /// throughput differs from the previous epoch's by more than 20 %.
    pub use_bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
        }
    }
}

/// The H-TCP increase factor for `delta` since the last congestion event, before RTT scaling
/// and the `2(1 − beta)` adjustment.
pub fn increase_factor(delta: Duration) -> f64 {
    if delta <= DELTA_L {
        return ALPHA_BASE;
    }
    let d = (delta - DELTA_L).as_secs_f64();
    1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
}

/// H-TCP for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    reno: RenoWindow,
    carry: ByteCarry,
    /// Additive increase, segments per RTT.
    alpha: f64,
    /// Fraction of the window kept at a congestion event.
    beta: f64,
    /// Adaptive backoff is allowed (one stable epoch has passed since the last switch).
    modeswitch: bool,
    min_rtt: Option<Duration>,
    max_rtt: Duration,
    /// Start of the current congestion epoch (`last_cong`).
    last_cong: Time,
    /// Throughput measurement: bytes acked since `last_time`.
    acked_since: Bytes,
    last_time: Time,
    /// Smoothed throughput and its epoch maximum / minimum, bytes per second.
    bi: f64,
    max_b: f64,
    min_b: f64,
    old_max_b: f64,
    rtt: RttSnapshot,
}

impl Htcp {
    /// H-TCP in slow start from the context's initial window, with Reno's increase and backoff
    /// until RTT samples make adaptive backoff trustworthy.
    pub fn new(ctx: &CcContext, cfg: HtcpConfig) -> Self {
        Htcp {
            cfg,
            reno: RenoWindow::new(ctx),
            carry: ByteCarry::default(),
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            min_rtt: None,
            max_rtt: Duration::ZERO,
            last_cong: ctx.now,
            acked_since: 0,
            last_time: ctx.now,
            bi: 0.0,
            max_b: 0.0,
            min_b: 0.0,
            old_max_b: 0.0,
            rtt: RttSnapshot::default(),
        }
    }

    /// Additive increase in segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Fraction of the window kept at the next congestion event.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// measure_rtt. RTT_max is tracked only outside recovery.
    fn measure_rtt(&mut self, sample: Duration) {
        let min = self.min_rtt.map_or(sample, |m| m.min(sample));
        self.min_rtt = Some(min);
        if !self.reno.recovery.is_active() {
            self.max_rtt = self.max_rtt.max(min);
            if sample > self.max_rtt && sample <= self.max_rtt + MAX_RTT_STEP {
                self.max_rtt = sample;
            }
        }
    }

    /// measure_achieved_throughput: one sample per window's worth of ACKs, at least RTT_min
    /// apart; the epoch's maximum feeds the bandwidth switch.
    fn measure_throughput(&mut self, now: Time, acked: Bytes) {
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if self.reno.recovery.is_active() {
            self.acked_since = 0;
            self.last_time = now;
            return;
        }
        self.acked_since = self.acked_since.saturating_add(acked);
        let Some(min_rtt) = self.min_rtt else {
            return;
        };
        let slack = (self.alpha.floor() as Bytes)
            .max(1)
            .saturating_mul(self.reno.mss);
        let elapsed = now - self.last_time;
        if self.acked_since >= self.reno.cwnd.saturating_sub(slack) && elapsed >= min_rtt {
            let cur = self.acked_since as f64 / elapsed.as_secs_f64().max(1e-9);
            let rtts_since_backoff = (now - self.last_cong).as_nanos() / min_rtt.as_nanos().max(1);
            if rtts_since_backoff <= BACKOFF_SETTLE_RTTS {
                self.bi = cur;
                self.max_b = cur;
                self.min_b = cur;
            } else {
                self.bi += THROUGHPUT_GAIN * (cur - self.bi);
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.acked_since = 0;
            self.last_time = now;
        }
    }

    /// htcp_beta_update, at a congestion event.
    fn update_beta(&mut self) {
        if self.cfg.use_bandwidth_switch {
            let (max_b, old) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            if !(BW_SWITCH_LOW * old <= max_b && max_b <= BW_SWITCH_HIGH * old) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        match self.min_rtt {
            Some(min)
                if self.modeswitch && min > ADAPTIVE_BETA_MIN_RTT && !self.max_rtt.is_zero() =>
            {
                let ratio = min.as_nanos() as f64 / self.max_rtt.as_nanos() as f64;
                self.beta = ratio.clamp(BETA_MIN, BETA_MAX);
            }
            _ => {
                self.beta = BETA_MIN;
                self.modeswitch = true;
            }
        }
    }

    /// htcp_alpha_update.
    fn update_alpha(&mut self, now: Time) {
        let mut factor = increase_factor(now - self.last_cong);
        if self.cfg.use_rtt_scaling {
            if let Some(min) = self.min_rtt {
                let ratio = (min.as_nanos() as f64 / RTT_SCALING_REF.as_nanos() as f64)
                    .clamp(RTT_SCALING_RATIO_MIN, RTT_SCALING_RATIO_MAX);
                factor = (factor * ratio).max(1.0);
            }
        }
        self.alpha = 2.0 * factor * (1.0 - self.beta);
        if self.alpha <= 0.0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// htcp_recalc_ssthresh's htcp_param_update.
    fn update_params(&mut self, now: Time) {
        self.update_beta();
        self.update_alpha(now);
        if let Some(min) = self.min_rtt {
            if self.max_rtt > min {
                self.max_rtt = min + (self.max_rtt - min).mul_f64(MAX_RTT_FADE);
            }
        }
    }
}

impl RenoFamily for Htcp {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.carry.reset();
    }

    fn on_congestion_event(&mut self, now: Time) {
        self.update_params(now);
        self.reno.reduce(self.beta);
        self.last_cong = now; // htcp_reset on entering recovery
    }

    /// Linux TCP_CA_Loss: the epoch restarts with the collapse.
    fn on_persistent_congestion(&mut self, now: Time) {
        self.last_cong = now;
    }

    fn handover_rtt(&self) -> RttSnapshot {
        self.rtt
    }

    fn on_adopt(&mut self, now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
            let min = from.rtt.min.max(Duration(1));
            self.min_rtt = Some(self.min_rtt.map_or(min, |m| m.min(min)));
        }
        // A hand-over starts a new epoch: Δ counts from now, and the throughput history of
        // another controller's epoch is not comparable.
        self.last_cong = now;
        self.last_time = now;
        self.acked_since = 0;
    }
}

impl CongestionControl for Htcp {
    reno_family_methods!();

    fn name(&self) -> &str {
        NAME
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.rtt.has_sample {
            self.rtt = ack.rtt;
        }
        let in_recovery = self.reno.recovery.follow(ack);
        if let Some(s) = ack.min_rtt_sample {
            self.measure_rtt(s.max(Duration(1)));
        }
        self.measure_throughput(now, ack.acked_bytes);
        if in_recovery || ack.app_limited {
            return;
        }
        if !self.reno.in_slow_start() {
            self.update_alpha(now); // only where it is used
        }
        self.carry
            .cong_avoid(&mut self.reno, self.alpha, ack.acked_bytes);
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        t.push("alpha", self.alpha);
        t.push("beta", self.beta);
        t.push("min_rtt_ms", reno::millis_or_nan(self.min_rtt));
        let max_rtt = Some(self.max_rtt).filter(|d| !d.is_zero());
        t.push("max_rtt_ms", reno::millis_or_nan(max_rtt));
        t.push("max_b_mbps", self.max_b * 8.0 / 1e6);
        t.push("old_max_b_mbps", self.old_max_b * 8.0 / 1e6);
        t.push("modeswitch", if self.modeswitch { 1.0 } else { 0.0 });
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{
        assert_params, clamp_window, persistent_congestion, start_in_ca, Flow,
    };

    const MSS: Bytes = 1000;

    fn htcp(cfg: HtcpConfig) -> Htcp {
        Htcp::new(&CcContext::new(MSS), cfg)
    }

    fn in_ca(flow: &mut Flow, cfg: HtcpConfig, pkts: u64) -> Htcp {
        let mut cc = htcp(cfg);
        start_in_ca(&mut cc, flow.now, pkts * MSS);
        cc
    }

    #[test]
    fn increase_factor_follows_the_htcp_polynomial() {
        assert_eq!(increase_factor(Duration::from_millis(500)), 1.0);
        assert_eq!(increase_factor(DELTA_L), 1.0);
        // Δ − Δ_L = 2 s: 1 + 20 + 1.
        assert_eq!(increase_factor(Duration::from_secs(3)), 22.0);
        // Δ − Δ_L = 9 s: 1 + 90 + 20.25.
        assert_eq!(increase_factor(Duration::from_secs(10)), 111.25);
    }

    #[test]
    fn alpha_grows_with_time_since_the_last_loss() {
        // 100 ms RTT: RTT scaling is neutral; beta 0.5 gives alpha = factor.
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, HtcpConfig::default(), 100);
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.beta(), BETA_MIN);
        assert_eq!(cc.cwnd(), 50 * MSS);
        let t0 = flow.now;
        flow.run_until(&mut cc, t0 + Duration::from_millis(900));
        assert_eq!(cc.alpha(), 1.0);
        flow.run_until(&mut cc, t0 + Duration::from_secs(3));
        let expected = increase_factor(flow.now - t0);
        assert!(
            (cc.alpha() - expected).abs() < 0.3,
            "{} vs {expected}",
            cc.alpha()
        );
        // The window grew by about ∫ alpha dt / RTT: in the first second ~10 segments, then
        // 10·(d + 5d² + d³/12) for d = 2 s: 10·(2 + 20 + 0.67) ≈ 227.
        let grown = (cc.cwnd() - 50 * MSS) as f64 / MSS as f64;
        assert!((200.0..=245.0).contains(&grown), "grew {grown}");
    }

    #[test]
    fn rtt_scaling_scales_alpha_by_rtt_over_100ms() {
        for (rtt_ms, cfg, ratio) in [
            (50, HtcpConfig::default(), 0.5),
            (200, HtcpConfig::default(), 2.0),
            (400, HtcpConfig::default(), 2.0), // clamped
            (
                400,
                HtcpConfig {
                    use_rtt_scaling: false,
                    ..HtcpConfig::default()
                },
                1.0,
            ),
        ] {
            let mut flow = Flow::new(MSS, Duration::from_millis(rtt_ms));
            let mut cc = in_ca(&mut flow, cfg, 100);
            flow.run_rtts(&mut cc, 1);
            flow.lose_fresh(&mut cc);
            let t0 = flow.now;
            flow.run_until(&mut cc, t0 + Duration::from_secs(5));
            let raw = increase_factor(flow.now - t0);
            let expected = (raw * ratio).max(1.0);
            let tol = 0.1 * expected;
            assert!(
                (cc.alpha() - expected).abs() < tol,
                "{rtt_ms} ms: alpha {} vs {expected}",
                cc.alpha()
            );
        }
    }

    /// H-TCP on a 100 ms path whose bottleneck holds `pkts` packets in flight (a window clamp
    /// stands in for the link), so every epoch measures the same throughput.
    fn on_link(cfg: HtcpConfig, pkts: u64) -> (Flow, Htcp) {
        let flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = htcp(cfg);
        start_in_ca(&mut cc, flow.now, pkts * MSS);
        clamp_window(&mut cc, flow.now, Some(pkts * MSS));
        (flow, cc)
    }

    /// One congestion epoch: 20 RTTs at the base RTT, then a queue building in 5 ms steps
    /// (RTT_max follows samples at most 20 ms above it) to `queue_ms`, then a loss. Returns the
    /// beta used.
    fn epoch(flow: &mut Flow, cc: &mut Htcp, queue_ms: u64) -> f64 {
        flow.rtt = Duration::from_millis(100);
        flow.run_rtts(cc, 20);
        for q in (5..=queue_ms).step_by(5) {
            flow.rtt = Duration::from_millis(100 + q);
            flow.run_rtts(cc, 2);
        }
        let w = cc.cwnd();
        flow.lose_fresh(cc);
        assert_eq!(cc.cwnd(), (w as f64 * cc.beta()) as Bytes);
        cc.beta()
    }

    #[test]
    fn adaptive_backoff_after_two_stable_epochs() {
        // A 25 ms queue at each loss: beta = 100/125 = 0.8 once trusted.
        let (mut flow, mut cc) = on_link(HtcpConfig::default(), 100);
        let betas: Vec<f64> = (0..4).map(|_| epoch(&mut flow, &mut cc, 25)).collect();
        // First event: no previous throughput, so the switch trips (0.5, modeswitch off);
        // second: throughput stable, modeswitch turns on, still 0.5; then RTT_min/RTT_max.
        assert_eq!(betas[0], 0.5);
        assert_eq!(betas[1], 0.5);
        assert!((betas[2] - 0.8).abs() < 1e-9, "{betas:?}");
        assert!((betas[3] - 0.8).abs() < 1e-9, "{betas:?}");
        // A 60 ms queue: 100/160 = 0.625, inside [0.5, 0.8].
        let b = epoch(&mut flow, &mut cc, 60);
        assert!((b - 0.625).abs() < 1e-9, "{b}");
        // A 150 ms queue: 0.4 is clamped to 0.5.
        assert_eq!(epoch(&mut flow, &mut cc, 150), BETA_MIN);
    }

    #[test]
    fn bandwidth_switch_falls_back_to_half() {
        let (mut flow, mut cc) = on_link(HtcpConfig::default(), 100);
        for _ in 0..3 {
            epoch(&mut flow, &mut cc, 60);
        }
        assert!((cc.beta() - 0.625).abs() < 1e-9 && cc.modeswitch);
        // The bottleneck halves: the next epoch's maximum throughput is > 20 % lower.
        clamp_window(&mut cc, flow.now, Some(50 * MSS));
        assert_eq!(epoch(&mut flow, &mut cc, 60), BETA_MIN);
        assert!(!cc.modeswitch);
        // One stable epoch re-arms it, the next uses adaptive backoff again.
        assert_eq!(epoch(&mut flow, &mut cc, 60), BETA_MIN);
        assert!(cc.modeswitch);
        assert!((epoch(&mut flow, &mut cc, 60) - 0.625).abs() < 1e-9);

        // Without the switch the change in throughput does not matter.
        let cfg = HtcpConfig {
            use_bandwidth_switch: false,
            ..HtcpConfig::default()
        };
        let (mut flow, mut cc) = on_link(cfg, 100);
        assert_eq!(epoch(&mut flow, &mut cc, 60), BETA_MIN);
        clamp_window(&mut cc, flow.now, Some(50 * MSS));
        assert!((epoch(&mut flow, &mut cc, 60) - 0.625).abs() < 1e-9);
    }

    #[test]
    fn one_reduction_per_epoch_and_persistent_congestion() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, HtcpConfig::default(), 100);
        flow.fill(&mut cc);
        assert!(flow.lose_oldest(&mut cc));
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), 50 * MSS);
        assert_eq!(cc.telemetry().state, "recovery");
        cc.on_loss(flow.now, &persistent_congestion(100_000, flow.now, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
        assert!(cc.in_slow_start());
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": NAME, "use_rtt_scaling": false}),
            &[
                json!({"name": NAME, "use_rtt_scaling": 2}),
                json!({"name": NAME, "beta": 0.5}),
            ],
        );
    }
}
