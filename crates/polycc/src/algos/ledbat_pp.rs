//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus): LEDBAT driven by round-trip delay, with a 60 ms
//! target, a gain that shrinks on short paths, a multiplicative decrease capped at halving per
//! RTT, a slow start that grows by GAIN per ACK and ends at 3/4 of the target, and periodic
//! slowdowns that let every LEDBAT++ flow re-measure the base delay (the latecomer fix).
//!
//! Values follow the draft as summarised by the dossier (§6.2; confirmed against an ns-3 model and
//! freenet's implementation, both citing the draft): TARGET 60 ms,
//! GAIN = 1/min(16, ⌈2·TARGET/base⌉), per RTT `W += GAIN` at or below the target and
//! `W += max(GAIN − Constant·W·(delay/TARGET − 1), −W/2)` above it with Constant = 1, slow-start
//! exit at 3/4·TARGET, slowdown: ssthresh = cwnd, cwnd = 2 packets for 2 RTTs, slow start back to
//! ssthresh, next slowdown 9× that slowdown's duration later. Base history (10 one-minute minima)
//! and the current-delay filter (minimum of the last 4) are LEDBAT's (`ledbat/delay.rs`), and so
//! are the window's bounds: the flight cap, halving at most once per RTT, the clamp and minimum
//! (`ledbat/window.rs`). The per-RTT rules are applied per ACK in proportion to the bytes acked,
//! so a full window of ACKs adds them up to exactly one RTT's change.

use crate::algos::ledbat::delay::DelayEstimator;
use crate::algos::ledbat::window::Window;
use crate::algos::ledbat::TARGET_MS_RANGE;
use crate::cc::{Calibration, CcContext, CongestionControl, Telemetry, MIN_WINDOW_PACKETS};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "ledbat++";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str = "LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus): RTT-based scavenger, \
     60 ms target, dynamic gain, capped multiplicative decrease, periodic slowdowns";

/// LEDBAT++ §4.1: TARGET = 60 ms.
pub const TARGET: Duration = Duration::from_millis(60);
/// LEDBAT++ §4.2: the GAIN divisor is capped at 16.
pub const MAX_GAIN_DIVISOR: f64 = 16.0;
/// LEDBAT++ §4.3: multiplicative-decrease Constant.
pub const DECREASE_CONSTANT: f64 = 1.0;
/// LEDBAT++ §4.3: the decrease is capped at W/2 per RTT.
pub const MAX_DECREASE_FRACTION: f64 = 0.5;
/// LEDBAT++ §4.4: slow start ends when the queueing delay exceeds 3/4 of the target.
pub const SLOW_START_EXIT_FRACTION: f64 = 0.75;
/// LEDBAT++ §4.5: the initial slowdown starts 2 RTTs after the initial slow start ends.
pub const INITIAL_SLOWDOWN_DELAY_RTTS: u64 = 2;
/// LEDBAT++ §4.5: during a slowdown the window is 2 packets...
pub const SLOWDOWN_CWND_PACKETS: u64 = 2;
/// ...for 2 RTTs.
pub const SLOWDOWN_FREEZE_RTTS: u64 = 2;
/// LEDBAT++ §4.5: the next slowdown is 9 slowdown durations later (≤ 10 % utilisation cost).
pub const SLOWDOWN_INTERVAL_MULTIPLIER: u64 = 9;

/// Registers `ledbat++`.
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<LedbatPpParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct LedbatPpParams {
    #[serde(default = "default_target_ms")]
    target_ms: f64,
    #[serde(default = "default_slowdown")]
    slowdown: bool,
}

fn default_target_ms() -> f64 {
    TARGET.as_millis_f64()
}
fn default_slowdown() -> bool {
    true
}

impl ParamTable for LedbatPpParams {
    const PARAMS: &'static [ParamSpec] = &[
        // RFC 6817's bound on TARGET (≤ 100 ms) carries over.
        ParamSpec::new(
            "target_ms",
            Kind::Number,
            "TARGET: the queueing delay the window converges to, ms",
            "draft-irtf-iccrg-ledbat-plus-plus §4.1",
        )
        .range(TARGET_MS_RANGE.0, TARGET_MS_RANGE.1),
        ParamSpec::new(
            "slowdown",
            Kind::Bool,
            "periodic slowdowns to 2 packets, so every flow re-measures the base delay",
            "draft-irtf-iccrg-ledbat-plus-plus §4.5",
        ),
    ];
}

