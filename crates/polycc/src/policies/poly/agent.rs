//! PolyCC's congestion controller agent (§2, Fig. 2): runs every member of the pool on the flow,
//! fuses their values and writes the result back, and lets the pilot drive.
//!
//! Per event (ACK, loss, receiver feedback, timer, intent, outside calibration):
//! 1. every member sees it (feedback and per-packet detail go to the members that ask for them;
//!    a timer fires the members that are due);
//! 2. each member's own value is read in the fused quantity (window, or rate; conversions in
//!    [`super::members`]);
//! 3. the fusion function computes the calibrated value (§2 step 3);
//! 4. it is written back to every member (`write_back = "all"`, the paper's §2 step 4) or to the
//!    pilot only (`"pilot"`), and the sender follows the pilot: the agent's window is the
//!    pilot's and, for rate fusion, its pacing rate is the fused rate.
//!
//! `on_sent` reaches every member but does not re-fuse: send events do not carry feedback, and
//! the next ACK or loss re-fuses anyway. Re-fusing per send would double the agent's cost.
//! For window fusion by `max` / `min` a loss or feedback event is fused with the ACK that
//! follows it (one fusion per feedback, `Poly::fuse_after_feedback`).
//! With `fuse_every = "rtt"` ([`Every::Rtt`]) steps 2–4 run once per measurement window instead
//! of per event.
//!
//! Per-event cost is kept to what the fusion needs: only the fused quantity is read from each
//! member (the other one is derived when telemetry is sampled), the target is derived only for
//! a fusion that reads it, a member is calibrated only when the fused value differs from its
//! own, and the measurement windows are kept only when a rule, a BDP target or per-RTT fusion
//! uses them.
//!
//! A rule of the filter may change the pilot at the close of a measurement window: the new
//! pilot, which has run on the flow all along, takes it over through the same hand-over as
//! Janus' switch ([`crate::policies::handover`]) from the old pilot's state.

use super::filter::Filter;
use super::fusion::{Every, Fusion, FusionInput, Pick};
use super::members::{Member, Quantity};
use super::signals::Signals;
use super::telemetry;
use crate::cc::{
    Calibration, CcContext, CongestionControl, HandoverState, MediaControl, Telemetry,
};
use crate::intent::Intent;
use crate::policies::handover::{self, FlowView, Overrides};
use crate::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};

/// The target x* of `closest` fusion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// A fixed value in the fused quantity's unit (bytes, or bit/s).
    Given(f64),
    /// The BDP estimate: the ten-window max-filtered bandwidth (BBR's) times the transport's
    /// min RTT, or that bandwidth for rate fusion.
    Bdp,
    /// The intent's target rate (bandwidth guarantee), or for window fusion that rate · srtt.
    Intent,
}

/// Which members receive the fused value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteBack {
    /// Every member (§2 step 4: "updates the windows of all CCAs").
    All,
    /// The pilot only: copilots keep their own trajectories and only advise.
    Pilot,
}

impl WriteBack {
    /// The scenario spelling (`write_back = "all"` / `"pilot"`).
    pub fn name(self) -> &'static str {
        match self {
            WriteBack::All => "all",
            WriteBack::Pilot => "pilot",
        }
    }
}

/// Everything but the pool, validated by the builder.
pub struct AgentConfig {
    /// What is fused: windows or pacing rates (scenario key `on`).
    pub quantity: Quantity,
    /// The fusion function (§2 step 3; `fuse`).
    pub fusion: Box<dyn Fusion>,
    /// x* for a fusion that reads one (`target`, for `closest`).
    pub target: Target,
    /// Which members the fused value is written to (`write_back`).
    pub write_back: WriteBack,
    /// Pilot selection: fixed, or by `rules` (§2 "Pilot-Copilot Filter").
    pub filter: Filter,
    /// When the pool is fused (`fuse_every`).
    pub every: Every,
}

