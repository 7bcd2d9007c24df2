//! TCP Illinois as Linux `net/ipv4/tcp_illinois.c` (Liu, Başar & Srikant, "TCP-Illinois: a
//! loss- and delay-based congestion control algorithm for high-speed networks", Performance
//! Evaluation 65(6-7), 2008).
//!
//! Loss decides the direction (AIMD), queueing delay decides the step. Once per RTT the average
//! queueing delay `da = avg RTT − base RTT` is compared with the largest seen,
//! `dm = max RTT − base RTT`:
//! - the additive increase alpha (segments per RTT) is ALPHA_MAX = 10 while `da ≤ dm/100`, and
//!   falls along `k1 / (k2 + da)` to ALPHA_MIN = 0.3 at `da = dm`; after delay has been high,
//!   alpha returns to the maximum only after `theta` low-delay rounds;
//! - the decrease factor beta is BETA_MIN = 1/8 while `da ≤ dm/10`, BETA_MAX = 1/2 from
//!   `da ≥ 8·dm/10`, linear in between; a loss leaves `cwnd·(1 − beta)`.
//!
//! Below `win_thresh` packets Illinois is Reno (alpha 1, beta 1/2). Slow start is Reno's.
//!
//! Differences from Linux: values are floating point (Linux keeps alpha in 1/128 and beta in
//! 1/64, so its ALPHA_MIN is 38/128 ≈ 0.297); RTTs are not capped at Linux's 3.3 s overflow
//! guard (`RTT_MAX`); the per-ACK sample is the transport's smallest RTT sample of the ACK.
//! As in Linux, max RTT is never aged.

use crate::algos::reno;
use crate::algos::reno::{reno_family_methods, reno_window_in, ByteCarry, RenoFamily, RenoWindow};
use crate::algos::round::RoundTracker;
use crate::cc::{CcContext, CongestionControl, HandoverState, Telemetry};
use crate::estimators::rtt::RttSnapshot;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, SentPacket};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "illinois";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "TCP Illinois (Linux tcp_illinois.c): loss-based AIMD with delay-dependent alpha and beta";

/// tcp_illinois.c ALPHA_MIN: additive increase (segments per RTT) when the queue is full.
pub const ALPHA_MIN: f64 = 0.3;
/// tcp_illinois.c ALPHA_MAX: additive increase when there is no queueing delay.
pub const ALPHA_MAX: f64 = 10.0;
/// tcp_illinois.c ALPHA_BASE: Reno's increase, used below `win_thresh` and after a timeout.
pub const ALPHA_BASE: f64 = 1.0;
/// tcp_illinois.c BETA_MIN: fraction of the window given up on loss with an empty queue.
pub const BETA_MIN: f64 = 1.0 / 8.0;
/// tcp_illinois.c BETA_MAX: fraction given up when the queue is (nearly) full.
pub const BETA_MAX: f64 = 1.0 / 2.0;
/// tcp_illinois.c BETA_BASE (= BETA_MAX): Reno's halving.
pub const BETA_BASE: f64 = BETA_MAX;
/// tcp_illinois.c module parameter `win_thresh`: below this many packets, behave as Reno.
pub const WIN_THRESH: u64 = 15;
/// tcp_illinois.c module parameter `theta`: low-delay rounds before alpha returns to its maximum.
pub const THETA: u32 = 5;
/// tcp_illinois.c alpha(): d1 = dm / 100, the low-delay threshold for alpha.
const D1_DIVISOR: f64 = 100.0;
/// tcp_illinois.c beta(): d2 = dm / 10 and d3 = 8·dm / 10, the ends of beta's linear ramp.
const D2_FRACTION: f64 = 0.1;
const D3_FRACTION: f64 = 0.8;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct IllinoisParams {
    #[serde(default = "default_win_thresh")]
    win_thresh: u64,
    #[serde(default = "default_theta")]
    theta: u32,
}

fn default_win_thresh() -> u64 {
    WIN_THRESH
}
fn default_theta() -> u32 {
    THETA
}

impl ParamTable for IllinoisParams {
    // Upper bounds only catch typos: a billion packets, a million rounds.
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "win_thresh",
            Kind::Integer,
            "below this many packets of window, behave as Reno",
            "Linux tcp_illinois.c module parameter win_thresh",
        )
        .range(0.0, 1e9),
        ParamSpec::new(
            "theta",
            Kind::Integer,
            "low-delay rounds before alpha returns to its maximum",
            "Linux tcp_illinois.c module parameter theta",
        )
        .range(0.0, 1e6),
    ];
}