/// Builds LEDBAT++ from scenario parameters (`target_ms`, `slowdown`), checking them against
/// the declared schema (the target within RFC 6817's 100 ms bound).
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: LedbatPpParams = params::parse(NAME, p)?;
    Ok(Box::new(LedbatPp::new(
        ctx,
        LedbatPpConfig {
            target: Duration::from_secs_f64(params.target_ms / 1e3),
            slowdown: params.slowdown,
        },
    )))
}

/// Configuration of [`LedbatPp`], validated by [`build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatPpConfig {
    /// TARGET, the queueing delay the window converges to (§4.1: 60 ms), as [`TARGET`]; at most
    /// RFC 6817's 100 ms.
    pub target: Duration,
    /// Periodic slowdowns on (the draft's behaviour) or off.
    pub slowdown: bool,
}

impl Default for LedbatPpConfig {
    fn default() -> Self {
        LedbatPpConfig {
            target: TARGET,
            slowdown: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The initial slow start.
    SlowStart,
    CongestionAvoidance,
    /// A slowdown: the window is held at 2 packets until `until`.
    Freeze {
        until: Time,
    },
    /// Slow start back to ssthresh after a freeze.
    Regrow,
}

/// LEDBAT++ on one flow: LEDBAT's delay estimator and window, with its own phases (slow start,
/// congestion avoidance, slowdowns) and ssthresh.
#[derive(Clone, Debug)]
pub struct LedbatPp {
    cfg: LedbatPpConfig,
    /// LEDBAT's window, its bounds and its loss response.
    window: Window,
    ssthresh: Bytes,
    phase: Phase,
    delays: DelayEstimator,
    /// Smoothed RTT of the last ACK: the "RTT" of the slowdown timings.
    srtt: Option<Duration>,
    /// When the next slowdown begins (none before the initial slow start has ended).
    next_slowdown: Option<Time>,
    slowdown_start: Time,
}

impl LedbatPp {
    /// Starts in the initial slow start at the transport's initial window (at least RFC 9002's
    /// minimum), with no delay measured and no slowdown scheduled.
    pub fn new(ctx: &CcContext, cfg: LedbatPpConfig) -> Self {
        let mss = ctx.mss.max(1);
        LedbatPp {
            cfg,
            window: Window::new(mss, ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * mss) as f64),
            ssthresh: Bytes::MAX,
            phase: Phase::SlowStart,
            delays: DelayEstimator::default(),
            srtt: None,
            next_slowdown: None,
            slowdown_start: ctx.now,
        }
    }

    fn rtt(&self) -> Duration {
        self.srtt.unwrap_or(crate::estimators::rtt::INITIAL_RTT)
    }

    /// LEDBAT++ §4.2: GAIN = 1/min(16, ⌈2·TARGET/base_delay⌉).
    pub(crate) fn gain(&self) -> f64 {
        let Some(base) = self.delays.base.get() else {
            return 1.0 / MAX_GAIN_DIVISOR;
        };
        if base <= 0 {
            return 1.0 / MAX_GAIN_DIVISOR;
        }
        let ratio = (2.0 * self.cfg.target.as_nanos() as f64 / base as f64).ceil();
        1.0 / ratio.clamp(1.0, MAX_GAIN_DIVISOR)
    }

    /// The queueing delay the window reacts to, if any delay has been measured.
    #[cfg(test)]
    pub(crate) fn queuing_delay(&self) -> Option<Duration> {
        self.delays.queuing_delay()
    }

    /// Leaves a slow start: the first time, the initial slowdown is scheduled 2 RTTs later.
    fn enter_congestion_avoidance(&mut self, now: Time) {
        self.phase = Phase::CongestionAvoidance;
        if self.next_slowdown.is_none() {
            self.next_slowdown = Some(now + self.rtt() * INITIAL_SLOWDOWN_DELAY_RTTS);
        }
    }

    /// The end of a slowdown's regrowth: the next one is 9 slowdown durations away.
    fn finish_slowdown(&mut self, now: Time) {
        let duration = now.saturating_since(self.slowdown_start);
        self.next_slowdown = Some(now + duration * SLOWDOWN_INTERVAL_MULTIPLIER);
        self.phase = Phase::CongestionAvoidance;
    }

    fn start_slowdown(&mut self, now: Time) {
        let w = &mut self.window;
        self.ssthresh = (w.cwnd as Bytes).max(w.min() as Bytes);
        w.cwnd = (SLOWDOWN_CWND_PACKETS * w.mss) as f64;
        self.slowdown_start = now;
        self.phase = Phase::Freeze {
            until: now + self.rtt() * SLOWDOWN_FREEZE_RTTS,
        };
    }

    /// One ACK of LEDBAT++'s slow start (§4.4; the initial one and a slowdown's regrowth): the
    /// window grows by GAIN per byte acked until it reaches ssthresh or the queue exceeds 3/4 of
    /// the target (`ss_exit`). True when this ACK ends it (the window is then left as it is).
    fn slow_start_ends(&mut self, ss_exit: bool, gain: f64, acked: Bytes) -> bool {
        if ss_exit || self.window.cwnd >= self.ssthresh as f64 {
            return true;
        }
        self.window.cwnd += gain * acked as f64;
        false
    }

    /// One ACK's share of the per-RTT congestion-avoidance change (LEDBAT++ §4.3).
    fn congestion_avoidance(&mut self, acked: Bytes, qd: Duration, gain: f64) {
        let w = self.window.cwnd / self.window.mss as f64;
        let ratio = qd.as_secs_f64() / self.cfg.target.as_secs_f64();
        let per_rtt = if ratio <= 1.0 {
            gain
        } else {
            (gain - DECREASE_CONSTANT * w * (ratio - 1.0)).max(-MAX_DECREASE_FRACTION * w)
        };
        // acked/cwnd of a window: per_rtt packets over a full window of ACKs.
        self.window.cwnd += per_rtt * acked as f64 / w;
    }
}

impl CongestionControl for LedbatPp {
    fn name(&self) -> &str {
        NAME
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.window.on_sent(sent);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.window.on_ack(ack);
        if let Some(s) = ack.min_rtt_sample {
            self.delays.update_rtt(now, s);
        }
        if ack.rtt.has_sample {
            self.srtt = Some(ack.rtt.smoothed);
        } else if let Some(s) = ack.min_rtt_sample {
            self.srtt = Some(s);
        }
        let Some(qd) = self.delays.queuing_delay() else {
            return;
        };
        let gain = self.gain();
        let ss_exit = qd.as_secs_f64() > SLOW_START_EXIT_FRACTION * self.cfg.target.as_secs_f64();
        match self.phase {
            Phase::SlowStart => {
                if self.slow_start_ends(ss_exit, gain, ack.acked_bytes) {
                    self.enter_congestion_avoidance(now);
                }
            }
            Phase::CongestionAvoidance => {
                if self.cfg.slowdown && self.next_slowdown.is_some_and(|t| now >= t) {
                    self.start_slowdown(now);
                } else {
                    self.congestion_avoidance(ack.acked_bytes, qd, gain);
                }
            }
            Phase::Freeze { until } => {
                if now >= until {
                    self.phase = Phase::Regrow;
                    self.window.cwnd += gain * ack.acked_bytes as f64;
                }
            }
            Phase::Regrow => {
                if self.slow_start_ends(ss_exit, gain, ack.acked_bytes) {
                    self.finish_slowdown(now);
                }
            }
        }
        if !matches!(self.phase, Phase::Freeze { .. }) {
            // RFC 6817 §2.4.2, kept by LEDBAT++: never more than one packet above the flight.
            self.window.cap_at_flight();
        }
        self.window.bound();
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        // RFC 6817 §2.4.2 loss response, at most once per RTT.
        if self.window.halve_once_per_rtt(now, loss) {
            match self.phase {
                Phase::SlowStart => {
                    self.ssthresh = self.window.bytes();
                    self.enter_congestion_avoidance(now);
                }
                Phase::Regrow => {
                    self.ssthresh = self.window.bytes();
                    self.finish_slowdown(now);
                }
                Phase::CongestionAvoidance | Phase::Freeze { .. } => {}
            }
        }
        if loss.persistent_congestion {
            self.window.cwnd = self.window.min();
            if self.phase == Phase::SlowStart {
                self.enter_congestion_avoidance(now);
            }
        }
        self.window.bound();
    }

