//! PIBES (Heimbach, Guo, Ngan, Lee: "PIBES – A Competing-Flow-Aware Protocol for Real-Time Video
//! Applications"), the sender's rate control and frame scheduler with the receiver's estimator:
//!
//! - [`burst`]: eq. (1) burst size; the first n_b packets of a frame leave back to back, the rest
//!   are paced at the latest smoothed burst inter-arrival time d (§III-A);
//! - [`receiver`]: eq. (2)/(4) EWMAs d and d~ and the competing-flow flag (§III-A, §III-B);
//! - [`share`]: the share FSM of Fig. 4 (§III-B);
//! - here: B_k = P / d (eq. 3) and R_k = max(R_min, min(s_k·B_k, R_max)) (eq. 5). The frame size
//!   F_c,k = ceil(R_k·T / P)·P (eq. 6, FEC included) is the encoder's: the simulator's video
//!   source computes it from the target of [`CongestionControl::media_control`].
//!
//! Frame boundaries come from [`CongestionControl::on_frame`]; the position of each packet in its
//! frame is counted from [`CongestionControl::on_sent`], so the pacing rate answered before each
//! packet is the burst rate inside a burst and P/d after it.
//!
//! The receiver half is a separate state machine ([`receiver::PibesReceiver`]). In a deployment
//! it runs at the receiver (the sender writes the frame number and position into each packet) and
//! returns d, d~ and c in ACKs. Here the controller runs it on the receiver timestamps it gets as
//! [`Feedback`] (arrival time of every packet, in packet order), joined with the slot it recorded
//! for each packet number when it left: the same information, arriving with the ACK that would
//! carry the receiver's report.
//!
//! The per-frame RTT of the FSM is the mean RTT of a frame's acknowledged packets, known once a
//! packet of a later frame is acknowledged (paths are FIFO); each FSM step uses the newest such
//! value against the one before, and holds when no new frame completed since the last step.
//! Ordering: the FSM step and the rate R_k are computed when frame k−1 is handed over (that call
//! is the frame clock), so the encoder reads R_k when it sizes frame k.

pub mod burst;
pub mod receiver;
pub mod share;