/// Builds Illinois from scenario parameters (`win_thresh`, `theta`), checking their ranges.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: IllinoisParams = params::parse(NAME, p)?;
    Ok(Box::new(Illinois::new(
        ctx,
        IllinoisConfig {
            win_thresh: params.win_thresh,
            theta: params.theta,
        },
    )))
}

/// Registers this module's controllers.
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<IllinoisParams>(), build);
}

/// Tunables of [`Illinois`], validated by [`build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IllinoisConfig {
    /// Packets.
    pub win_thresh: u64,
    /// Rounds.
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            win_thresh: WIN_THRESH,
            theta: THETA,
        }
    }
}

/// alpha(da, dm) of tcp_illinois.c, in segments per RTT, with its "wait `theta` good rounds"
/// memory in `rtt_above` / `rtt_low`. Delays in seconds.
fn alpha(
    da: f64,
    dm: f64,
    theta: u32,
    current: f64,
    rtt_above: &mut bool,
    rtt_low: &mut u32,
) -> f64 {
    let d1 = dm / D1_DIVISOR;
    if da <= d1 {
        if !*rtt_above {
            return ALPHA_MAX;
        }
        *rtt_low += 1;
        if *rtt_low < theta {
            return current;
        }
        *rtt_low = 0;
        *rtt_above = false;
        return ALPHA_MAX;
    }
    *rtt_above = true;
    // alpha = k1 / (k2 + da), the curve through (d1, ALPHA_MAX) and (dm, ALPHA_MIN).
    let (dm, da) = (dm - d1, da - d1);
    dm * ALPHA_MAX / (dm + da * (ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN)
}

/// beta(da, dm) of tcp_illinois.c. Delays in seconds.
fn beta(da: f64, dm: f64) -> f64 {
    let d2 = dm * D2_FRACTION;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = dm * D3_FRACTION;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
}

/// Illinois for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    reno: RenoWindow,
    carry: ByteCarry,
    alpha: f64,
    beta: f64,
    /// Smallest and largest RTT sample seen.
    base_rtt: Option<Duration>,
    max_rtt: Duration,
    /// Sum (ns) and count of the RTT samples of the round in progress.
    sum_rtt_ns: u128,
    cnt_rtt: u32,
    /// The average delay has been above d1 since alpha was last at its maximum.
    rtt_above: bool,
    /// Low-delay rounds counted towards `theta`.
    rtt_low: u32,
    /// Rounds end at `end_seq`.
    rounds: RoundTracker,
    /// da and dm (seconds) at the last update, for telemetry.
    last_delays: Option<(f64, f64)>,
    rtt: RttSnapshot,
}

impl Illinois {
    /// Illinois in slow start from the context's initial window, with alpha at its maximum and
    /// Reno's beta until the first per-RTT update.
    pub fn new(ctx: &CcContext, cfg: IllinoisConfig) -> Self {
        Illinois {
            cfg,
            reno: RenoWindow::new(ctx),
            carry: ByteCarry::default(),
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            base_rtt: None,
            max_rtt: Duration::ZERO,
            sum_rtt_ns: 0,
            cnt_rtt: 0,
            rtt_above: false,
            rtt_low: 0,
            rounds: RoundTracker::default(),
            last_delays: None,
            rtt: RttSnapshot::default(),
        }
    }

    /// Additive increase in segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Fraction of the window given up at the next loss.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// rtt_reset: a new round of samples.
    fn reset_samples(&mut self) {
        self.sum_rtt_ns = 0;
        self.cnt_rtt = 0;
    }

    /// update_params, once per round.
    fn update_params(&mut self) {
        if self.reno.cwnd / self.reno.mss < self.cfg.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if let (Some(base), true) = (self.base_rtt, self.cnt_rtt > 0) {
            let base_s = base.as_secs_f64();
            let avg_s = self.sum_rtt_ns as f64 / self.cnt_rtt as f64 / 1e9;
            let dm = (self.max_rtt.as_secs_f64() - base_s).max(0.0);
            let da = (avg_s - base_s).max(0.0);
            self.alpha = alpha(
                da,
                dm,
                self.cfg.theta,
                self.alpha,
                &mut self.rtt_above,
                &mut self.rtt_low,
            );
            self.beta = beta(da, dm);
            self.last_delays = Some((da, dm));
        }
        self.reset_samples();
    }
}