    fn cwnd(&self) -> Bytes {
        self.window.bytes()
    }

    fn ssthresh(&self) -> Option<Bytes> {
        Some(self.ssthresh)
    }

    fn in_slow_start(&self) -> bool {
        matches!(self.phase, Phase::SlowStart | Phase::Regrow)
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(match self.phase {
            Phase::SlowStart => "slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
            Phase::Freeze { .. } => "slowdown",
            Phase::Regrow => "slowdown_regrow",
        });
        self.delays.push_telemetry(&mut t);
        t.push("gain", self.gain());
        t.push(
            "ssthresh_bytes",
            if self.ssthresh == Bytes::MAX {
                f64::NAN
            } else {
                self.ssthresh as f64
            },
        );
        t.push(
            "next_slowdown_s",
            self.next_slowdown.map_or(f64::NAN, |t| t.as_secs_f64()),
        );
        t
    }

    fn calibrate(&mut self, now: Time, c: &Calibration) {
        self.window.calibrate(c);
        if let Some(s) = c.ssthresh {
            self.ssthresh = s.max(self.window.min() as Bytes);
        }
        if self.phase == Phase::SlowStart && self.window.cwnd >= self.ssthresh as f64 {
            self.enter_congestion_avoidance(now);
        }
        self.window.bound();
    }

