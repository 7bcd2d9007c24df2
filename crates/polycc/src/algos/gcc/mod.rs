//! WebRTC's Google Congestion Control (GCC), the rate controller of real-time media and the
//! "WebRTC" baseline of PIBES's comparisons. Two estimates, the smaller wins:
//!
//! - delay-based: receiver timestamps are grouped by send time (`inter_arrival`), the trend of
//!   the one-way delay variation is compared with an adaptive threshold (`trendline`), and an
//!   AIMD controller moves the rate (`aimd`, with `link_capacity` and `received_rate`);
//! - loss-based (`loss_based`).
//!
//! Facts and constants: WebRTC's code as summarised in the project's CC dossier §8 (Chrome's
//! behaviour where it and draft-ietf-rmcat-gcc-02 differ). Simplifications, stated: the rate is
//! updated every 100 ms of feedback (WebRTC's transport-feedback interval) or at once on overuse;
//! the acknowledged rate is the received rate over 500 ms (the draft's R_hat) rather than
//! WebRTC's Bayesian estimator; no ALR detection, no congestion-window pushback. Probing is the
//! start-up kind only (`probe_controller`, `probe_estimator`): clusters at 3× and 6× the
//! start rate, then at twice each result that keeps up, padded when the encoder has too little;
//! a result replaces the delay-based estimate, as WebRTC's `AimdRateControl::SetEstimate`.
//!
//! GCC is a rate controller: the sender paces at `pacing_factor × target` (1 by default, right
//! for a backlogged source; WebRTC's pacer uses 2.5 × for an encoder that produces the target
//! rate in bursts) and the window is only a safety bound of two target-rate round trips, so that
//! a sender that stops getting feedback stops.

mod aimd;
mod inter_arrival;
mod link_capacity;
mod loss_based;
mod probe_controller;
mod probe_estimator;
mod received_rate;
mod trendline;

use crate::cc::{
    Calibration, CcContext, CongestionControl, HandoverState, MediaControl, Telemetry,
};
use crate::intent::Intent;
use crate::params::{self, Bound, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, Feedback, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use aimd::{Aimd, RateState};
use inter_arrival::InterArrival;
use loss_based::LossBased;
use probe_controller::ProbeController;
use probe_estimator::ProbeEstimator;
use received_rate::ReceivedRate;
use serde::{Deserialize, Serialize};
use trendline::{Trendline, Usage};

/// Registry and scenario name.
pub const NAME: &str = "gcc";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "WebRTC GCC: trendline delay-based AIMD and loss-based rate from receiver timestamps";

/// WebRTC's default start bitrate (300 kbit/s).
pub const START_RATE: Rate = Rate::from_bps(300_000);
/// WebRTC's floor for the bandwidth estimate (5 kbit/s, dossier §8.4).
pub const MIN_RATE: Rate = Rate::from_bps(5_000);
/// No ceiling unless the scenario or the application's intent gives one.
pub const MAX_RATE: Rate = Rate::from_bps(100_000_000_000);
/// WebRTC's transport-wide feedback interval (RemoteEstimatorProxy default 100 ms): the rate
/// controllers run once per interval, or at once when overuse is detected.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);
/// The safety window covers two round trips of the target rate, with at least this RTT.
pub const WINDOW_RTTS: f64 = 2.0;
/// The RTT the safety window assumes at least, and before the first RTT sample.
pub const WINDOW_MIN_RTT: Duration = Duration::from_millis(100);
/// ... and never fewer than this many packets.
pub const WINDOW_MIN_PACKETS: u64 = 4;

/// Registers GCC under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<GccParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct GccParams {
    #[serde(default = "default_start")]
    start_rate_kbps: f64,
    #[serde(default = "default_min")]
    min_rate_kbps: f64,
    #[serde(default = "default_max")]
    max_rate_kbps: f64,
    #[serde(default = "default_pacing")]
    pacing_factor: f64,
    /// Start-up probing (WebRTC's ProbeController); off starts at `start_rate_kbps` and climbs.
    #[serde(default = "default_probing")]
    probing: bool,
}

fn default_start() -> f64 {
    START_RATE.as_bps() as f64 / 1e3
}
fn default_min() -> f64 {
    MIN_RATE.as_bps() as f64 / 1e3
}
fn default_max() -> f64 {
    MAX_RATE_KBPS
}
fn default_pacing() -> f64 {
    1.0
}
fn default_probing() -> bool {
    true
}

/// [`MAX_RATE`] in kbit/s, the top of every rate's range.
const MAX_RATE_KBPS: f64 = MAX_RATE.as_bps() as f64 / 1e3;
/// Largest pacing factor: WebRTC's pacer uses 2.5; beyond 10 a "paced" sender bursts.
const MAX_PACING_FACTOR: f64 = 10.0;