/// PolyCC's agent on one flow: the pool, the pilot, the fusion and the filter (the model is in
/// the module docs). It is itself a [`CongestionControl`], so a pool may hold another pool.
pub struct Poly {
    ctx: CcContext,
    members: Vec<Member>,
    pilot: usize,
    quantity: Quantity,
    fusion: Box<dyn Fusion>,
    target: Target,
    write_back: WriteBack,
    filter: Filter,
    every: Every,
    /// Whether the fusion reads a target (else none is derived).
    uses_target: bool,
    /// [`Fusion::picks`] of the fusion.
    picks: Option<Pick>,
    /// Whether measurement windows are kept: for rules, a BDP target or per-RTT fusion.
    track_signals: bool,
    /// The pick of a window fusion by max / min fused per event without measurement windows:
    /// `on_ack`'s single-pass hot path.
    fast_pick: Option<Pick>,
    /// A loss or feedback event was taken and its fusion waits for the ACK that follows it
    /// (`Poly::fuse_after_feedback`).
    fuse_pending: bool,
    /// The pilot's window as `on_ack`'s hot path left it (read there or by its write-back),
    /// valid while `pilot_fresh`: a sender reads the window right after each ACK, and the pilot
    /// cannot have changed since, so `cwnd()` returns it without asking the pilot again.
    /// Every other event that reaches the members clears `pilot_fresh`.
    pilot_cwnd: Bytes,
    pilot_fresh: bool,
    signals: Signals,
    flow: FlowView,
    intent: Option<Intent>,
    /// Scratch for the fusion input: each member's own value.
    values: Vec<f64>,

    /// Last fused value, after the floor (minimum window / 1 bit/s): the window for window
    /// fusion, the rate for rate fusion.
    fused_cwnd: Bytes,
    fused_rate: Rate,
    switches: u64,
}

impl Poly {
    /// `members` is the pool in order, the configured pilot first; it must not be empty.
    pub fn new(ctx: &CcContext, members: Vec<Member>, cfg: AgentConfig) -> Self {
        debug_assert!(!members.is_empty());
        let n = members.len();
        let uses_target = cfg.fusion.uses_target();
        let picks = cfg.fusion.picks();
        let track_signals = !cfg.filter.is_static()
            || cfg.every == Every::Rtt
            || (uses_target && cfg.target == Target::Bdp);
        let mut p = Poly {
            ctx: *ctx,
            members,
            pilot: 0,
            quantity: cfg.quantity,
            fusion: cfg.fusion,
            target: cfg.target,
            write_back: cfg.write_back,
            filter: cfg.filter,
            every: cfg.every,
            uses_target,
            picks,
            track_signals,
            fast_pick: match (cfg.quantity, cfg.every) {
                (Quantity::Cwnd, Every::Event) if !track_signals => picks,
                _ => None,
            },
            fuse_pending: false,
            pilot_cwnd: 0,
            pilot_fresh: false,
            signals: Signals::default(),
            flow: FlowView::default(),
            intent: None,
            values: vec![0.0; n],

            fused_cwnd: 0,
            fused_rate: Rate(1),
            switches: 0,
        };
        p.fuse(ctx.now);
        p
    }

    /// Index of the member driving the flow.
    pub fn pilot(&self) -> usize {
        self.pilot
    }
    /// The pool in order, the configured pilot first, each with its own value as of the last
    /// fusion.
    pub fn members(&self) -> &[Member] {
        &self.members
    }
    /// The last fused value: bytes for window fusion, bit/s for rate fusion.
    pub fn fused(&self) -> f64 {
        match self.quantity {
            Quantity::Cwnd => self.fused_cwnd as f64,
            Quantity::Rate => self.fused_rate.as_bps() as f64,
        }
    }
    /// How many times a rule has handed the flow to another pilot.
    pub fn pilot_switches(&self) -> u64 {
        self.switches
    }
    /// What this agent fuses: windows or pacing rates.
    pub fn quantity(&self) -> Quantity {
        self.quantity
    }
    /// When this agent fuses: per event or once per measurement window.
    pub fn every(&self) -> Every {
        self.every
    }

    fn target_value(&self) -> Option<f64> {
        let srtt = self.flow.rtt.smoothed;
        match (self.target, self.quantity) {
            (Target::Given(v), _) => Some(v),
            (Target::Bdp, q) => {
                let bw = self.signals.bandwidth()?;
                match q {
                    Quantity::Rate => Some(bw.as_bps() as f64),
                    Quantity::Cwnd if self.flow.rtt.has_sample => {
                        Some(bw.bytes_in(self.flow.rtt.min) as f64)
                    }
                    Quantity::Cwnd => None,
                }
            }
            (Target::Intent, q) => {
                let r = self.intent.as_ref()?.target_rate()?;
                match q {
                    Quantity::Rate => Some(r.as_bps() as f64),
                    Quantity::Cwnd => Some(r.bytes_in(srtt) as f64),
                }
            }
        }
    }