    fn adopt(&mut self, now: Time, from: &crate::cc::HandoverState) {
        if from.rtt.has_sample {
            // The predecessor's min RTT is the base delay; its srtt times the slowdowns.
            self.delays.seed_base_rtt(now, from.rtt.min);
            self.srtt = Some(from.rtt.smoothed);
        }
        self.calibrate(
            now,
            &Calibration {
                cwnd: Some(from.cwnd),
                ssthresh: from.ssthresh,
                ..Calibration::default()
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{ack, Flow};
    use crate::estimators::rtt::RttSnapshot;

    const MSS: Bytes = 1000;

    fn ledbat_pp() -> LedbatPp {
        LedbatPp::new(&CcContext::new(MSS), LedbatPpConfig::default())
    }

    fn ack_at(cc: &mut LedbatPp, now: Time, pn: u64, rtt_ms: u64) {
        let rtt = Duration::from_millis(rtt_ms);
        let snap = RttSnapshot {
            latest: rtt,
            smoothed: rtt,
            var: Duration::ZERO,
            min: rtt,
            has_sample: true,
        };
        let mut ev = ack(pn, now, MSS, MSS, rtt, snap);
        ev.prior_in_flight = 1 << 30;
        cc.on_ack(now, &ev);
    }

    #[test]
    fn gain_follows_the_base_delay() {
        let mut cc = ledbat_pp();
        // 40 ms base: ⌈120/40⌉ = 3.
        ack_at(&mut cc, Time::ZERO, 0, 40);
        assert!((cc.gain() - 1.0 / 3.0).abs() < 1e-12);
        // 25 ms: ⌈4.8⌉ = 5. 5 ms: ⌈24⌉ capped at 16. 200 ms: ⌈0.6⌉ = 1.
        for (base, want) in [(25, 5.0), (5, 16.0)] {
            let mut cc = ledbat_pp();
            ack_at(&mut cc, Time::ZERO, 0, base);
            assert!((cc.gain() - 1.0 / want).abs() < 1e-12, "base {base}");
        }
        let mut cc = ledbat_pp();
        ack_at(&mut cc, Time::ZERO, 0, 200);
        assert_eq!(cc.gain(), 1.0);
    }

    #[test]
    fn slow_start_grows_by_gain_per_ack_and_ends_above_three_quarters_of_target() {
        let mut cc = ledbat_pp();
        let w0 = cc.window.cwnd;
        for pn in 0..6 {
            ack_at(&mut cc, Time::ZERO, pn, 40); // gain 1/3, no queue
        }
        assert!((cc.window.cwnd - (w0 + 6.0 * MSS as f64 / 3.0)).abs() < 1e-6);
        assert!(cc.in_slow_start());
        // 44 ms of queueing is below 45 ms (3/4 of 60): still slow start; 46 ms ends it (the
        // filter is the minimum of the last four, so four samples).
        for pn in 6..10 {
            ack_at(&mut cc, Time::ZERO, pn, 84);
        }
        assert!(cc.in_slow_start());
        for pn in 10..14 {
            ack_at(&mut cc, Time::ZERO, pn, 86);
        }
        assert!(!cc.in_slow_start());
        assert_eq!(cc.telemetry().state, "congestion_avoidance");
        // The initial slowdown is due 2 RTTs (srtt 86 ms) later.
        assert_eq!(
            cc.next_slowdown,
            Some(Time::ZERO + Duration::from_millis(172))
        );
    }

    fn in_ca(pkts: u64) -> LedbatPp {
        let mut cc = LedbatPp::new(
            &CcContext::new(MSS),
            LedbatPpConfig {
                slowdown: false,
                ..LedbatPpConfig::default()
            },
        );
        cc.calibrate(
            Time::ZERO,
            &Calibration {
                cwnd: Some(pkts * MSS),
                ssthresh: Some(pkts * MSS),
                ..Calibration::default()
            },
        );
        cc
    }

    #[test]
    fn below_target_a_window_of_acks_adds_gain() {
        let mut cc = in_ca(30);
        ack_at(&mut cc, Time::ZERO, 0, 40); // base 40 ms: gain 1/3
        let before = cc.window.cwnd / MSS as f64;
        for pn in 1..=30 {
            ack_at(&mut cc, Time::ZERO, pn, 70); // 30 ms queued, below 60
        }
        let grown = cc.window.cwnd / MSS as f64 - before;
        assert!((grown - 1.0 / 3.0).abs() < 0.01, "grew {grown} packets");
    }

    #[test]
    fn above_target_the_decrease_is_multiplicative_and_capped_at_half() {
        // 90 ms queued on a 40 ms base: ratio 1.5, gain 1/3: per RTT 1/3 − W·0.5, i.e. per ACK
        // (1/3 − W/2)/W packets.
        let mut cc = in_ca(40);
        ack_at(&mut cc, Time::ZERO, 0, 40);
        // The filter then holds [40, 130, 130, 130]: its minimum is still the base, so these
        // four ACKs each add gain/W.
        for pn in 1..=3 {
            ack_at(&mut cc, Time::ZERO, pn, 130);
        }
        let grown = cc.window.cwnd - (40 * MSS) as f64;
        assert!(
            (grown - 4.0 * MSS as f64 / 3.0 / 40.0).abs() < 0.1,
            "{grown}"
        );
        // The fourth 130 ms sample pushes 40 out.
        let before = cc.window.cwnd;
        let w = before / MSS as f64;
        ack_at(&mut cc, Time::ZERO, 4, 130);
        let expected = (1.0 / 3.0 - w * 0.5) / w * MSS as f64;
        assert!(((cc.window.cwnd - before) - expected).abs() < 1e-6);
        // 400 ms queued: ratio 7.67, the uncapped decrease −W·6.67 is capped at −W/2 per RTT:
        // a window of ACKs at most halves the window.
        let mut cc = in_ca(40);
        ack_at(&mut cc, Time::ZERO, 0, 40);
        for pn in 1..=3 {
            ack_at(&mut cc, Time::ZERO, pn, 440);
        }
        let start = cc.window.cwnd / MSS as f64;
        let mut pn = 4;
        let mut acked = 0.0;
        while acked < start {
            let w = cc.window.cwnd / MSS as f64;
            ack_at(&mut cc, Time::ZERO, pn, 440);
            let dw = cc.window.cwnd / MSS as f64 - w;
            assert!((dw - (-0.5)).abs() < 1e-9, "per-ACK change {dw}");
            pn += 1;
            acked += 1.0;
        }
    }

    #[test]
    fn slowdown_freezes_two_rtts_then_regrows_and_schedules_nine_times_later() {
        let rtt = Duration::from_millis(40);
        let mut flow = Flow::new(MSS, rtt);
        let mut cc = ledbat_pp();
        // Slow start on an empty path, then a queue of 50 ms (> 45 ms) ends it.
        flow.run_rtts(&mut cc, 10);
        assert!(cc.in_slow_start());
        flow.rtt = Duration::from_millis(90);
        let mut guard = 0;
        while cc.in_slow_start() {
            assert!(flow.ack_next(&mut cc));
            guard += 1;
            assert!(guard < 10_000);
        }
        let exit = flow.now;
        let due = cc.next_slowdown.expect("initial slowdown scheduled");
        let srtt = flow.rtt_snapshot().smoothed;
        assert_eq!(due, exit + srtt * 2);
        // Back to an empty queue, as the slowdown would make it.
        flow.rtt = rtt;
        while !matches!(cc.phase, Phase::Freeze { .. }) {
            assert!(flow.ack_next(&mut cc));
        }
        let frozen_at = flow.now;
        assert!(frozen_at >= due);
        assert_eq!(cc.cwnd(), 2 * MSS);
        let ssthresh = cc.ssthresh().expect("ssthresh");
        let Phase::Freeze { until } = cc.phase else {
            unreachable!()
        };
        // Two RTTs at 2 packets.
        while flow.now < until {
            assert!(flow.ack_next(&mut cc));
            if flow.now < until {
                assert_eq!(cc.cwnd(), 2 * MSS);
            }
        }
        // Then slow start back to ssthresh, and the next slowdown 9 durations after the end.
        while cc.phase != Phase::CongestionAvoidance {
            assert!(flow.ack_next(&mut cc));
        }
        assert!(cc.cwnd() >= ssthresh);
        let duration = flow.now - frozen_at;
        assert_eq!(cc.next_slowdown, Some(flow.now + duration * 9));
    }

    #[test]
    fn loss_in_slow_start_halves_and_leaves_it() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = ledbat_pp();
        flow.run_rtts(&mut cc, 5);
        let w = cc.cwnd();
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), w / 2);
        assert!(!cc.in_slow_start());
        assert!(flow.lose_oldest(&mut cc)); // same RTT
        assert_eq!(cc.cwnd(), w / 2);
    }

