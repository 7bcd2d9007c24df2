//! Copa (Arun & Balakrishnan, NSDI'18): steer the window towards the target rate
//! `1/(δ·d_q)`, where `d_q = RTT_standing − RTT_min` is the queueing delay the flow sees.
//!
//! - RTT_min is the minimum RTT over 10 s; RTT_standing the minimum over the last srtt/2 (both
//!   Kathleen Nichols windowed filters, as mvfst's `Copa.cpp`). RTT_standing (and competitive
//!   mode's recent range) takes each sample less the receiver's reported ACK delay, as RFC 9002
//!   §5.3 adjusts smoothed_rtt: a QUIC receiver's ACK timer is no queue (the paper's TCP
//!   receivers report none; the delay is zero there).
//! - Per ACK: if `cwnd/RTT_standing ≤ 1/(δ·d_q)` the window grows by `v/(δ·cwnd)` packets per
//!   packet acked, else it shrinks by as much (§2.1).
//! - Velocity `v`: once per RTT the window is compared with its value an RTT earlier; after the
//!   direction has held for 3 RTTs `v` doubles every RTT (capped at δ·cwnd); a change of
//!   direction resets it to 1, as does (mvfst) an ACK that moves the window against a v > 1.
//! - Slow start doubles the window per RTT until the rate first exceeds the target.
//! - Optionally (`min_queue_ms`, not in the paper; 0 by default) a queue floor: δ is lowered so
//!   that 1/δ packets at the window's rate over RTT_min (cwnd/RTT_min) last at least the floor,
//!   in the target, the per-ACK step and the velocity cap alike. The flow then holds at least
//!   that much queue, and its steps scale with it: 1/δ = 2 packets is less than a millisecond
//!   above 24 Mbit/s, below what real hosts resolve (timer noise, ACKs that each cover many
//!   packets), where Copa reads the noise as queue and holds its rate below the link's. The
//!   rate is taken over RTT_min, not RTT_standing, so that a queue the flow drains does not
//!   raise δ back and slow the drain.
//! - Pacing at 2·cwnd/RTT_standing.
//! - Competitive mode (§2.2, switching rule of the authors' genericCC): if the queue was not
//!   nearly empty (RTT within 10 % of the recent RTT range above RTT_min) at least once over the
//!   last 5·srtt, a buffer-filling competitor is assumed and 1/δ follows AIMD: +1 per RTT, halved
//!   on loss (at most once per RTT), never below the default 1/δ. Back in default mode δ returns
//!   to its configured value. `competitive = false` keeps Copa in default mode (as mvfst).
//!
//! Windows are bytes; Copa's rules are in packets of the context's MSS. Copa does not react to
//! loss in default mode (mvfst), except that persistent congestion collapses the window and a
//! loss ends slow start.

use crate::algos::round::RoundTracker;
use crate::cc::{
    Calibration, CcContext, CongestionControl, HandoverState, Telemetry, MIN_WINDOW_PACKETS,
};
use crate::estimators::rtt::without_ack_delay;
use crate::estimators::windowed_filter::WindowedFilter;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "copa";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "Copa (NSDI'18): delay-based, target rate 1/(delta*queueing delay), competitive mode vs buffer-fillers";

/// Copa §2 (paper default): δ = 0.5, i.e. 2 packets queued per flow at equilibrium.
pub const DELTA: f64 = 0.5;
/// Copa §2.1: RTT_min is the minimum over the last 10 s.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// Copa §2.1: RTT_standing is the minimum over the last srtt/2.
pub const STANDING_RTT_FRACTION: f64 = 0.5;
/// Copa §2.1 (mvfst kNumTimesDirectionSame): v starts doubling once the direction has held this
/// many RTTs.
pub const VELOCITY_HOLD_RTTS: u32 = 3;
/// Copa §2.1: pace at twice cwnd/RTT_standing.
pub const PACING_GAIN: f64 = 2.0;
/// Copa §2.2 (genericCC `RTTWindow::is_copa`): window of the "nearly empty" check in srtts...
pub const COMPETITIVE_WINDOW_SRTTS: u64 = 5;
/// ...capped at 10 s...
pub const COMPETITIVE_WINDOW_CAP: Duration = Duration::from_secs(10);
/// ...and "nearly empty" means within 10 % of the recent RTT range above RTT_min.
pub const NEARLY_EMPTY_FRACTION: f64 = 0.1;
/// Guard on competitive mode's additive increase of 1/δ (not in the paper): 1/δ stays below this.
const MAX_INV_DELTA: f64 = 1000.0;
/// Largest δ a scenario may give: a tenth of a packet queued per flow.
const MAX_DELTA: f64 = 10.0;
/// Largest `min_queue_ms` a scenario may give.
const MAX_MIN_QUEUE_MS: f64 = 1_000.0;