    /// Steps 2–4 of the module comment. Window fusion by `max` / `min` (the paper's and the
    /// common case) takes a short path of its own: one pass reading the members, one writing
    /// back, no fusion-trait call and no floating point; the rest goes through
    /// [`Poly::fuse_general`].
    #[inline]
    fn fuse(&mut self, now: Time) {
        self.fuse_pending = false;
        match (self.quantity, self.picks) {
            (Quantity::Cwnd, Some(pick)) => self.fuse_picked_window(now, pick),
            _ => self.fuse_general(now),
        }
    }

    /// [`Poly::fuse`] for window fusion by `max` or `min`.
    #[inline]
    fn fuse_picked_window(&mut self, now: Time, pick: Pick) {
        let fused = pick.among(self.members.iter_mut().map(Member::read_cwnd));
        self.write_picked_window(now, fused.unwrap_or(0));
    }

    /// Step 4 for window fusion by `max` or `min`: `cwnd` (before the floor) to the members
    /// that take the write-back.
    #[inline]
    fn write_picked_window(&mut self, now: Time, cwnd: Bytes) {
        let cwnd = self.floor_fused_window(cwnd);
        match self.write_back {
            WriteBack::All => {
                for m in &mut self.members {
                    m.write_cwnd(now, cwnd);
                }
            }
            WriteBack::Pilot => {
                self.members[self.pilot].write_cwnd(now, cwnd);
            }
        }
    }

    /// [`Poly::write_picked_window`] on `on_ack`'s hot path, where the pilot is the first
    /// member: `fast_pick` implies a filter without rules, so the configured pilot never
    /// changes. Returns the pilot's window after the write.
    #[inline]
    fn write_picked_window_hot(&mut self, now: Time, cwnd: Bytes) -> Bytes {
        debug_assert_eq!(self.pilot, 0);
        let cwnd = self.floor_fused_window(cwnd);
        let Some((pilot, copilots)) = self.members.split_first_mut() else {
            return cwnd;
        };
        let pilot_cwnd = pilot.write_cwnd(now, cwnd);
        if self.write_back == WriteBack::All {
            for m in copilots {
                m.write_cwnd(now, cwnd);
            }
        }
        pilot_cwnd
    }

    /// The fused window after the floor (minimum window), recorded as the last fused value.
    #[inline]
    fn floor_fused_window(&mut self, cwnd: Bytes) -> Bytes {
        let cwnd = cwnd.max(self.ctx.min_window());
        self.fused_cwnd = cwnd;
        cwnd
    }

    /// What `on_ack` does after the members took the ACK, outside the hot path: the
    /// measurement windows, the fusion and a rule's pilot change.
    #[inline(never)]
    fn after_ack_general(&mut self, now: Time, ack: &AckEvent) {
        let window = if self.track_signals {
            self.signals.on_ack(now, ack)
        } else {
            None
        };
        if self.every == Every::Event || window.is_some() {
            self.fuse(now);
        }
        if let Some(w) = window {
            if let Some(to) = self.filter.decide(self.pilot, &w, self.intent.as_ref()) {
                self.switch_pilot(now, to);
            }
        }
    }

    /// [`Poly::fuse`] for rate fusion and for fusions that are not a pick (closest, mean, user
    /// functions).
    #[inline(never)]
    fn fuse_general(&mut self, now: Time) {
        let min_window = self.ctx.min_window();
        let members = match self.write_back {
            WriteBack::All => 0..self.members.len(),
            WriteBack::Pilot => self.pilot..self.pilot + 1,
        };
        match self.quantity {
            Quantity::Cwnd => {
                for (v, m) in self.values.iter_mut().zip(self.members.iter_mut()) {
                    *v = m.read_cwnd() as f64;
                }
                let raw = self.call_fusion();
                let cwnd = (raw.min(u64::MAX as f64 / 2.0) as Bytes).max(min_window);
                self.fused_cwnd = cwnd;
                for m in &mut self.members[members] {
                    m.write_cwnd(now, cwnd);
                }
            }
            Quantity::Rate => {
                let srtt = self.flow.rtt.smoothed;
                for (v, m) in self.values.iter_mut().zip(self.members.iter_mut()) {
                    *v = m.read_rate(srtt);
                }
                let raw = self.call_fusion();
                let rate = Rate::from_bps_f64(raw).max(Rate(1));
                self.fused_rate = rate;
                let srtt = self.flow.rtt.has_sample.then_some(srtt);
                for m in &mut self.members[members] {
                    m.write_rate(now, rate, min_window, srtt);
                }
            }
        }
    }