impl ParamTable for GccParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "min_rate_kbps",
            Kind::Number,
            "floor of the bandwidth estimate, kbit/s (a realtime_video intent's min_rate replaces it)",
            "WebRTC's floor of the bandwidth estimate (dossier §8.4)",
        )
        .range(1.0, MAX_RATE_KBPS),
        ParamSpec::new(
            "max_rate_kbps",
            Kind::Number,
            "ceiling of the estimate, kbit/s (a realtime_video intent's max_rate replaces it)",
            "polycc: no ceiling unless the scenario or intent gives one",
        )
        .bounds(Bound::Param("min_rate_kbps"), Bound::At(MAX_RATE_KBPS)),
        ParamSpec::new(
            "start_rate_kbps",
            Kind::Number,
            "target before the first estimate, kbit/s",
            "WebRTC default start bitrate",
        )
        .bounds(Bound::Param("min_rate_kbps"), Bound::Param("max_rate_kbps")),
        ParamSpec::new(
            "pacing_factor",
            Kind::Number,
            "the sender paces at this multiple of the target (2.5 for an encoder-driven source)",
            "polycc: 1 for a backlogged source; WebRTC's pacer uses 2.5",
        )
        .range(1.0, MAX_PACING_FACTOR),
        ParamSpec::new(
            "probing",
            Kind::Bool,
            "start-up probing: clusters at 3x and 6x the start rate, then twice each result",
            "WebRTC probe_controller.cc",
        ),
    ];
}

/// Builds GCC from scenario parameters (`start_rate_kbps`, `min_rate_kbps`, `max_rate_kbps`,
/// `pacing_factor`, `probing`), checking them against the declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: GccParams = params::parse(NAME, p)?;
    let kbps = |k: f64| Rate::from_bps_f64(k * 1e3);
    let mut gcc = Gcc::new(
        ctx,
        kbps(params.start_rate_kbps),
        kbps(params.min_rate_kbps),
        kbps(params.max_rate_kbps),
        params.pacing_factor,
    );
    gcc.probing = params.probing;
    Ok(Box::new(gcc))
}

/// The GCC sender-side controller: delay-based and loss-based estimates combined into a target
/// bitrate, paced at `pacing_factor ×` that target under a safety window.
pub struct Gcc {
    mss: Bytes,
    inter: InterArrival,
    trend: Trendline,
    aimd: Aimd,
    loss: LossBased,
    received: ReceivedRate,
    min: Rate,
    max: Rate,
    target: Rate,
    pacing_factor: f64,
    srtt: Option<Duration>,
    last_update: Option<Time>,
    /// Overuse seen since the last rate update (the detector may clear it within a batch).
    overuse_pending: bool,
    /// Probe at start-up (cleared when taking over a running flow).
    probing: bool,
    probes: ProbeController,
    probe_results: ProbeEstimator,
}

impl Gcc {
    /// A controller starting at `start`, kept within `[min, max]`, pacing at `pacing_factor ×`
    /// the target; start-up probing is on.
    pub fn new(ctx: &CcContext, start: Rate, min: Rate, max: Rate, pacing_factor: f64) -> Self {
        Gcc {
            mss: ctx.mss,
            inter: InterArrival::new(),
            trend: Trendline::new(),
            aimd: Aimd::new(start, min, max),
            loss: LossBased::new(start),
            received: ReceivedRate::default(),
            min,
            max,
            target: start,
            pacing_factor,
            srtt: None,
            last_update: None,
            overuse_pending: false,
            probing: true,
            probes: ProbeController::default(),
            probe_results: ProbeEstimator::default(),
        }
    }

    /// Runs both controllers when an update is due.
    fn maybe_update(&mut self, now: Time) {
        let due = self
            .last_update
            .is_none_or(|t| now.saturating_since(t) >= UPDATE_INTERVAL);
        if !due && !self.overuse_pending {
            return;
        }
        self.last_update = Some(now);
        let usage = if self.overuse_pending {
            Usage::Overusing
        } else {
            self.trend.usage()
        };
        self.overuse_pending = false;
        let delay_based = self.aimd.update(now, usage, self.received.rate());
        self.combine(now, delay_based);
    }

    /// The target from a new delay-based estimate and the loss-based side; probing goes on
    /// while the estimate keeps up with the probes.
    fn combine(&mut self, now: Time, delay_based: Rate) {
        let rtt = self.srtt.unwrap_or(aimd::DEFAULT_RTT);
        let loss_based = self.loss.update(now, rtt, delay_based);
        self.target = delay_based.min(loss_based).clamp(self.min, self.max);
        self.probes.on_estimate(now, self.target);
    }

    fn set_rate(&mut self, rate: Rate) {
        let r = rate.clamp(self.min, self.max);
        self.aimd.set_rate(r);
        self.loss.set_rate(r);
        self.target = r;
    }
}

impl CongestionControl for Gcc {
    fn name(&self) -> &str {
        NAME
    }

    fn wants_feedback(&self) -> bool {
        true
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        if self.probing {
            self.probes.start(self.target, self.max);
        }
        if let Some((id, done)) = self.probes.on_sent(now, sent.bytes) {
            self.probe_results.on_sent(sent.pn, id, done);
        }
    }