use crate::cc::{
    Calibration, CcContext, CongestionControl, HandoverState, MediaControl, Telemetry,
};
use crate::intent::Intent;
use crate::params::{self, Bound, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use burst::{FrameQueue, Slot, N_MAX, N_MIN};
use receiver::{PibesReceiver, Report, ALPHA, BETA};
use serde::{Deserialize, Serialize};
use share::{Mode, ShareFsm, ShareParams};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// Registry and scenario name.
pub const NAME: &str = "pibes";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "PIBES real-time video: burst+paced frames, inter-arrival bandwidth estimate, competing-flow share FSM";

/// §IV: R_min of the encoder's default bitrate range in this project's scenarios (the paper's
/// R_min and R_max are per experiment; the application's realtime_video intent replaces them).
pub const MIN_RATE: Rate = Rate::from_bps(500_000);
/// §IV: R_max of the default range; see [`MIN_RATE`].
pub const MAX_RATE: Rate = Rate::from_bps(8_000_000);
/// Rate before the first bandwidth estimate. Not given by the paper; 1 Mbit/s gives frames of
/// at least n_min packets of 1200 bytes at 30 fps, so the first frames carry a burst to measure.
pub const START_RATE: Rate = Rate::from_bps(1_000_000);
/// Burst packets leave back to back: spaced at this rate (line rate of a 10 GbE host).
pub const BURST_RATE: Rate = Rate::from_bps(10_000_000_000);
/// The window is only a safety bound (PIBES is rate based): this many round trips, of at least
/// [`WINDOW_MIN_RTT`], at the larger of the estimated capacity and the target rate...
pub const WINDOW_RTTS: f64 = 4.0;
/// The RTT the safety window assumes at least, and before the first RTT sample.
pub const WINDOW_MIN_RTT: Duration = Duration::from_millis(100);
/// ... and never fewer than this many packets.
pub const WINDOW_MIN_PACKETS: u64 = 16;
/// Largest burst size accepted (a sanity bound: a burst is sent at line rate, so a larger one
/// would be a queue-filling flood on any realistic bottleneck buffer).
const MAX_BURST: f64 = 1000.0;
/// A pair of burst packets is the least that gives an inter-arrival sample.
const MIN_BURST: f64 = 2.0;
/// Highest rate a scenario may give, kbit/s (100 Gbit/s).
const MAX_RATE_KBPS: f64 = 100e6;
/// Sent packets remembered for joining feedback (older ones were lost or never reported).
const SLOT_HISTORY: usize = 1 << 16;

/// Registers PIBES under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<PibesParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct PibesParams {
    #[serde(default = "d_start")]
    start_rate_kbps: f64,
    #[serde(default = "d_min")]
    min_rate_kbps: f64,
    #[serde(default = "d_max")]
    max_rate_kbps: f64,
    #[serde(default = "d_s_max")]
    s_max: f64,
    #[serde(default = "d_delta")]
    delta: f64,
    #[serde(default = "d_s_share")]
    s_share: f64,
    /// Absent: [`share::S_MIN`], or s_max / flows_sharing when that is given.
    #[serde(default)]
    s_min: Option<f64>,
    #[serde(default = "d_delta_plus")]
    delta_plus: f64,
    #[serde(default = "d_delta_minus")]
    delta_minus: f64,
    #[serde(default = "d_alpha")]
    alpha: f64,
    #[serde(default = "d_beta")]
    beta: f64,
    /// Replaced by `burst` when that is given (then not with n_min or n_max).
    #[serde(default = "d_n_min")]
    n_min: u32,
    #[serde(default = "d_n_max")]
    n_max: u32,
    /// A fixed burst size: n_min = n_max = burst, so every frame of at least `burst` packets
    /// starts with exactly `burst` back-to-back packets (the paper's Figs. 6–8 vary it).
    #[serde(default)]
    burst: Option<u32>,
    /// §IV-B g): N PIBES flows known to share the bottleneck: s_min = s_max / N.
    #[serde(default)]
    flows_sharing: Option<u32>,
}