/// Largest packet a transport can send (an IP datagram without jumbograms): bounds the packet size
/// learnt from sent packets.
const MAX_PACKET_BYTES: Bytes = 65_535;

/// Registers Copa under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<CopaParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct CopaParams {
    #[serde(default = "default_delta")]
    delta: f64,
    #[serde(default = "default_competitive")]
    competitive: bool,
    #[serde(default)]
    min_queue_ms: f64,
}

fn default_delta() -> f64 {
    DELTA
}
fn default_competitive() -> bool {
    true
}

impl ParamTable for CopaParams {
    const PARAMS: &'static [ParamSpec] = &[
        // 1/δ packets queued per flow: from a tenth of a packet to competitive mode's cap.
        ParamSpec::new(
            "delta",
            Kind::Number,
            "default-mode δ: the target rate is 1/(δ·queueing delay), 1/δ packets queued per flow",
            "Copa §2 (NSDI'18)",
        )
        .range(1.0 / MAX_INV_DELTA, MAX_DELTA),
        ParamSpec::new(
            "competitive",
            Kind::Bool,
            "switch to competitive mode (δ adapted AIMD-style) while the queue never empties",
            "Copa §2.2; genericCC",
        ),
        ParamSpec::new(
            "min_queue_ms",
            Kind::Number,
            "queue floor (ms): δ is lowered so that 1/δ packets at cwnd/RTT_min last at least this long (0: the paper's rule)",
            "not in the paper; RFC 9002 §6.1.2 kGranularity (1 ms) as a value",
        )
        .range(0.0, MAX_MIN_QUEUE_MS),
    ];
}

/// Builds Copa from scenario parameters (`delta`, `competitive`), checking their ranges.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: CopaParams = params::parse(NAME, p)?;
    Ok(Box::new(Copa::new(
        ctx,
        CopaConfig {
            delta: params.delta,
            competitive: params.competitive,
            min_queue: Duration::from_secs_f64(params.min_queue_ms / 1e3),
        },
    )))
}

/// Configuration of [`Copa`], validated by [`build`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopaConfig {
    /// Default-mode δ (1/δ packets queued per flow).
    pub delta: f64,
    /// Switch to competitive mode when the queue never empties.
    pub competitive: bool,
    /// Queue floor: δ is lowered so that 1/δ packets at cwnd/RTT_min last at least this long
    /// (zero: the paper's rule).
    pub min_queue: Duration,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig {
            delta: DELTA,
            competitive: true,
            min_queue: Duration::ZERO,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

/// Copa for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Copa {
    cfg: CopaConfig,
    /// Packet size windows are counted in: the context's MSS, raised to the largest packet sent.
    /// A transport that counts headers in flight (the simulator sends MSS + header bytes) would
    /// otherwise fit only one packet into a "two-packet" window.
    mss: Bytes,
    /// Window in bytes, fractional so that the small per-ACK steps accumulate.
    cwnd: f64,
    slow_start: bool,
    min_rtt: WindowedFilter<Duration>,
    standing_rtt: WindowedFilter<Duration>,
    /// Minimum and maximum RTT over the competitive-mode window.
    recent_min: WindowedFilter<Duration>,
    recent_max: WindowedFilter<Duration>,
    srtt: Option<Duration>,
    velocity: f64,
    direction: Option<Direction>,
    /// Consecutive per-RTT comparisons that found `direction`.
    same_direction_rtts: u32,
    rounds: RoundTracker,
    round_start_cwnd: f64,
    /// δ in force: the configured one in default mode, AIMD-adjusted in competitive mode.
    delta: f64,
    competitive_mode: bool,
    /// Losses of packets sent at or before this time were already answered (one δ halving per
    /// RTT, judged by send time).
    loss_epoch: Option<Time>,
    last_queueing_delay: Option<Duration>,
    last_target_pkts: f64,
    /// The receiver's ACK delay taken off the last sample (telemetry).
    last_ack_delay: Duration,
    clamp: Option<Bytes>,
}

