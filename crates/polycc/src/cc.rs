//! The interface every congestion-control algorithm and every policy implements.
//!
//! A controller is a pure state machine: the transport feeds it events stamped with `now` and
//! reads back a congestion window and, optionally, a pacing rate and a media bitrate. Policies
//! (Janus, PolyCC fusion) implement the same trait around other controllers, so they compose.

use crate::estimators::rtt::RttSnapshot;
use crate::intent::Intent;
use crate::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};

/// RFC 9002 §7.2 kMinimumWindow: no controller may let its window fall below 2 datagrams.
pub const MIN_WINDOW_PACKETS: u64 = 2;

/// What a controller is told when it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcContext {
    /// Maximum datagram size in bytes (the unit of "one packet" for window arithmetic).
    pub mss: Bytes,
    /// Initial window in bytes.
    pub initial_cwnd: Bytes,
    /// Creation time.
    pub now: Time,
    /// Seed for controllers that randomise (BBR's gain-cycle phase, PCC's trial order). The
    /// transport gives each flow its own, derived from the run's seed, so runs are reproducible
    /// and flows built at the same instant still differ.
    pub seed: u64,
}

impl CcContext {
    /// RFC 9002 §7.2 initial window min(10·mss, max(14720, 2·mss)); with the Linux/ns-3 default of
    /// 10 segments this is the same for MSS ≤ 1472.
    pub fn new(mss: Bytes) -> Self {
        CcContext {
            mss,
            initial_cwnd: initial_window(mss),
            now: Time::ZERO,
            seed: 0,
        }
    }

    /// The smallest window any controller may hold: [`MIN_WINDOW_PACKETS`] datagrams of this
    /// context's MSS, in bytes.
    pub fn min_window(&self) -> Bytes {
        MIN_WINDOW_PACKETS * self.mss
    }
}

/// RFC 9002 §7.2 initial window.
pub fn initial_window(mss: Bytes) -> Bytes {
    (10 * mss).min(14_720u64.max(2 * mss))
}

/// Values a policy writes into a running controller. Fields left `None` are not touched; each
/// controller applies what its model has (a window-based CCA ignores `pacing_rate`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Calibration {
    /// Congestion window to take, in bytes.
    pub cwnd: Option<Bytes>,
    /// Slow-start threshold to take, in bytes (Linux `snd_ssthresh`); ignored by controllers
    /// without one.
    pub ssthresh: Option<Bytes>,
    /// Pacing rate to take, for controllers that pace.
    pub pacing_rate: Option<Rate>,
    /// A new upper bound on the window (Linux `snd_cwnd_clamp`), or its removal.
    pub cwnd_clamp: Option<ClampChange>,
}

/// A policy's change to a controller's window clamp: the bound holds until the next change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClampChange {
    /// Bound the window at this many bytes.
    To(Bytes),
    /// Remove the bound.
    Remove,
}

impl ClampChange {
    /// The change that leaves `bound` in force (`None`: unbounded).
    pub fn to_bound(bound: Option<Bytes>) -> Self {
        bound.map_or(ClampChange::Remove, ClampChange::To)
    }

    /// The bound in force after the change (`None`: unbounded).
    pub fn bound(self) -> Option<Bytes> {
        match self {
            ClampChange::To(b) => Some(b),
            ClampChange::Remove => None,
        }
    }
}

/// What a controller knows that the next one should inherit on a hand-over, as Linux
/// `tcp_set_congestion_control` keeps the socket's window, RTT and rate state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HandoverState {
    /// The predecessor's congestion window in bytes (Linux keeps `snd_cwnd`).
    pub cwnd: Bytes,
    /// Its slow-start threshold in bytes, `None` if it has none (Linux keeps `snd_ssthresh`).
    pub ssthresh: Option<Bytes>,
    /// Its pacing rate, `None` if it leaves pacing to the transport.
    pub pacing_rate: Option<Rate>,
    /// Its estimate of the path's bottleneck bandwidth (BBR's max filter, Westwood's BWE), so a
    /// model-based successor need not start its search from nothing.
    pub bandwidth_estimate: Option<Rate>,
    /// The transport's RTT estimator state (RFC 9002 §5); Linux keeps `srtt_us` and `rttvar_us`
    /// on the socket. A window-only controller leaves it default and the policy fills it in.
    pub rtt: RttSnapshot,
    /// Bytes in flight at the hand-over, filled in by the policy from the transport's last event.
    pub in_flight: Bytes,
}