impl ParamTable for PibesParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "min_rate_kbps",
            Kind::Number,
            "R_min (eq. 5), the encoder's lowest bitrate, kbit/s (a realtime_video intent replaces it)",
            "PIBES §IV, this project's default encoder range",
        )
        .range(1.0, MAX_RATE_KBPS),
        ParamSpec::new(
            "max_rate_kbps",
            Kind::Number,
            "R_max (eq. 5), the encoder's highest bitrate, kbit/s (a realtime_video intent replaces it)",
            "PIBES §IV, this project's default encoder range",
        )
        .bounds(Bound::Param("min_rate_kbps"), Bound::At(MAX_RATE_KBPS)),
        ParamSpec::new(
            "start_rate_kbps",
            Kind::Number,
            "target before the first bandwidth estimate, kbit/s (clamped to [R_min, R_max])",
            "polycc: not in the paper; gives the first frames a burst of n_min packets at 30 fps",
        )
        .range(1.0, MAX_RATE_KBPS),
        ParamSpec::new(
            "s_max",
            Kind::Number,
            "share of the estimated capacity targeted alone (s_0, the climb's ceiling)",
            "PIBES §IV",
        )
        .range(0.01, 1.0),
        ParamSpec::new(
            "s_share",
            Kind::Number,
            "share on detecting a competing flow, and the ceiling while competing",
            "PIBES §IV",
        )
        .bounds(Bound::At(0.01), Bound::Param("s_max")),
        ParamSpec::new(
            "s_min",
            Kind::Number,
            "floor of the share while competing (not with flows_sharing)",
            "PIBES §IV",
        )
        .bounds(Bound::At(0.0), Bound::Param("s_share"))
        .when_absent("0.5 (PIBES §IV), or s_max / flows_sharing"),
        ParamSpec::new(
            "flows_sharing",
            Kind::Integer,
            "N PIBES flows known to share the bottleneck: s_min = s_max / N (not with s_min)",
            "PIBES §IV-B g)",
        )
        .range(1.0, 1000.0)
        .when_absent("s_min applies"),
        ParamSpec::new(
            "delta",
            Kind::Number,
            "Δ: the share's climb per frame while alone",
            "PIBES §IV",
        )
        .range(0.0, 1.0),
        ParamSpec::new(
            "delta_plus",
            Kind::Number,
            "Δ+: the climb per frame while competing and the per-frame RTT falls",
            "PIBES §IV",
        )
        .range(0.0, 1.0),
        ParamSpec::new(
            "delta_minus",
            Kind::Number,
            "Δ−: the drop per frame while competing and the per-frame RTT grows",
            "PIBES §IV",
        )
        .range(0.0, 1.0),
        ParamSpec::new(
            "alpha",
            Kind::Number,
            "α: weight of a new sample in the receiver's EWMAs d and d~ (eq. 2/4)",
            "PIBES §IV-A, Fig. 7",
        )
        .range(0.001, 1.0),
        ParamSpec::new(
            "beta",
            Kind::Number,
            "β: relative excess of d~ over d that flags a competing flow",
            "PIBES §III-B",
        )
        .range(0.0, 10.0),
        ParamSpec::new(
            "n_min",
            Kind::Integer,
            "smallest burst, packets (eq. 1; not with burst)",
            "PIBES §IV-A",
        )
        .range(MIN_BURST, MAX_BURST),
        ParamSpec::new(
            "n_max",
            Kind::Integer,
            "largest burst, packets (eq. 1; not with burst)",
            "PIBES §IV-A",
        )
        .bounds(Bound::Param("n_min"), Bound::At(MAX_BURST)),
        ParamSpec::new(
            "burst",
            Kind::Integer,
            "a fixed burst size: n_min = n_max = burst (the paper's Figs. 6-8 vary it)",
            "PIBES §IV-A",
        )
        .range(MIN_BURST, MAX_BURST)
        .when_absent("n_min and n_max apply"),
    ];
}

fn kbps(r: Rate) -> f64 {
    r.as_bps() as f64 / 1e3
}
fn d_start() -> f64 {
    kbps(START_RATE)
}
fn d_min() -> f64 {
    kbps(MIN_RATE)
}
fn d_max() -> f64 {
    kbps(MAX_RATE)
}
fn d_s_max() -> f64 {
    share::S_MAX
}
fn d_delta() -> f64 {
    share::DELTA
}
fn d_s_share() -> f64 {
    share::S_SHARE
}
fn d_n_min() -> u32 {
    N_MIN
}
fn d_n_max() -> u32 {
    N_MAX
}
fn d_delta_plus() -> f64 {
    share::DELTA_PLUS
}
fn d_delta_minus() -> f64 {
    share::DELTA_MINUS
}
fn d_alpha() -> f64 {
    ALPHA
}
fn d_beta() -> f64 {
    BETA
}

/// Everything configurable, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PibesConfig {
    /// Target rate before the first bandwidth estimate, as [`START_RATE`].
    pub start: Rate,
    /// R_min (eq. 5), the encoder's lowest bitrate, as [`MIN_RATE`].
    pub min: Rate,
    /// R_max (eq. 5), the encoder's highest bitrate, as [`MAX_RATE`].
    pub max: Rate,
    /// The share FSM's parameters (§III-B, Fig. 4).
    pub share: ShareParams,
    /// α, the weight of a new sample in the receiver's EWMAs d and d~ (eq. 2/4), as
    /// [`receiver::ALPHA`].
    pub alpha: f64,
    /// β, the relative excess of d~ over d that flags a competing flow (§III-B), as
    /// [`receiver::BETA`].
    pub beta: f64,
    /// n_min, the smallest burst in packets (eq. 1), as [`burst::N_MIN`].
    pub n_min: u32,
    /// n_max, the largest burst in packets (eq. 1), as [`burst::N_MAX`].
    pub n_max: u32,
}