    fn on_feedback(&mut self, now: Time, feedback: &Feedback<'_>) {
        let mut probed = None;
        for a in feedback.arrivals {
            probed = self
                .probe_results
                .on_arrival(a.pn, a.sent_time, a.arrival_time, a.bytes)
                .or(probed);
            self.received.on_arrival(a.arrival_time, a.bytes);
            if let Some(d) = self.inter.on_packet(a.sent_time, a.arrival_time, a.bytes) {
                let usage = self
                    .trend
                    .update(d.recv_delta_ms, d.send_delta_ms, d.arrival);
                self.overuse_pending |= usage == Usage::Overusing;
            }
        }
        // A probe result sets the delay-based estimate unless the detector sees overuse.
        if let (Some(rate), false) = (probed, self.overuse_pending) {
            self.aimd.set_rate(rate);
            self.last_update = Some(now);
            self.combine(now, self.aimd.rate());
            return;
        }
        self.maybe_update(now);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.mss > 0 {
            self.mss = ack.mss;
        }
        if ack.rtt.has_sample {
            self.srtt = Some(ack.rtt.smoothed);
            self.aimd.set_rtt(ack.rtt.smoothed);
        }
        self.loss.on_acked(u64::from(ack.acked_packets));
        // Without receiver timestamps only the loss-based side moves; it still needs its cadence.
        self.maybe_update(now);
    }

    fn on_loss(&mut self, _now: Time, loss: &LossEvent) {
        self.loss.on_lost(u64::from(loss.lost_packets));
    }

    fn cwnd(&self) -> Bytes {
        let rtt = self.srtt.unwrap_or(WINDOW_MIN_RTT).max(WINDOW_MIN_RTT);
        let rate = self
            .probes
            .active()
            .map_or(self.target, |c| c.rate.max(self.target));
        let bytes = rate.bytes_in(rtt) as f64 * WINDOW_RTTS;
        (bytes as Bytes).max(WINDOW_MIN_PACKETS * self.mss)
    }

    fn pacing_rate(&self) -> Option<Rate> {
        // A probe cluster leaves at its rate, media and padding alike.
        if let Some(c) = self.probes.active() {
            return Some(c.rate);
        }
        Some(
            self.target
                .mul_f64(self.pacing_factor)
                .max(Rate::from_bps(1)),
        )
    }

    /// GCC detects no competing flow: only the target is given.
    fn media_control(&self) -> Option<MediaControl> {
        Some(MediaControl {
            target_bitrate: self.target,
            competing: None,
        })
    }

    fn wants_padding(&self) -> bool {
        self.probes.active().is_some()
    }

    fn set_intent(&mut self, _now: Time, intent: &Intent) {
        if let Intent::RealtimeVideo { min_rate, max_rate } = *intent {
            self.min = min_rate;
            self.max = max_rate.max(min_rate);
            self.aimd.set_bounds(self.min, self.max);
            self.target = self.target.clamp(self.min, self.max);
        }
    }

    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        if let Some(r) = c.pacing_rate {
            self.set_rate(r.mul_f64(1.0 / self.pacing_factor));
        }
    }

    fn handover_state(&self) -> HandoverState {
        HandoverState {
            cwnd: self.cwnd(),
            ssthresh: None,
            pacing_rate: self.pacing_rate(),
            bandwidth_estimate: self.received.rate(),
            ..HandoverState::default()
        }
    }

    fn adopt(&mut self, _now: Time, from: &HandoverState) {
        // Taking over a running flow: its estimate replaces start-up probing.
        self.probing = false;
        if from.rtt.has_sample {
            self.srtt = Some(from.rtt.smoothed);
            self.aimd.set_rtt(from.rtt.smoothed);
        }
        // Start from what the predecessor measured, else from its pacing rate or window.
        let rate = from.bandwidth_estimate.or(from.pacing_rate).or_else(|| {
            from.rtt
                .has_sample
                .then(|| Rate::from_bytes_over(from.cwnd, from.rtt.smoothed))
        });
        if let Some(r) = rate {
            self.set_rate(r);
        }
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(match (self.trend.usage(), self.aimd.state()) {
            (Usage::Overusing, _) | (_, RateState::Decrease) => "overuse",
            (Usage::Underusing, _) => "underuse",
            (_, RateState::Increase) => "increase",
            (_, RateState::Hold) => "hold",
        });
        t.push("target_mbps", self.target.as_mbps_f64());
        t.push(
            "probe_mbps",
            self.probes
                .active()
                .map_or(f64::NAN, |c| c.rate.as_mbps_f64()),
        );
        t.push("delay_based_mbps", self.aimd.rate().as_mbps_f64());
        t.push("loss_based_mbps", self.loss.rate().as_mbps_f64());
        t.push(
            "received_mbps",
            self.received.rate().map_or(f64::NAN, |r| r.as_mbps_f64()),
        );
        t.push(
            "link_capacity_mbps",
            self.aimd.link_capacity_kbps().map_or(f64::NAN, |k| k / 1e3),
        );
        t.push("trend", self.trend.trend());
        t.push("modified_trend", self.trend.modified_trend());
        t.push("threshold", self.trend.threshold());
        t.push("loss_fraction", self.loss.loss_fraction());
        t
    }
}

#[cfg(test)]
mod tests;