impl Copa {
    /// Copa in slow start from the context's initial window, in default mode with `cfg.delta`.
    pub fn new(ctx: &CcContext, cfg: CopaConfig) -> Self {
        let mss = ctx.mss.max(1);
        let cwnd = ctx.initial_cwnd.max(MIN_WINDOW_PACKETS * mss) as f64;
        Copa {
            cfg,
            mss,
            cwnd,
            slow_start: true,
            min_rtt: WindowedFilter::new_min(MIN_RTT_WINDOW.as_nanos()),
            standing_rtt: WindowedFilter::new_min(0),
            recent_min: WindowedFilter::new_min(0),
            recent_max: WindowedFilter::new_max(0),
            srtt: None,
            velocity: 1.0,
            direction: None,
            same_direction_rtts: 0,
            rounds: RoundTracker::default(),
            round_start_cwnd: cwnd,
            delta: cfg.delta,
            competitive_mode: false,
            loss_epoch: None,
            last_queueing_delay: None,
            last_target_pkts: f64::NAN,
            last_ack_delay: Duration::ZERO,
            clamp: None,
        }
    }

    fn min_window(&self) -> f64 {
        (MIN_WINDOW_PACKETS * self.mss) as f64
    }

    fn bound(&mut self) {
        if let Some(c) = self.clamp {
            self.cwnd = self.cwnd.min(c as f64);
        }
        self.cwnd = self.cwnd.max(self.min_window());
    }

    fn cwnd_pkts(&self) -> f64 {
        self.cwnd / self.mss as f64
    }

    /// The δ the rules use now: the one in force, lowered so that 1/δ packets at the window's
    /// rate over the path's RTT (cwnd/RTT_min) last at least `min_queue`. Lowering δ also lowers
    /// the velocity cap δ·cwnd, which keeps one RTT's change to about the window's size.
    fn delta_now(&self, base: Duration) -> f64 {
        let floor = self.cfg.min_queue.as_secs_f64();
        if floor == 0.0 {
            return self.delta;
        }
        let rate_pkts = self.cwnd_pkts() / base.as_secs_f64();
        self.delta.min(1.0 / (rate_pkts * floor))
    }

    /// The δ in force (lower than the configured one in competitive mode).
    #[cfg(test)]
    pub(crate) fn delta(&self) -> f64 {
        self.delta
    }

    /// The velocity v (§2.1): the multiplier of the per-ACK window step.
    #[cfg(test)]
    pub(crate) fn velocity(&self) -> f64 {
        self.velocity
    }

    /// Whether Copa is in competitive mode (§2.2).
    #[cfg(test)]
    pub(crate) fn is_competitive(&self) -> bool {
        self.competitive_mode
    }

    fn standing(&self) -> Option<Duration> {
        self.standing_rtt.get()
    }

    /// Takes one RTT sample and the receiver's reported hold of its ACK: RTT_min from the
    /// sample as measured (RFC 9002 §5.2 does not adjust min_rtt either), the standing and
    /// recent RTTs without the hold where that leaves the sample at or above RTT_min (§5.3).
    /// A receiver that holds ACKs on a timer (s2n-quic: until 10 packets or 25 ms) adds up to
    /// the timer to every sample of a window below that count, and Copa would take it for a
    /// queue and hold its rate to 1/(δ·hold) (a scavenger at 1-2 Mbit/s of an idle 20 over
    /// real QUIC; `tests/auto.rs`).
    fn absorb_rtt(&mut self, now: Time, measured: Duration, ack_delay: Duration) {
        self.min_rtt.update(now, measured);
        let min = self.min_rtt.get().unwrap_or(measured);
        let sample = without_ack_delay(measured, min, ack_delay);
        self.last_ack_delay = measured - sample;
        let srtt = self.srtt.unwrap_or(sample);
        self.standing_rtt
            .set_window(srtt.mul_f64(STANDING_RTT_FRACTION).as_nanos());
        self.standing_rtt.update(now, sample);
        let recent = (srtt * COMPETITIVE_WINDOW_SRTTS).min(COMPETITIVE_WINDOW_CAP);
        self.recent_min.set_window(recent.as_nanos());
        self.recent_max.set_window(recent.as_nanos());
        self.recent_min.update(now, sample);
        self.recent_max.update(now, sample);
    }