impl Default for PibesConfig {
    fn default() -> Self {
        PibesConfig {
            start: START_RATE,
            min: MIN_RATE,
            max: MAX_RATE,
            share: ShareParams::default(),
            alpha: ALPHA,
            beta: BETA,
            n_min: N_MIN,
            n_max: N_MAX,
        }
    }
}

/// Builds PIBES from scenario parameters (rates in kbit/s, the share FSM's, α, β and the burst
/// size as `burst` or `n_min` / `n_max`), checking them against the declared schema and that
/// the alternatives are not both given.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let q: PibesParams = params::parse(NAME, p)?;
    let given = |k: &str| p.contains_key(k);
    let not_both = |message: &str| CcError::BadParams {
        name: NAME.into(),
        message: message.into(),
    };
    if given("s_min") && given("flows_sharing") {
        return Err(not_both(
            "give s_min or flows_sharing (s_min = s_max / flows_sharing), not both",
        ));
    }
    if given("burst") && (given("n_min") || given("n_max")) {
        return Err(not_both(
            "give burst (a fixed burst size) or n_min / n_max, not both",
        ));
    }
    let s_min = match (q.s_min, q.flows_sharing) {
        (Some(s), _) => s,
        (None, Some(n)) => q.s_max / f64::from(n),
        (None, None) => share::S_MIN,
    };
    // A derived floor must also lie below s_share.
    params::check_derived(NAME, &q, "s_min", s_min)?;
    let (n_min, n_max) = q.burst.map_or((q.n_min, q.n_max), |b| (b, b));
    let r = |k: f64| Rate::from_bps_f64(k * 1e3);
    let cfg = PibesConfig {
        start: r(q.start_rate_kbps),
        min: r(q.min_rate_kbps),
        max: r(q.max_rate_kbps),
        share: ShareParams {
            s_max: q.s_max,
            delta: q.delta,
            s_share: q.s_share,
            s_min,
            delta_plus: q.delta_plus,
            delta_minus: q.delta_minus,
        },
        alpha: q.alpha,
        beta: q.beta,
        n_min,
        n_max,
    };
    Ok(Box::new(Pibes::new(ctx, cfg)))
}

/// Mean RTT of the packets of one frame, accumulated as they are acknowledged.
#[derive(Clone, Copy, Debug)]
struct FrameRtt {
    frame: u64,
    sum_ns: u128,
    count: u64,
}

impl FrameRtt {
    fn mean(&self) -> Duration {
        Duration::from_nanos((self.sum_ns / u128::from(self.count.max(1))) as u64)
    }
}

/// The PIBES sender of one video flow, with the receiver's estimator run on its feedback.
pub struct Pibes {
    cfg: PibesConfig,
    /// P: bytes of a video packet on the wire.
    packet: Bytes,
    frames: FrameQueue,
    /// (packet number, slot) of the frame packets sent and not yet reported.
    slots: VecDeque<(u64, Slot)>,
    receiver: PibesReceiver,
    report: Report,
    fsm: ShareFsm,
    target: Rate,
    srtt: Option<Duration>,
    /// RTT being accumulated for the newest acknowledged frame, the last two complete ones, and
    /// whether the newest complete one is unused by the FSM.
    acking: Option<FrameRtt>,
    rtt_prev: Option<Duration>,
    rtt_last: Option<Duration>,
    rtt_fresh: bool,
}