/// What a real-time media controller tells the application's encoder, read by the media source
/// before it encodes each frame ([`CongestionControl::media_control`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MediaControl {
    /// The bitrate the encoder should produce; the source clamps it to its own range.
    pub target_bitrate: Rate,
    /// Whether the controller currently sees a competing flow on its bottleneck (PIBES §III-B,
    /// the flag c); `None` from a controller that does not detect competition.
    pub competing: Option<bool>,
}

/// Up to [`Telemetry::CAPACITY`] named numbers a controller exposes for recording, with a short
/// state name. Fixed size so that sampling it never allocates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Telemetry {
    /// The controller's state or phase, e.g. CUBIC's `"slow_start"` or BBR's `"probe_bw"`.
    pub state: &'static str,
    len: usize,
    entries: [(&'static str, f64); Telemetry::CAPACITY],
}

impl Telemetry {
    /// Room for PolyCC's pool of eight members (a window and a rate each, plus three values of
    /// its own); the record is only built when the transport samples it.
    pub const CAPACITY: usize = 24;

    /// An empty record in state `state`.
    pub fn new(state: &'static str) -> Self {
        Telemetry {
            state,
            ..Telemetry::default()
        }
    }

    /// Adds one value; values past the capacity are dropped (a controller's own choice of keys
    /// is static, so tests catch an overflow).
    pub fn push(&mut self, name: &'static str, value: f64) {
        debug_assert!(
            self.len < Self::CAPACITY,
            "telemetry capacity exceeded at {name}"
        );
        if self.len < Self::CAPACITY {
            self.entries[self.len] = (name, value);
            self.len += 1;
        }
    }

    /// The values pushed so far, as (name, value) in push order.
    pub fn entries(&self) -> &[(&'static str, f64)] {
        &self.entries[..self.len]
    }

    /// The first value pushed under `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.entries()
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

/// The congestion-control interface. All methods take `now` from the caller; none may block.
///
/// # Event order
///
/// Every transport that drives a controller keeps one order (the `polycc-transport` crate
/// implements it, and the simulator drives every flow through that crate):
///
/// 1. [`Self::on_sent`] once per packet counted in flight, after it is counted.
/// 2. Per ACK that newly acknowledges something: [`Self::on_packet_acked`] per packet (with
///    [`Self::wants_packet_detail`]), [`Self::on_feedback`] (with [`Self::wants_feedback`] and
///    receiver timestamps), then the losses this ACK reveals — [`Self::on_packet_lost`] per
///    packet and one [`Self::on_loss`] — and last one [`Self::on_ack`]. Losses always come just
///    before the ACK that declared them (RFC 9002 Appendix A.7), so a reduction is decided on
///    the state from before this ACK's growth; a policy may defer work from `on_loss` to the
///    `on_ack` that follows it.
/// 3. Losses found by the loss timer come alone: `on_loss` with no `on_ack` after it.
/// 4. Probe timeouts and spurious losses are not reported; persistent congestion is a flag of
///    the [`LossEvent`] that declares it.
/// 5. [`Self::on_timer`] at or after [`Self::next_timer`], never inside another event.
pub trait CongestionControl: Send {
    /// Registry name of the algorithm.
    fn name(&self) -> &str;

    /// The connection's handshake (TCP's SYN and SYN-ACK) completed with RTT sample `rtt`,
    /// before any data was sent. A controller that starts from the path's RTT takes it here, as
    /// Linux's controllers are initialised after the handshake (BBR's initial pacing rate and
    /// min RTT, `bbr_init`); transports without a handshake sample never call it.
    fn on_handshake(&mut self, _now: Time, _rtt: Duration) {}
    /// A packet left, already counted in `sent.in_flight`.
    fn on_sent(&mut self, _now: Time, _sent: &SentPacket) {}
    /// An ACK newly acknowledged packets; it comes after the losses it revealed, and
    /// `ack.in_flight` counts neither its packets nor those losses.
    fn on_ack(&mut self, now: Time, ack: &AckEvent);
    /// `on_ack`, then the window after it. PolyCC's window fusion reads every member's window
    /// after each ACK; a controller that does its ACK work here (and has `on_ack` call it)
    /// saves the pool a second dispatch per member and ACK (BENCHMARKS.md, per-ACK cost).
    fn on_ack_cwnd(&mut self, now: Time, ack: &AckEvent) -> Bytes {
        self.on_ack(now, ack);
        self.cwnd()
    }
    /// Packets declared lost by one loss-detection pass (RFC 9002 §6.1), after the
    /// [`Self::on_packet_lost`] of each and, when an ACK revealed them, just before that ACK's
    /// [`Self::on_ack`]. `loss.in_flight` no longer counts them.
    fn on_loss(&mut self, now: Time, loss: &LossEvent);
    /// Receiver-reported arrivals; called only when [`Self::wants_feedback`] is true.
    fn on_feedback(&mut self, _now: Time, _feedback: &Feedback<'_>) {}
    /// Whether the controller wants receiver timestamps ([`Self::on_feedback`]); transports
    /// collect and report them only for controllers that do. Fixed for the controller's life.
    fn wants_feedback(&self) -> bool {
        false
    }
    /// One newly acknowledged packet, before the [`Self::on_ack`] of its ACK; called only when
    /// [`Self::wants_packet_detail`] is true.
    fn on_packet_acked(&mut self, _now: Time, _packet: &PacketOutcome) {}
    /// One packet declared lost, before the [`Self::on_loss`] of its detection pass; called only
    /// when [`Self::wants_packet_detail`] is true.
    fn on_packet_lost(&mut self, _now: Time, _packet: &PacketOutcome) {}
    /// Whether the controller needs the per-packet outcomes ([`Self::on_packet_acked`],
    /// [`Self::on_packet_lost`]) besides the aggregate events; off by default so that transports
    /// skip the per-packet calls. Fixed for the controller's life.
    fn wants_packet_detail(&self) -> bool {
        false
    }
    /// A real-time media source produced a frame whose packets are queued behind those already
    /// waiting to be sent. Frame-aware schedulers (PIBES's burst at frame start, the rest paced)
    /// count [`Self::on_sent`] calls of non-retransmissions against these sizes to know the
    /// position in its frame of the next packet, and answer [`Self::pacing_rate`] for the gap
    /// that follows it; the call is also the frame clock for per-frame state (PIBES's share FSM).
    /// Transports without frames never call it, and controllers that do not schedule frames
    /// ignore it (the default), so nothing else changes.
    fn on_frame(&mut self, _now: Time, _frame: &FrameInfo) {}
    /// Called at or after [`Self::next_timer`].
    fn on_timer(&mut self, _now: Time) {}
    /// When the controller next wants [`Self::on_timer`], or `None` for no timer. Any event may
    /// move it, so a transport reads it anew after each.
    fn next_timer(&self) -> Option<Time> {
        None
    }

    /// Bytes that may be in flight.
    fn cwnd(&self) -> Bytes;
    /// Pacing rate; `None` leaves pacing to the transport (cwnd / srtt with Linux's gains). The
    /// transport asks before each packet and spaces the next one by that packet's size at this
    /// rate, so a frame scheduler may answer per packet (a very high rate inside a burst).
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// True while the controller wants the transport to send padding (packets carrying no
    /// application data, at [`Self::pacing_rate`] and within [`Self::cwnd`]) whenever the
    /// application has nothing to send: WebRTC's bandwidth probes.
    fn wants_padding(&self) -> bool {
        false
    }
    /// Slow-start threshold in bytes (RFC 5681 §3.1), or `None` for a controller without one.
    fn ssthresh(&self) -> Option<Bytes> {
        None
    }
    /// True while the controller is in its start-up / slow-start phase.
    fn in_slow_start(&self) -> bool {
        self.ssthresh().is_some_and(|s| self.cwnd() < s)
    }
    /// Named values for time-series recording.
    fn telemetry(&self) -> Telemetry {
        Telemetry::default()
    }

    /// The application's intent, given once before the first packet when the flow has one and
    /// again at every change. Controllers that serve no intent ignore it.
    fn set_intent(&mut self, _now: Time, _intent: &Intent) {}

    /// Writes values from a policy into the controller.
    fn calibrate(&mut self, now: Time, c: &Calibration);
    /// Writes a window alone, exactly as `calibrate` with only `cwnd` set, and returns the
    /// window after the write (what `cwnd()` gives until the next event). PolyCC's write-back
    /// calls it on every ACK whose fused window differs from a member's, so a controller may
    /// give it a shorter path than the general calibration.
    fn calibrate_cwnd(&mut self, now: Time, cwnd: Bytes) -> Bytes {
        self.calibrate(
            now,
            &Calibration {
                cwnd: Some(cwnd),
                ..Calibration::default()
            },
        );
        self.cwnd()
    }
    /// State to hand to a successor controller.
    fn handover_state(&self) -> HandoverState {
        HandoverState {
            cwnd: self.cwnd(),
            ssthresh: self.ssthresh(),
            pacing_rate: self.pacing_rate(),
            ..HandoverState::default()
        }
    }
    /// Takes over a flow from a predecessor. The default keeps the window and threshold.
    fn adopt(&mut self, now: Time, from: &HandoverState) {
        self.calibrate(
            now,
            &Calibration {
                cwnd: Some(from.cwnd),
                ssthresh: from.ssthresh,
                pacing_rate: from.pacing_rate,
                cwnd_clamp: None,
            },
        );
    }

    /// The encoder's target for a real-time media source, or `None` for a byte-stream
    /// controller (the default). A media source asks before it encodes each frame, after the
    /// [`Self::on_frame`] of the previous one, and sizes the frame from `target_bitrate` (the
    /// simulator's source also records `competing` with the frame). Policies answer for the
    /// controller in charge of the flow (PolyCC's pilot, Janus' active stage), so a wrapped or
    /// renamed media controller drives its source as it does alone.
    fn media_control(&self) -> Option<MediaControl> {
        None
    }

    /// Whether the controller needs the frames of a real-time media source ([`Self::on_frame`])
    /// to work. False by default: a controller that only sets a window or a rate works on any
    /// traffic (GCC on a bulk source sends at its target rate and fills the path). True for a
    /// frame scheduler whose rate moves only at frame boundaries: PIBES measures the bandwidth
    /// from each frame's burst and steps its share FSM once per frame, so without frames it
    /// stays at its start rate (1 Mbit/s on a 10 Mbit/s path, with no error). A transport that
    /// offers no frames must refuse such a controller. A policy answers true if any controller
    /// it runs does: a member without frames feeds the pool a value that never moves (a PolyCC
    /// rate pool fusing with `min` then runs at the start rate), and Janus may hand it the
    /// flow. The answer is fixed for the controller's life.
    fn needs_media_frames(&self) -> bool {
        false
    }

    /// Whether a policy may keep writing values into this controller ([`Self::calibrate`],
    /// [`Self::calibrate_cwnd`], as PolyCC's write-back does on every ACK) and expect it to go
    /// on from them. True by default. False for a controller that learns from its own sending:
    /// the PCC family reads a written rate as the start of a new search (its utility trials),
    /// so calibrated on every event it never backs off and the pool floods the path. Policies
    /// that calibrate continually refuse such a controller when they are built, naming it; a
    /// single hand-over ([`Self::adopt`]) and a window clamp are fine. A policy answers false
    /// if any controller it writes into does. The answer is fixed for the controller's life.
    fn accepts_calibration(&self) -> bool {
        true
    }
}