impl RenoFamily for Illinois {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.carry.reset();
    }

    /// tcp_illinois_ssthresh: cwnd − cwnd·beta.
    fn on_congestion_event(&mut self, _now: Time) {
        self.reno.reduce(1.0 - self.beta);
    }

    /// tcp_illinois_state(TCP_CA_Loss): back to Reno's parameters and a fresh round.
    fn on_persistent_congestion(&mut self, _now: Time) {
        self.alpha = ALPHA_BASE;
        self.beta = BETA_BASE;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.reset_samples();
        self.rounds.start();
    }

    fn handover_rtt(&self) -> RttSnapshot {
        self.rtt
    }

    fn on_adopt(&mut self, _now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
            // The predecessor's minimum is the base RTT; its max RTT is unknown, so dm starts
            // from what this controller sees.
            let min = from.rtt.min.max(Duration(1));
            self.base_rtt = Some(self.base_rtt.map_or(min, |b| b.min(min)));
        }
        self.reset_samples();
        self.rounds.start();
    }
}

impl CongestionControl for Illinois {
    reno_family_methods!();

    fn name(&self) -> &str {
        NAME
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        t.push("alpha", self.alpha);
        t.push("beta", self.beta);
        t.push("base_rtt_ms", reno::millis_or_nan(self.base_rtt));
        let max_rtt = Some(self.max_rtt).filter(|d| !d.is_zero());
        t.push("max_rtt_ms", reno::millis_or_nan(max_rtt));
        let (da, dm) = self.last_delays.unwrap_or((f64::NAN, f64::NAN));
        t.push("avg_queue_delay_ms", da * 1e3);
        t.push("max_queue_delay_ms", dm * 1e3);
        t.push("rtt_low", self.rtt_low as f64);
        t
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.rounds.on_sent(sent.pn);
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if ack.rtt.has_sample {
            self.rtt = ack.rtt;
        }
        // tcp_illinois_acked: every sample counts, in recovery too.
        if let Some(s) = ack.min_rtt_sample {
            let s = s.max(Duration(1));
            self.base_rtt = Some(self.base_rtt.map_or(s, |b| b.min(s)));
            self.max_rtt = self.max_rtt.max(s);
            self.sum_rtt_ns += s.as_nanos() as u128;
            self.cnt_rtt = self.cnt_rtt.saturating_add(1);
        }
        if self.reno.recovery.follow(ack) {
            return; // Linux runs cong_avoid (and so the per-RTT update) only outside recovery
        }
        if self.rounds.on_ack(ack.largest_acked) {
            self.update_params();
        }
        if ack.app_limited {
            return; // RFC 2861 / tcp_is_cwnd_limited: grow only when the window is used
        }
        self.carry
            .cong_avoid(&mut self.reno, self.alpha, ack.acked_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{assert_params, persistent_congestion, start_in_ca, Flow};
    use crate::units::Bytes;

    const MSS: Bytes = 1000;

    fn illinois() -> Illinois {
        Illinois::new(&CcContext::new(MSS), IllinoisConfig::default())
    }

    /// An Illinois in congestion avoidance at `pkts` packets on `flow`.
    fn in_ca(flow: &mut Flow, pkts: u64) -> Illinois {
        let mut cc = illinois();
        start_in_ca(&mut cc, flow.now, pkts * MSS);
        flow.run_rtts(&mut cc, 1);
        cc
    }

    #[test]
    fn alpha_and_beta_curves_match_linux() {
        let (mut above, mut low) = (false, 0);
        // dm = 100 ms: d1 = 1 ms, d2 = 10 ms, d3 = 80 ms.
        let dm = 0.1;
        assert_eq!(alpha(0.001, dm, 5, 1.0, &mut above, &mut low), ALPHA_MAX);
        assert!(!above);
        let a = alpha(dm, dm, 5, 1.0, &mut above, &mut low);
        assert!((a - ALPHA_MIN).abs() < 1e-12, "{a}");
        assert!(above);
        // Half-way: 0.099·10 / (0.099 + 0.049·9.7/0.3).
        let a = alpha(0.05, dm, 5, 1.0, &mut above, &mut low);
        let expected = 0.099 * 10.0 / (0.099 + 0.049 * 9.7 / 0.3);
        assert!((a - expected).abs() < 1e-12, "{a} vs {expected}");
        assert_eq!(beta(0.01, dm), BETA_MIN);
        assert_eq!(beta(0.08, dm), BETA_MAX);
        // Linear between (10 ms, 1/8) and (80 ms, 1/2).
        let b = beta(0.045, dm);
        assert!((b - (0.125 + 0.375 * 0.5)).abs() < 1e-12, "{b}");
    }

    #[test]
    fn alpha_returns_to_max_after_theta_low_delay_rounds() {
        let (mut above, mut low) = (false, 0);
        let dm = 0.1;
        let high = alpha(0.09, dm, THETA, ALPHA_MAX, &mut above, &mut low);
        for round in 1..THETA {
            let a = alpha(0.0, dm, THETA, high, &mut above, &mut low);
            assert_eq!(a, high, "round {round} keeps alpha");
        }
        assert_eq!(alpha(0.0, dm, THETA, high, &mut above, &mut low), ALPHA_MAX);
        assert!(!above);
        assert_eq!(low, 0);
    }

    #[test]
    fn empty_queue_grows_ten_per_rtt_and_loses_an_eighth() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 100);
        flow.run_rtts(&mut cc, 2);
        assert_eq!(cc.alpha(), ALPHA_MAX);
        assert_eq!(cc.beta(), BETA_MIN);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 5);
        let grown = (cc.cwnd() - before) as f64 / MSS as f64;
        // alpha/cwnd per ACK with cwnd growing inside each round: a little under 50.
        assert!((45.0..=50.0).contains(&grown), "grew {grown} in 5 RTTs");
        let w = cc.cwnd();
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.cwnd(), (w as f64 * 0.875) as Bytes);
    }

    #[test]
    fn full_queue_grows_slowly_and_halves() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 100);
        flow.run_rtts(&mut cc, 2);
        // The RTT rises to 150 ms and stays: da = dm = 50 ms.
        flow.rtt = Duration::from_millis(150);
        flow.run_rtts(&mut cc, 4);
        assert!(
            (cc.alpha() - ALPHA_MIN).abs() < 1e-9,
            "alpha {}",
            cc.alpha()
        );
        assert_eq!(cc.beta(), BETA_MAX);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 10);
        let grown = (cc.cwnd() - before) as f64 / MSS as f64;
        assert!((2.5..=3.0).contains(&grown), "grew {grown} in 10 RTTs");
        let w = cc.cwnd();
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.cwnd(), w / 2);
    }

    #[test]
    fn intermediate_delay_sets_both_by_formula() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 100);
        flow.run_rtts(&mut cc, 2);
        // One spell at 200 ms sets dm = 100 ms; then 150 ms: da = 50 ms.
        flow.rtt = Duration::from_millis(200);
        flow.run_rtts(&mut cc, 2);
        flow.rtt = Duration::from_millis(150);
        flow.run_rtts(&mut cc, 4);
        let a = 0.099 * 10.0 / (0.099 + 0.049 * 9.7 / 0.3);
        let b = (0.125 * 0.08 - 0.5 * 0.01 + 0.375 * 0.05) / 0.07;
        assert!((cc.alpha() - a).abs() < 1e-9, "alpha {} vs {a}", cc.alpha());
        assert!((cc.beta() - b).abs() < 1e-9, "beta {} vs {b}", cc.beta());
        let t = cc.telemetry();
        assert_eq!(t.get("max_queue_delay_ms"), Some(100.0));
    }

    #[test]
    fn small_windows_are_reno() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 10);
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.alpha(), ALPHA_BASE);
        assert_eq!(cc.beta(), BETA_BASE);
        let w = cc.cwnd();
        assert!(w <= 14 * MSS, "{w}");
        flow.lose_fresh(&mut cc);
        assert_eq!(cc.cwnd(), w / 2);
    }

    #[test]
    fn one_reduction_per_epoch_and_timeout_resets() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = in_ca(&mut flow, 100);
        flow.run_rtts(&mut cc, 2);
        let w = cc.cwnd();
        assert!(flow.lose_oldest(&mut cc));
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), (w as f64 * 0.875) as Bytes);
        assert_eq!(cc.telemetry().state, "recovery");
        cc.on_loss(flow.now, &persistent_congestion(100_000, flow.now, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
        assert_eq!(cc.alpha(), ALPHA_BASE);
        assert_eq!(cc.beta(), BETA_BASE);
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": NAME, "win_thresh": 30, "theta": 3}),
            &[
                json!({"name": NAME, "theta": -1}),
                json!({"name": NAME, "alpha": 1}),
            ],
        );
    }
}