impl Pibes {
    /// PIBES targeting `cfg.start` clamped to R_min..=R_max, with video packets of the context's
    /// MSS.
    pub fn new(ctx: &CcContext, cfg: PibesConfig) -> Self {
        Pibes {
            cfg,
            packet: ctx.mss,
            frames: FrameQueue::default(),
            slots: VecDeque::new(),
            receiver: PibesReceiver::new(cfg.alpha, cfg.beta),
            report: Report::default(),
            fsm: ShareFsm::new(cfg.share),
            target: cfg.start.clamp(cfg.min, cfg.max),
            srtt: None,
            acking: None,
            rtt_prev: None,
            rtt_last: None,
            rtt_fresh: false,
        }
    }

    /// Eq. (3): B = P / d, once the receiver has measured a burst.
    pub fn bandwidth_estimate(&self) -> Option<Rate> {
        let d = self.report.d.filter(|d| !d.is_zero())?;
        Some(Rate::from_bytes_over(self.packet, d))
    }

    /// The share s_k of the estimated capacity the flow targets (§III-B).
    #[cfg(test)]
    pub(crate) fn share(&self) -> f64 {
        self.fsm.share()
    }

    /// The receiver's latest report: d, d~ and the competing-flow flag c.
    #[cfg(test)]
    pub(crate) fn report(&self) -> Report {
        self.report
    }

    /// Eq. (5).
    fn rate_for(&self, s: f64) -> Rate {
        match self.bandwidth_estimate() {
            Some(b) => b.mul_f64(s).clamp(self.cfg.min, self.cfg.max),
            None => self.target,
        }
    }

    /// Pacing rate of the paced part: P / d, or the target rate before any estimate.
    fn paced_rate(&self) -> Rate {
        self.bandwidth_estimate().unwrap_or(self.target)
    }

    fn slot_of(&self, pn: u64) -> Option<Slot> {
        let i = self.slots.partition_point(|(p, _)| *p < pn);
        self.slots.get(i).filter(|(p, _)| *p == pn).map(|(_, s)| *s)
    }

    fn on_frame_rtt(&mut self, frame: u64, rtt: Duration) {
        match &mut self.acking {
            Some(a) if a.frame == frame => {
                a.sum_ns += u128::from(rtt.as_nanos());
                a.count += 1;
            }
            Some(a) if a.frame > frame => {} // a late packet of a frame already closed
            _ => {
                if let Some(done) = self.acking.take() {
                    self.rtt_prev = self.rtt_last;
                    self.rtt_last = Some(done.mean());
                    self.rtt_fresh = true;
                }
                self.acking = Some(FrameRtt {
                    frame,
                    sum_ns: u128::from(rtt.as_nanos()),
                    count: 1,
                });
            }
        }
    }

    /// The trend rtt_k vs rtt_{k−1} if a frame completed since the last FSM step.
    fn take_rtt_trend(&mut self) -> Option<Ordering> {
        if !self.rtt_fresh {
            return None;
        }
        self.rtt_fresh = false;
        match (self.rtt_last, self.rtt_prev) {
            (Some(now), Some(before)) => Some(now.cmp(&before)),
            _ => None,
        }
    }
}

impl CongestionControl for Pibes {
    fn name(&self) -> &str {
        NAME
    }

    fn on_frame(&mut self, _now: Time, frame: &FrameInfo) {
        self.frames
            .push(frame.index, frame.packets, self.cfg.n_min, self.cfg.n_max);
        let trend = self.take_rtt_trend();
        let s = self.fsm.step(self.report.competing, trend);
        self.target = self.rate_for(s);
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        if sent.is_retransmission {
            return;
        }
        if let Some(slot) = self.frames.on_sent() {
            self.packet = sent.bytes;
            if self.slots.len() >= SLOT_HISTORY {
                self.slots.pop_front();
            }
            self.slots.push_back((sent.pn, slot));
        }
    }

    fn wants_feedback(&self) -> bool {
        true
    }

    fn on_feedback(&mut self, _now: Time, feedback: &Feedback<'_>) {
        for a in feedback.arrivals {
            while self.slots.front().is_some_and(|(pn, _)| *pn < a.pn) {
                self.slots.pop_front();
            }
            if let Some(&(pn, slot)) = self.slots.front() {
                if pn == a.pn {
                    self.receiver.on_arrival(slot, a.arrival_time);
                    self.slots.pop_front();
                }
            }
        }
        self.report = self.receiver.report();
    }