    /// Copa §2.2: was the queue nearly empty at least once in the recent window?
    fn queue_nearly_empty(&self) -> bool {
        let (Some(min), Some(lo), Some(hi)) = (
            self.min_rtt.get(),
            self.recent_min.get(),
            self.recent_max.get(),
        ) else {
            return true;
        };
        let range = hi.as_secs_f64() - min.as_secs_f64();
        lo.as_secs_f64() <= min.as_secs_f64() + NEARLY_EMPTY_FRACTION * range.max(0.0)
    }

    fn update_mode(&mut self) {
        if !self.cfg.competitive {
            return;
        }
        if self.queue_nearly_empty() {
            if self.competitive_mode {
                self.competitive_mode = false;
                self.delta = self.cfg.delta;
            }
        } else if !self.competitive_mode {
            // Entering competitive mode from the default δ.
            self.competitive_mode = true;
        }
    }

    /// Once per RTT: the velocity rule, and competitive mode's additive increase of 1/δ.
    fn on_round_end(&mut self) {
        if self.competitive_mode {
            self.delta = 1.0 / (1.0 / self.delta + 1.0).min(MAX_INV_DELTA);
        }
        if self.slow_start {
            self.round_start_cwnd = self.cwnd;
            return;
        }
        let dir = if self.cwnd > self.round_start_cwnd {
            Some(Direction::Up)
        } else if self.cwnd < self.round_start_cwnd {
            Some(Direction::Down)
        } else {
            None
        };
        if dir.is_some() && dir == self.direction {
            self.same_direction_rtts = self.same_direction_rtts.saturating_add(1);
            if self.same_direction_rtts > VELOCITY_HOLD_RTTS {
                self.velocity *= 2.0;
            }
        } else {
            self.direction = dir;
            self.same_direction_rtts = 1;
            self.velocity = 1.0;
        }
        // genericCC: v never exceeds δ·cwnd, so one RTT moves the window by at most about its
        // own size (v/δ packets); with the δ the steps use, lowered by `min_queue`.
        let delta = self.min_rtt.get().map_or(self.delta, |m| self.delta_now(m));
        self.velocity = self.velocity.min((delta * self.cwnd_pkts()).max(1.0));
        self.round_start_cwnd = self.cwnd;
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &str {
        NAME
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.rounds.on_sent(sent.pn);
        self.mss = self.mss.max(sent.bytes.min(MAX_PACKET_BYTES));
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.rtt.has_sample {
            self.srtt = Some(ack.rtt.smoothed.max(Duration(1)));
        }
        if let Some(s) = ack.min_rtt_sample {
            self.absorb_rtt(now, s.max(Duration(1)), ack.ack_delay);
        }
        self.update_mode();
        if self.rounds.on_ack(ack.largest_acked) {
            self.on_round_end();
        }
        let (Some(standing), Some(min)) = (self.standing(), self.min_rtt.get()) else {
            return;
        };
        let dq = standing - min; // Duration subtraction saturates at zero
        self.last_queueing_delay = Some(dq);
        // λ ≤ λ_t ⇔ cwnd/RTT_standing ≤ 1/(δ·d_q) ⇔ cwnd ≤ RTT_standing/(δ·d_q) packets.
        let delta = self.delta_now(min);
        let target_pkts = if dq.is_zero() {
            f64::INFINITY
        } else {
            standing.as_secs_f64() / (delta * dq.as_secs_f64())
        };
        self.last_target_pkts = target_pkts;
        let increase = self.cwnd_pkts() <= target_pkts;
        if self.slow_start {
            if increase {
                self.cwnd += ack.acked_bytes as f64;
                self.bound();
                return;
            }
            self.slow_start = false;
            self.round_start_cwnd = self.cwnd;
        }
        // mvfst: a v grown large in one direction must not be spent in the other: when this ACK
        // moves the window against the current direction, v restarts at 1 and so does the
        // per-RTT direction measurement.
        let dir = if increase {
            Direction::Up
        } else {
            Direction::Down
        };
        if self.direction != Some(dir) && self.velocity > 1.0 {
            self.direction = Some(dir);
            self.velocity = 1.0;
            self.same_direction_rtts = 1;
            self.round_start_cwnd = self.cwnd;
            self.rounds.start();
        }
        // v/(δ·cwnd) packets per packet acked, in bytes: v·acked_bytes/(δ·cwnd_pkts).
        let step = self.velocity * ack.acked_bytes as f64 / (delta * self.cwnd_pkts());
        if increase {
            self.cwnd += step;
        } else {
            self.cwnd -= step;
        }
        self.bound();
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        let new_epoch = self
            .loss_epoch
            .is_none_or(|r| loss.largest_lost_sent_time > r);
        if new_epoch {
            self.loss_epoch = Some(now);
            if self.competitive_mode {
                // Multiplicative decrease of 1/δ; δ never above the default.
                self.delta = (2.0 * self.delta).min(self.cfg.delta);
            }
            if self.slow_start {
                self.slow_start = false;
                self.round_start_cwnd = self.cwnd;
            }
        }
        if loss.persistent_congestion {
            // mvfst: persistent congestion collapses the window; velocity starts over.
            self.cwnd = self.min_window();
            self.velocity = 1.0;
            self.direction = None;
            self.same_direction_rtts = 0;
            self.round_start_cwnd = self.cwnd;
        }
        self.bound();
    }

    fn cwnd(&self) -> Bytes {
        self.cwnd as Bytes
    }

    fn pacing_rate(&self) -> Option<Rate> {
        let standing = self.standing()?;
        let bytes = (PACING_GAIN * self.cwnd) as Bytes;
        Some(Rate::from_bytes_over(bytes, standing.max(Duration(1))).max(Rate(1)))
    }

    fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(if self.slow_start {
            "slow_start"
        } else if self.competitive_mode {
            "competitive"
        } else {
            "default"
        });
        let ms = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_millis_f64());
        t.push("delta", self.delta);
        t.push("velocity", self.velocity);
        t.push("min_rtt_ms", ms(self.min_rtt.get()));
        t.push("standing_rtt_ms", ms(self.standing()));
        t.push("queueing_delay_ms", ms(self.last_queueing_delay));
        t.push("ack_delay_ms", self.last_ack_delay.as_millis_f64());
        t.push(
            "target_cwnd_pkts",
            if self.last_target_pkts.is_finite() {
                self.last_target_pkts
            } else {
                f64::NAN
            },
        );
        t.push(
            "direction",
            match self.direction {
                Some(Direction::Up) => 1.0,
                Some(Direction::Down) => -1.0,
                None => 0.0,
            },
        );
        t
    }

    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        if let Some(clamp) = c.cwnd_clamp {
            self.clamp = clamp.bound();
        }
        if let Some(w) = c.cwnd {
            self.cwnd = w as f64;
            self.round_start_cwnd = self.cwnd;
        }
        // Copa has no ssthresh; a threshold at or below the window ends slow start. Its pacing
        // rate follows the window, so a written rate is not kept.
        if c.ssthresh.is_some_and(|s| self.cwnd >= s as f64) {
            self.slow_start = false;
        }
        self.bound();
    }

    fn adopt(&mut self, now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.min_rtt.update(now, from.rtt.min.max(Duration(1)));
            self.srtt = Some(from.rtt.smoothed.max(Duration(1)));
        }
        // A predecessor past its start-up hands over a probed window: no second slow start.
        self.slow_start = matches!(from.ssthresh, Some(s) if from.cwnd < s);
        self.velocity = 1.0;
        self.direction = None;
        self.same_direction_rtts = 0;
        self.calibrate(
            now,
            &Calibration {
                cwnd: Some(from.cwnd),
                ..Calibration::default()
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{ack, persistent_congestion, Flow};
    use crate::estimators::rtt::RttSnapshot;

    const MSS: Bytes = 1000;

    fn copa(competitive: bool) -> Copa {
        Copa::new(
            &CcContext::new(MSS),
            CopaConfig {
                competitive,
                ..CopaConfig::default()
            },
        )
    }

    fn snap(srtt_ms: u64) -> RttSnapshot {
        let d = Duration::from_millis(srtt_ms);
        RttSnapshot {
            latest: d,
            smoothed: d,
            var: Duration::ZERO,
            min: d,
            has_sample: true,
        }
    }

    /// A Copa out of slow start at `pkts` packets.
    fn in_default_mode(pkts: u64, competitive: bool) -> Copa {
        let mut cc = copa(competitive);
        cc.calibrate(
            Time::ZERO,
            &Calibration {
                cwnd: Some(pkts * MSS),
                ssthresh: Some(pkts * MSS),
                ..Calibration::default()
            },
        );
        assert!(!cc.in_slow_start());
        cc
    }

    #[test]
    fn per_ack_step_is_v_over_delta_cwnd_towards_the_target() {
        // RTT_min 100 ms, then a standing RTT of 110 ms: d_q = 10 ms, target window
        // 0.11/(0.5·0.01) = 22 packets.
        let mut cc = in_default_mode(20, false);
        let t0 = Time::ZERO;
        cc.on_ack(
            t0,
            &ack(0, t0, MSS, MSS, Duration::from_millis(100), snap(100)),
        );
        let t1 = t0 + Duration::from_secs(1); // the 100 ms sample leaves the srtt/2 window
                                              // (That first ACK saw no queue and went up by 1/(0.5·20) packets = 100 bytes.)
        let before = cc.cwnd;
        assert!((before - 20_100.0).abs() < 1e-9);
        cc.on_ack(
            t1,
            &ack(1, t0, MSS, MSS, Duration::from_millis(110), snap(110)),
        );
        assert!((cc.last_target_pkts - 22.0).abs() < 1e-9);
        // 20.1 ≤ 22: up by v/(δ·cwnd) = 1/(0.5·20.1) packets.
        let up = cc.cwnd - before;
        assert!((up - 1000.0 / (0.5 * 20.1)).abs() < 1e-9, "{up}");
        // At 30 packets the same delays say down, by 1/(0.5·30) packets.
        let mut cc = in_default_mode(30, false);
        cc.on_ack(
            t0,
            &ack(0, t0, MSS, MSS, Duration::from_millis(100), snap(100)),
        );
        let before = cc.cwnd;
        cc.on_ack(
            t1,
            &ack(1, t0, MSS, MSS, Duration::from_millis(110), snap(110)),
        );
        let down = before - cc.cwnd;
        assert!(
            (down - 1000.0 / (0.5 * before / 1000.0)).abs() < 1e-9,
            "{down}"
        );
    }

    #[test]
    fn a_queue_floor_lowers_delta_at_high_rates_and_nothing_at_low_ones() {
        // 400 packets over RTT_min 10 ms: 40 000 packets/s, so 1/δ = 2 packets last 50 µs; a
        // 1-ms floor lowers δ to 1/(40 000 · 1 ms) = 0.025.
        let floored = |pkts: u64| {
            let mut cc = in_default_mode(pkts, false);
            cc.cfg.min_queue = Duration::from_millis(1);
            cc
        };
        let t0 = Time::ZERO;
        let t1 = t0 + Duration::from_secs(1);
        let run = |mut cc: Copa, min_ms: u64, standing_us: u64| {
            cc.on_ack(
                t0,
                &ack(0, t0, MSS, MSS, Duration::from_millis(min_ms), snap(min_ms)),
            );
            let before = cc.cwnd;
            let d = Duration::from_micros(standing_us);
            cc.on_ack(t1, &ack(1, t0, MSS, MSS, d, snap(min_ms)));
            (cc.cwnd - before, cc.last_target_pkts)
        };
        // A standing RTT of 10.5 ms: d_q = 0.5 ms. The paper's rule aims at
        // 0.0105/(0.5 · 0.0005) = 42 packets and goes down; with the floor it aims at
        // 0.0105/(0.025 · 0.0005) = 840 and goes up, by 1/(δ·cwnd) = 0.1 packet.
        let (step, target) = run(in_default_mode(400, false), 10, 10_500);
        assert!(
            (target - 42.0).abs() < 1e-6 && step < 0.0,
            "{target} {step}"
        );
        let (step, target) = run(floored(400), 10, 10_500);
        assert!((target - 840.0).abs() < 1.0, "{target}");
        assert!((step - 100.0).abs() < 0.1, "{step}");
        // At d_q = 1.5 ms, above the floor, it goes down (target about 307 packets).
        let (step, target) = run(floored(400), 10, 11_500);
        assert!(target < 400.0 && step < 0.0, "{target} {step}");
        // 20 packets over 100 ms (200 packets/s): 2 packets last 10 ms, beyond the floor; the
        // paper's rule holds (22 packets at d_q = 10 ms, as above).
        let (_, target) = run(floored(20), 100, 110_000);
        assert!((target - 22.0).abs() < 1e-6, "{target}");
        // The velocity cap follows: v ≤ δ·cwnd = 0.025 · 400 = 10, not 0.5 · 400 = 200.
        let mut cc = floored(400);
        cc.on_ack(
            t0,
            &ack(0, t0, MSS, MSS, Duration::from_millis(10), snap(10)),
        );
        // Growing for 5 RTTs with a large v: it doubles, then the cap applies.
        cc.velocity = 1_000.0;
        cc.direction = Some(Direction::Up);
        cc.same_direction_rtts = 5;
        cc.round_start_cwnd = cc.cwnd - 1_000.0;
        cc.on_round_end();
        assert!((cc.velocity - 10.0).abs() < 0.01, "{}", cc.velocity);
    }

    #[test]
    fn standing_rtt_is_the_minimum_over_half_an_srtt() {
        let mut cc = in_default_mode(20, false);
        let ms = |m: u64| Time::ZERO + Duration::from_millis(m);
        cc.on_ack(
            ms(0),
            &ack(0, ms(0), MSS, MSS, Duration::from_millis(100), snap(100)),
        );
        cc.on_ack(
            ms(10),
            &ack(1, ms(0), MSS, MSS, Duration::from_millis(130), snap(100)),
        );
        // 100 ms (at t = 0) is still within srtt/2 = 50 ms.
        assert_eq!(cc.standing(), Some(Duration::from_millis(100)));
        cc.on_ack(
            ms(60),
            &ack(2, ms(0), MSS, MSS, Duration::from_millis(120), snap(100)),
        );
        // At t = 60 ms the 100 ms sample is out of the window: the standing RTT is now higher.
        let s = cc.standing().expect("standing").as_millis_f64();
        assert!(s >= 120.0, "standing {s}");
        assert_eq!(cc.min_rtt.get(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn the_receivers_ack_delay_is_taken_off_the_standing_rtt_not_the_min() {
        let mut cc = in_default_mode(8, false);
        let ms = |m: u64| Time::ZERO + Duration::from_millis(m);
        let held = |pn: u64, at: u64, rtt: u64, delay: u64| AckEvent {
            ack_delay: Duration::from_millis(delay),
            ..ack(pn, ms(at), MSS, MSS, Duration::from_millis(rtt), snap(40))
        };
        cc.on_ack(ms(0), &held(0, 0, 40, 0));
        // A receiver's timer held the ACK 20 ms: 60 ms measured, 40 of them path.
        cc.on_ack(ms(30), &held(1, 30, 60, 20));
        cc.on_ack(ms(60), &held(2, 60, 62, 20));
        assert_eq!(cc.min_rtt.get(), Some(Duration::from_millis(40)));
        assert_eq!(cc.standing(), Some(Duration::from_millis(42)));
        assert_eq!(cc.telemetry().get("ack_delay_ms"), Some(20.0));
        // A delay that would take the sample below RTT_min is not taken (RFC 9002 §5.3).
        cc.on_ack(ms(120), &held(3, 120, 45, 20));
        assert_eq!(cc.standing(), Some(Duration::from_millis(45)));
        assert_eq!(cc.telemetry().get("ack_delay_ms"), Some(0.0));
    }

    #[test]
    fn slow_start_doubles_per_rtt_until_the_rate_exceeds_the_target() {
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = copa(false);
        flow.run_rtts(&mut cc, 3);
        assert!(cc.in_slow_start());
        assert_eq!(cc.cwnd(), 80 * MSS);
        // 10 ms of queueing: target 0.06/(0.5·0.01) = 12 packets < 80: slow start ends.
        flow.rtt = Duration::from_millis(60);
        flow.run_rtts(&mut cc, 3);
        assert!(!cc.in_slow_start());
        assert_eq!(cc.telemetry().state, "default");
    }

    #[test]
    fn velocity_doubles_after_three_rtts_in_one_direction_and_resets_on_a_change() {
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = in_default_mode(10, false);
        // No queue: the target is unbounded, the window goes up every RTT.
        let mut velocities = Vec::new();
        for _ in 0..7 {
            flow.run_rtts(&mut cc, 1);
            velocities.push(cc.velocity());
        }
        // Comparisons 1..3 keep v = 1 (the first ACK opens the first round), then doubling.
        assert_eq!(
            velocities,
            vec![1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 8.0],
            "{velocities:?}"
        );
        // Per RTT the window moves by about v/δ packets.
        let before = cc.cwnd_pkts();
        let v = cc.velocity();
        flow.run_rtts(&mut cc, 1);
        let moved = cc.cwnd_pkts() - before;
        assert!(
            moved > 0.8 * v / DELTA && moved < 2.2 * 2.0 * v / DELTA,
            "moved {moved} at v = {v}"
        );
        // A large standing queue: the window turns down, and v drops back to 1.
        flow.rtt = Duration::from_millis(150);
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.direction, Some(Direction::Down));
        assert!(cc.velocity() <= 2.0, "v = {}", cc.velocity());
    }

    #[test]
    fn closed_loop_converges_to_the_target_window_of_a_fixed_queueing_delay() {
        // RTT_min 40 ms, then a fixed 10 ms of queueing that does not depend on the window
        // (someone else's standing queue): the target window is
        // RTT_standing/(δ·d_q) = 0.05/(0.5·0.01) = 10 packets. Copa must settle around it,
        // within the ±v/δ = ±2 packets its per-RTT steps move.
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = copa(false);
        flow.run_rtts(&mut cc, 3);
        flow.rtt = Duration::from_millis(50);
        flow.run_rtts(&mut cc, 40);
        let mut sum = 0.0;
        let mut max_dev: f64 = 0.0;
        for _ in 0..60 {
            flow.run_rtts(&mut cc, 1);
            let pkts = cc.cwnd_pkts();
            sum += pkts;
            max_dev = max_dev.max((pkts - 10.0).abs());
        }
        let mean = sum / 60.0;
        assert!((mean - 10.0).abs() < 1.5, "mean window {mean} packets");
        assert!(
            max_dev < 5.0,
            "window strays {max_dev} packets from the target"
        );
        assert!((cc.last_target_pkts - 10.0).abs() < 1e-6);
        assert!(!cc.is_competitive());
    }

    #[test]
    fn competitive_mode_raises_one_over_delta_per_rtt_and_halves_it_on_loss() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = in_default_mode(20, true);
        flow.run_rtts(&mut cc, 2);
        assert!(!cc.is_competitive());
        // A buffer-filler keeps 100 ms queued at all times: the queue is never nearly empty
        // over 5·srtt once the 40 ms samples age out.
        flow.rtt = Duration::from_millis(140);
        flow.run_rtts(&mut cc, 6);
        assert!(cc.is_competitive());
        assert_eq!(cc.telemetry().state, "competitive");
        let inv = 1.0 / cc.delta();
        flow.run_rtts(&mut cc, 3);
        let grown = 1.0 / cc.delta() - inv;
        assert!(
            (2.0..=4.0).contains(&grown),
            "1/δ grew by {grown} in 3 RTTs"
        );
        // A loss halves 1/δ once per RTT.
        let inv = 1.0 / cc.delta();
        flow.lose_fresh(&mut cc);
        assert!((1.0 / cc.delta() - inv / 2.0).abs() < 1e-9);
        flow.lose_fresh(&mut cc); // a later send: another halving, floored at the default 1/δ
        assert!(1.0 / cc.delta() >= 1.0 / DELTA - 1e-9);
        // The competitor leaves: the queue empties and δ returns to its default.
        flow.rtt = Duration::from_millis(40);
        flow.run_rtts(&mut cc, 2);
        assert!(!cc.is_competitive());
        assert_eq!(cc.delta(), DELTA);
    }

    #[test]
    fn without_competitive_mode_delta_never_changes() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = in_default_mode(20, false);
        flow.run_rtts(&mut cc, 2);
        flow.rtt = Duration::from_millis(140);
        flow.run_rtts(&mut cc, 10);
        flow.lose_fresh(&mut cc);
        assert!(!cc.is_competitive());
        assert_eq!(cc.delta(), DELTA);
    }

    #[test]
    fn pacing_is_twice_cwnd_over_the_standing_rtt() {
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = in_default_mode(20, false);
        assert_eq!(cc.pacing_rate(), None);
        flow.run_rtts(&mut cc, 2);
        let expected = 2.0 * cc.cwnd() as f64 * 8.0 / 0.05;
        let got = cc.pacing_rate().expect("rate").as_bps() as f64;
        assert!((got / expected - 1.0).abs() < 1e-3, "{got} vs {expected}");
    }

    #[test]
    fn persistent_congestion_collapses_the_window() {
        let mut cc = in_default_mode(50, false);
        cc.on_loss(Time::ZERO, &persistent_congestion(0, Time::ZERO, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
    }

    #[test]
    fn params_are_validated() {
        let reg = Registry::standard();
        let ctx = CcContext::new(MSS);
        let spec = |v: serde_json::Value| -> crate::registry::CcSpec {
            serde_json::from_value(v).expect("spec")
        };
        let ok = spec(serde_json::json!({"name": "copa", "delta": 0.1, "competitive": false}));
        assert!(reg.build(&ok, &ctx).is_ok());
        for bad in [
            serde_json::json!({"name": "copa", "delta": 0}),
            serde_json::json!({"name": "copa", "mode": "x"}),
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