    /// The fusion function on `values` (in the fused quantity's unit); a NaN, infinite or
    /// non-positive result (a user function's) falls back to the pilot's own value.
    fn call_fusion(&mut self) -> f64 {
        let input = FusionInput {
            quantity: self.quantity,
            values: &self.values,
            pilot: self.pilot,
            target: if self.uses_target {
                self.target_value()
            } else {
                None
            },
        };
        let raw = self.fusion.fuse(&input);
        if raw.is_finite() && raw > 0.0 {
            raw
        } else {
            self.values[self.pilot]
        }
    }

    /// After a loss or receiver-feedback event. A transport reports both while it processes an
    /// ACK, just before that ACK (the event-order contract on [`CongestionControl`]), so on the hot
    /// path (`fast_pick`) the ACK's fusion covers them: one fusion per feedback instead
    /// of two or three. Until then [`CongestionControl::cwnd`] already gives the fused window;
    /// the write-back waits for the ACK, or for the next send or timer when a timer declared
    /// the loss. Other fusions fuse now.
    fn fuse_after_feedback(&mut self, now: Time) {
        if self.fast_pick.is_some() {
            self.fuse_pending = true;
        } else {
            self.fuse_per_event(now);
        }
    }

    /// The fusion a loss declared by a timer left pending, at the send that follows it.
    #[cold]
    #[inline(never)]
    fn fuse_pending_now(&mut self, now: Time) {
        self.fuse(now);
    }

    /// The window the pending fusion will give the pilot (read-only; see
    /// `Poly::fuse_after_feedback`).
    #[cold]
    #[inline(never)]
    fn pending_window(&self) -> Bytes {
        let Some(pick) = self.fast_pick else {
            return self.members[self.pilot].cc.cwnd();
        };
        let fused = pick
            .among(self.members.iter().map(|m| m.cc.cwnd()))
            .unwrap_or(0);
        fused.max(self.ctx.min_window())
    }

    /// Fuses after an event that can change a member's value, when fusing per event.
    fn fuse_per_event(&mut self, now: Time) {
        if self.every == Every::Event {
            self.fuse(now);
        }
    }

    /// [`CongestionControl::cwnd`] when the pilot may have changed since the last ACK.
    #[inline(never)]
    fn cwnd_asked(&self) -> Bytes {
        if self.fuse_pending {
            return self.pending_window();
        }
        self.members[self.pilot].cc.cwnd()
    }

    fn switch_pilot(&mut self, now: Time, to: usize) {
        let state = handover::successor_state(
            &self.flow,
            self.members[self.pilot].cc.as_ref(),
            Overrides::default(),
        );
        self.members[to].cc.adopt(now, &state);
        self.pilot = to;
        self.switches += 1;
        self.fuse(now);
    }
}

impl CongestionControl for Poly {
    fn name(&self) -> &str {
        "poly"
    }