    #[test]
    fn closed_loop_settles_near_the_target() {
        // Emulate a 1 packet/ms bottleneck on a 40 ms path: each RTT's delay is what the window
        // queues. Without slowdowns the window settles where the queueing delay is the target
        // plus the small overshoot that balances GAIN against the decrease.
        let base = Duration::from_millis(40);
        let mut flow = Flow::new(MSS, base);
        let mut cc = LedbatPp::new(
            &CcContext::new(MSS),
            LedbatPpConfig {
                slowdown: false,
                ..LedbatPpConfig::default()
            },
        );
        for _ in 0..600 {
            let pkts = cc.cwnd() as f64 / MSS as f64;
            flow.rtt = base + Duration::from_secs_f64((pkts - 40.0).max(0.0) / 1e3);
            flow.run_rtts(&mut cc, 1);
        }
        let qd = cc.queuing_delay().expect("measured").as_millis_f64();
        assert!((58.0..=64.0).contains(&qd), "queueing delay {qd} ms");
    }

    #[test]
    fn params_are_validated() {
        let reg = Registry::standard();
        let ctx = CcContext::new(MSS);
        let spec = |v: serde_json::Value| -> crate::registry::CcSpec {
            serde_json::from_value(v).expect("spec")
        };
        let ok = spec(serde_json::json!({"name": "ledbat++", "target_ms": 30, "slowdown": false}));
        assert!(reg.build(&ok, &ctx).is_ok());
        for bad in [
            serde_json::json!({"name": "ledbat++", "target_ms": 0}),
            serde_json::json!({"name": "ledbat++", "gain": 1}),
        ] {
            assert!(
                matches!(
                    reg.build(&spec(bad.clone()), &ctx),
                    Err(CcError::BadParams { .. })
                ),
                "{bad}"
            );
        }
    }
}