    fn wants_packet_detail(&self) -> bool {
        true
    }

    fn on_packet_acked(&mut self, _now: Time, packet: &PacketOutcome) {
        if let (Some(slot), Some(rtt)) = (self.slot_of(packet.pn), packet.rtt) {
            self.on_frame_rtt(slot.frame, rtt);
        }
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if ack.rtt.has_sample {
            self.srtt = Some(ack.rtt.smoothed);
        }
    }

    /// Losses are repaired by FEC (and retransmission as a last resort, by the transport); the
    /// rate reacts to capacity, competition and the RTT trend only (§III-B).
    fn on_loss(&mut self, _now: Time, _loss: &LossEvent) {}

    fn cwnd(&self) -> Bytes {
        let rtt = self.srtt.unwrap_or(WINDOW_MIN_RTT).max(WINDOW_MIN_RTT);
        let rate = self.paced_rate().max(self.target);
        let bytes = rate.bytes_in(rtt) as f64 * WINDOW_RTTS;
        (bytes as Bytes).max(WINDOW_MIN_PACKETS * self.packet)
    }

    fn pacing_rate(&self) -> Option<Rate> {
        let paced = match self.frames.next() {
            Some(slot) => slot.paced_gap_after(),
            None => true, // not a frame packet (a retransmission, or no frames at all)
        };
        Some(if paced {
            self.paced_rate().max(Rate::from_bps(1))
        } else {
            BURST_RATE
        })
    }

    /// The burst of each frame measures the bandwidth and each frame steps the share FSM.
    fn needs_media_frames(&self) -> bool {
        true
    }

    /// R_k for the encoder, with the competing-flow flag c of the latest receiver report.
    fn media_control(&self) -> Option<MediaControl> {
        Some(MediaControl {
            target_bitrate: self.target,
            competing: Some(self.report.competing),
        })
    }

    fn set_intent(&mut self, _now: Time, intent: &Intent) {
        if let Intent::RealtimeVideo { min_rate, max_rate } = *intent {
            self.cfg.min = min_rate;
            self.cfg.max = max_rate.max(min_rate);
            self.target = self.target.clamp(self.cfg.min, self.cfg.max);
        }
    }

    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        if let Some(r) = c.pacing_rate {
            self.target = r.clamp(self.cfg.min, self.cfg.max);
        }
    }

    fn handover_state(&self) -> HandoverState {
        HandoverState {
            cwnd: self.cwnd(),
            ssthresh: None,
            pacing_rate: Some(self.target),
            bandwidth_estimate: self.bandwidth_estimate(),
            ..HandoverState::default()
        }
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(match self.fsm.mode() {
            Mode::Alone => "alone",
            Mode::Competing => "competing",
        });
        t.push("share", self.fsm.share());
        t.push("competing", if self.report.competing { 1.0 } else { 0.0 });
        t.push("target_mbps", self.target.as_mbps_f64());
        t.push(
            "bw_estimate_mbps",
            self.bandwidth_estimate()
                .map_or(f64::NAN, |b| b.as_mbps_f64()),
        );
        let ms = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_millis_f64());
        t.push("d_ms", ms(self.report.d));
        t.push("d_tilde_ms", ms(self.report.d_tilde));
        t.push("frame_rtt_ms", ms(self.rtt_last));
        // Cumulative counts (a window's share is the difference of its ends): how often, and by
        // how many slots, competitors' packets stretched a paced gap (receiver::STRETCHED).
        t.push("paced_samples", self.receiver.paced_samples as f64);
        t.push("paced_stretched", self.receiver.paced_stretched as f64);
        t.push("paced_stretch_sum", self.receiver.paced_stretch_sum);
        t
    }
}

#[cfg(test)]
mod tests;