    /// Every member runs the flow from its start, so every member hears its handshake.
    fn on_handshake(&mut self, now: Time, rtt: Duration) {
        for m in &mut self.members {
            m.cc.on_handshake(now, rtt);
        }
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.pilot_fresh = false;
        if self.fuse_pending {
            self.fuse_pending_now(now);
        }
        self.flow.on_sent(sent);
        for m in &mut self.members {
            m.cc.on_sent(now, sent);
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.flow.on_ack(ack);
        self.fuse_pending = false;
        match self.fast_pick {
            // Hot path (window fusion by max / min, per event, no measurement windows): each
            // member takes the ACK and is read in the same pass, then the pool is written back.
            Some(pick) => {
                let members = self.members.iter_mut();
                let fused = pick.among(members.map(|m| m.ack_and_read_cwnd(now, ack)));
                self.pilot_cwnd = self.write_picked_window_hot(now, fused.unwrap_or(0));
                self.pilot_fresh = true;
            }
            None => {
                self.pilot_fresh = false;
                for m in &mut self.members {
                    m.cc.on_ack(now, ack);
                }
                self.after_ack_general(now, ack);
            }
        }
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.pilot_fresh = false;
        self.flow.on_loss(loss);
        if self.track_signals {
            self.signals.on_loss(loss);
        }
        for m in &mut self.members {
            m.cc.on_loss(now, loss);
        }
        self.fuse_after_feedback(now);
    }

    fn on_feedback(&mut self, now: Time, feedback: &Feedback<'_>) {
        self.pilot_fresh = false;
        for m in &mut self.members {
            if m.cc.wants_feedback() {
                m.cc.on_feedback(now, feedback);
            }
        }
        self.fuse_after_feedback(now);
    }
    fn wants_feedback(&self) -> bool {
        self.members.iter().any(|m| m.cc.wants_feedback())
    }
    fn on_packet_acked(&mut self, now: Time, packet: &PacketOutcome) {
        self.pilot_fresh = false;
        for m in &mut self.members {
            if m.cc.wants_packet_detail() {
                m.cc.on_packet_acked(now, packet);
            }
        }
    }
    fn on_packet_lost(&mut self, now: Time, packet: &PacketOutcome) {
        self.pilot_fresh = false;
        for m in &mut self.members {
            if m.cc.wants_packet_detail() {
                m.cc.on_packet_lost(now, packet);
            }
        }
    }
    fn wants_packet_detail(&self) -> bool {
        self.members.iter().any(|m| m.cc.wants_packet_detail())
    }

    /// Frames reach every member (a frame-aware member schedules from them); like `on_sent`,
    /// they carry no feedback, so the pool is not re-fused.
    fn on_frame(&mut self, now: Time, frame: &FrameInfo) {
        self.pilot_fresh = false;
        for m in &mut self.members {
            m.cc.on_frame(now, frame);
        }
    }

    fn on_timer(&mut self, now: Time) {
        self.pilot_fresh = false;
        let mut fired = std::mem::take(&mut self.fuse_pending);
        for m in &mut self.members {
            if m.cc.next_timer().is_some_and(|t| t <= now) {
                m.cc.on_timer(now);
                fired = true;
            }
        }
        if fired {
            self.fuse_per_event(now);
        }
    }
    fn next_timer(&self) -> Option<Time> {
        self.members.iter().filter_map(|m| m.cc.next_timer()).min()
    }

    #[inline]
    fn cwnd(&self) -> Bytes {
        if self.pilot_fresh {
            return self.pilot_cwnd;
        }
        self.cwnd_asked()
    }
    /// Rate fusion paces at the fused rate whatever the pilot's model; window fusion keeps the
    /// pilot's pacing.
    fn pacing_rate(&self) -> Option<Rate> {
        match self.quantity {
            Quantity::Rate => Some(self.fused_rate),
            Quantity::Cwnd => self.members[self.pilot].cc.pacing_rate(),
        }
    }
    fn media_control(&self) -> Option<MediaControl> {
        self.members[self.pilot].cc.media_control()
    }
    fn ssthresh(&self) -> Option<Bytes> {
        self.members[self.pilot].cc.ssthresh()
    }
    fn in_slow_start(&self) -> bool {
        self.members[self.pilot].cc.in_slow_start()
    }

    fn telemetry(&self) -> Telemetry {
        telemetry::record(
            &self.members,
            self.pilot,
            self.quantity,
            self.fused(),
            self.switches,
            self.flow.rtt.smoothed,
        )
    }

    /// Every member gets the intent (it may change their behaviour); an `intent` target or rule
    /// acts on it from this event on.
    fn set_intent(&mut self, now: Time, intent: &Intent) {
        self.pilot_fresh = false;
        self.intent = Some(*intent);
        for m in &mut self.members {
            m.cc.set_intent(now, intent);
        }
        self.fuse(now);
    }

    /// An outside policy's values reach every member (so the whole pool follows, e.g., a clamp);
    /// then the pool is re-fused.
    fn calibrate(&mut self, now: Time, c: &Calibration) {
        self.pilot_fresh = false;
        for m in &mut self.members {
            m.cc.calibrate(now, c);
        }
        self.fuse(now);
    }

    fn handover_state(&self) -> HandoverState {
        let mut s = self.flow.state_of(self.members[self.pilot].cc.as_ref());
        s.cwnd = self.cwnd();
        s.pacing_rate = self.pacing_rate();
        s
    }

    /// The whole pool takes the flow over.
    fn adopt(&mut self, now: Time, from: &HandoverState) {
        self.pilot_fresh = false;
        self.flow.adopt(from);
        for m in &mut self.members {
            m.cc.adopt(now, from);
        }
        self.fuse(now);
    }

    /// Every member sees the flow's frames, and each one's value is fused.
    fn needs_media_frames(&self) -> bool {
        self.members.iter().any(|m| m.cc.needs_media_frames())
    }

    /// An outside calibration reaches every member.
    fn accepts_calibration(&self) -> bool {
        self.members.iter().all(|m| m.cc.accepts_calibration())
    }
}
