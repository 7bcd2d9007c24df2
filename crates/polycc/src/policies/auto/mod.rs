//! `auto`: a zero-configuration policy that picks, per flow and online, the controller of the
//! pool that suits the path it measures, and tells why.
//!
//! The path is classified window by window ([`path_window`], [`regime`]): a clean path runs
//! Copa (full rate at a queue of a few packets, draining what a capacity drop leaves behind,
//! not responding to random loss); a clean path of long base RTT runs CUBIC, as Copa's window
//! swings there; random loss without a queue runs BBR v1, which does not respond to loss (on a
//! long path from the loss rate at which CUBIC's window no longer fills it, Mathis); a
//! standing queue it does not make (a buffer-filling competitor) runs CUBIC, which holds its
//! share against loss-based traffic, starting from the rate the flow measured; delay that comes
//! and goes within a round trip on ACKs that arrive bunched (ACK aggregation; not a receiver
//! that acknowledges every k-th packet, nor random loss, which comes first) runs CUBIC, whose
//! window does not depend on bandwidth or delay samples that aggregation spoils (PolyCC §3.1);
//! heavy loss at a full queue
//! (a competitor that ignores loss) runs BBR v1, which ignores it too. Roles served by the same
//! controller share its instance. An application intent, when given,
//! picks a specialist instead: Janus for a bandwidth guarantee, Copa for delay-sensitive
//! traffic, Copa held in its default mode for a scavenger ([`SCAVENGER_DELTA`]).
//!
//! A change hands the flow to a fresh instance of the chosen controller with the running one's
//! window, threshold, RTT state and bytes in flight ([`crate::policies::handover`]), as Linux's
//! `tcp_set_congestion_control` keeps them on the socket; only the running controller sees
//! events. Telemetry: `member` (the role below), `reason` (the regime, or the intent), the
//! regime's evidence, and the running controller's own values; `cc_state` is the running
//! controller's state.
//!
//! Scenario: `cca = "auto"`, or a table overriding any role's controller, e.g.
//! `cca = { name = "auto", clean = "copa" }`.

pub mod path_window;
pub mod refill;
pub mod regime;

use crate::cc::{
    Calibration, CcContext, CongestionControl, HandoverState, MediaControl, Telemetry,
    MIN_WINDOW_PACKETS,
};
use crate::intent::Intent;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::policies::handover::{self, FlowView, Overrides};
use crate::registry::{CcError, CcSpec, Params, Registry};
use crate::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use path_window::PathWindows;
use refill::Refill;
use regime::{Classifier, Regime};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "auto";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str = "auto policy: picks per flow, online, Copa on a clean path, CUBIC on a long one, BBR v1 under random loss or against loss-blind competitors, CUBIC against buffer-filling competitors or ACK aggregation, or the intent's specialist (Janus, Copa, Copa in default mode for a scavenger); telemetry says why";

/// δ of the scavenger member, Copa kept in its default mode (`competitive = false`): one packet
/// queued per flow, half of the 2 of Copa's default δ = 0.5 (NSDI'18). Default-mode Copa cedes
/// to buffer-filling and to BBR traffic (the starvation Copa's competitive mode was added to
/// avoid), and its velocity fills a link a primary leaves idle within a few round trips, where
/// LEDBAT++'s additive increase (GAIN ≤ 1 packet a round trip) takes tens; the larger δ asks
/// less of a primary in the round trips before it yields. Chosen on the suite's tuning half
/// (`suite-scavenger`; SUITE.md, "A scavenger that fills the gaps").
pub const SCAVENGER_DELTA: f64 = 1.0;

/// The clean member's queue floor (Copa's `min_queue_ms`): RFC 9002 §6.1.2's timer granularity,
/// kGranularity = 1 ms. Copa's paper rule queues 1/δ = 2 packets, less than a millisecond above
/// 24 Mbit/s, which host timing noise and ACKs that each cover many packets (s2n-quic: every
/// 10th) hide: over real QUIC at 100 Mbit/s and 5 ms `auto` held 69-74 Mbit/s of CUBIC's 95,
/// and in the simulator 1 ms of ACK-path noise cost Copa 15 %. With the floor the flow holds a
/// millisecond of queue there instead (84-91 Mbit/s over real QUIC, 3 runs); below 24 Mbit/s
/// nothing changes. Chosen on the suite's tuning half (SUITE.md, "A millisecond of queue").
pub const CLEAN_MIN_QUEUE_MS: f64 = 1.0;

/// Registers `auto` under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<AutoParams>(), build);
}

/// What a member of `auto`'s pool is chosen for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// [`Regime::Clean`].
    Clean,
    /// [`Regime::RandomLoss`].
    RandomLoss,
    /// [`Regime::Competing`].
    Competing,
    /// [`Regime::AckAggregation`].
    AckAggregation,
    /// [`Regime::AggressiveCompetitor`].
    AggressiveCompetitor,
    /// [`Regime::LongPath`].
    LongPath,
    /// A bandwidth-guarantee (or video) intent with a target rate.
    BandwidthGuarantee,
    /// A delay-sensitive intent.
    DelaySensitive,
    /// A scavenger intent.
    Scavenger,
}

impl Role {
    /// The role's code in telemetry (`cc_member`); README lists them.
    pub fn code(self) -> f64 {
        match self {
            Role::Clean => 0.0,
            Role::RandomLoss => 1.0,
            Role::Competing => 2.0,
            Role::AckAggregation => 3.0,
            Role::AggressiveCompetitor => 4.0,
            Role::BandwidthGuarantee => 5.0,
            Role::DelaySensitive => 6.0,
            Role::Scavenger => 7.0,
            Role::LongPath => 8.0,
        }
    }

    /// The role's key in a scenario's `auto` table.
    fn key(self) -> &'static str {
        match self {
            Role::Clean => "clean",
            Role::RandomLoss => "random_loss",
            Role::Competing => "competing",
            Role::AckAggregation => "ack_aggregation",
            Role::AggressiveCompetitor => "aggressive_competitor",
            Role::BandwidthGuarantee => "bandwidth_guarantee",
            Role::DelaySensitive => "delay_sensitive",
            Role::Scavenger => "scavenger",
            Role::LongPath => "long_path",
        }
    }

    fn of(regime: Regime) -> Role {
        match regime {
            Regime::Clean => Role::Clean,
            Regime::RandomLoss => Role::RandomLoss,
            Regime::Competing => Role::Competing,
            Regime::AckAggregation => Role::AckAggregation,
            Regime::AggressiveCompetitor => Role::AggressiveCompetitor,
            Regime::LongPath => Role::LongPath,
        }
    }

    /// The intent's specialist, if the intent names one (bulk and video traffic go by the path).
    fn of_intent(intent: &Intent) -> Option<Role> {
        match intent {
            Intent::BandwidthGuarantee { .. } => Some(Role::BandwidthGuarantee),
            Intent::DelaySensitive => Some(Role::DelaySensitive),
            Intent::Scavenger => Some(Role::Scavenger),
            Intent::Bulk | Intent::RealtimeVideo { .. } => None,
        }
    }
}

/// `reason` codes above the regimes' (0–4): the intent chose.
const REASON_INTENT: f64 = 10.0;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct AutoParams {
    #[serde(default = "default_clean")]
    clean: CcSpec,
    #[serde(default = "default_random_loss")]
    random_loss: CcSpec,
    #[serde(default = "default_competing")]
    competing: CcSpec,
    #[serde(default = "default_ack_aggregation")]
    ack_aggregation: CcSpec,
    #[serde(default = "default_aggressive_competitor")]
    aggressive_competitor: CcSpec,
    #[serde(default = "default_long_path")]
    long_path: CcSpec,
    #[serde(default = "default_bandwidth_guarantee")]
    bandwidth_guarantee: CcSpec,
    #[serde(default = "default_delay_sensitive")]
    delay_sensitive: CcSpec,
    #[serde(default = "default_scavenger")]
    scavenger: CcSpec,
}

fn default_clean() -> CcSpec {
    let mut params = Params::new();
    params.insert("min_queue_ms".into(), CLEAN_MIN_QUEUE_MS.into());
    CcSpec::Table {
        name: "copa".into(),
        params,
    }
}
fn default_random_loss() -> CcSpec {
    CcSpec::named("bbr")
}
fn default_competing() -> CcSpec {
    CcSpec::named("cubic")
}
fn default_ack_aggregation() -> CcSpec {
    CcSpec::named("cubic")
}
fn default_aggressive_competitor() -> CcSpec {
    CcSpec::named("bbr")
}
fn default_long_path() -> CcSpec {
    CcSpec::named("cubic")
}
fn default_bandwidth_guarantee() -> CcSpec {
    CcSpec::named("janus")
}
fn default_delay_sensitive() -> CcSpec {
    CcSpec::named("copa")
}
fn default_scavenger() -> CcSpec {
    let mut params = Params::new();
    params.insert("competitive".into(), false.into());
    params.insert("delta".into(), SCAVENGER_DELTA.into());
    CcSpec::Table {
        name: "copa".into(),
        params,
    }
}

impl ParamTable for AutoParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "clean",
            Kind::Cca,
            "runs a path without competitor, aggregation or random loss",
            "auto (README)",
        ),
        ParamSpec::new(
            "random_loss",
            Kind::Cca,
            "runs a path that loses at least 1 % without a queue",
            "auto (README)",
        ),
        ParamSpec::new(
            "competing",
            Kind::Cca,
            "runs against a standing queue the flow does not make",
            "auto (README)",
        ),
        ParamSpec::new(
            "ack_aggregation",
            Kind::Cca,
            "runs a path whose delay varies within a round trip without a queue",
            "auto (README)",
        ),
        ParamSpec::new(
            "aggressive_competitor",
            Kind::Cca,
            "runs against a competitor that keeps losing at least 2 % at a full queue",
            "auto (README)",
        ),
        ParamSpec::new(
            "long_path",
            Kind::Cca,
            "runs a clean path of base RTT at least 150 ms",
            "auto (README)",
        ),
        ParamSpec::new(
            "bandwidth_guarantee",
            Kind::Cca,
            "runs a flow with a bandwidth-guarantee intent",
            "auto (README)",
        ),
        ParamSpec::new(
            "delay_sensitive",
            Kind::Cca,
            "runs a flow with a delay-sensitive intent",
            "auto (README)",
        ),
        ParamSpec::new(
            "scavenger",
            Kind::Cca,
            "runs a flow with a scavenger intent",
            "auto (README)",
        ),
    ];
}

impl AutoParams {
    fn spec(&self, role: Role) -> &CcSpec {
        match role {
            Role::Clean => &self.clean,
            Role::RandomLoss => &self.random_loss,
            Role::Competing => &self.competing,
            Role::AckAggregation => &self.ack_aggregation,
            Role::AggressiveCompetitor => &self.aggressive_competitor,
            Role::LongPath => &self.long_path,
            Role::BandwidthGuarantee => &self.bandwidth_guarantee,
            Role::DelaySensitive => &self.delay_sensitive,
            Role::Scavenger => &self.scavenger,
        }
    }
}

/// The roles, for checking every member builds.
const ROLES: [Role; 9] = [
    Role::Clean,
    Role::RandomLoss,
    Role::Competing,
    Role::AckAggregation,
    Role::AggressiveCompetitor,
    Role::LongPath,
    Role::BandwidthGuarantee,
    Role::DelaySensitive,
    Role::Scavenger,
];

/// Builds `auto` from scenario parameters; every role's controller is built once here, so a
/// bad name or parameter is refused before the run, naming the role.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    registry: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    Ok(Box::new(Auto::new(p, ctx, registry)?))
}

impl Auto {
    /// [`build`], unboxed.
    fn new(p: &Params, ctx: &CcContext, registry: &Registry) -> Result<Auto, CcError> {
        let params: AutoParams = params::parse(NAME, p)?;
        let build_role = |role: Role| {
            registry
                .build(params.spec(role), ctx)
                .map_err(|e| CcError::BadParams {
                    name: NAME.to_string(),
                    message: format!("{}: {e}", role.key()),
                })
        };
        let active = build_role(Role::Clean)?;
        let mut needs_frames = active.needs_media_frames();
        for role in ROLES.into_iter().filter(|r| *r != Role::Clean) {
            needs_frames |= build_role(role)?.needs_media_frames();
        }
        Ok(Auto {
            params,
            registry: registry.clone(),
            ctx: *ctx,
            active,
            role: Role::Clean,
            reason: Regime::Clean.code(),
            intent: None,
            windows: PathWindows::default(),
            classifier: Classifier::with_mss(ctx.mss),
            flow: FlowView::default(),
            last_window: None,
            switches: 0,
            needs_frames,
            refill: Refill::default(),
        })
    }
}

/// The `auto` policy over one flow.
pub struct Auto {
    params: AutoParams,
    registry: Registry,
    ctx: CcContext,
    active: Box<dyn CongestionControl>,
    role: Role,
    reason: f64,
    /// The intent's specialist while an intent names one.
    intent: Option<(Role, Intent)>,
    windows: PathWindows,
    classifier: Classifier,
    flow: FlowView,
    last_window: Option<path_window::PathWindow>,
    switches: u64,
    /// Whether any role's controller schedules media frames.
    needs_frames: bool,
    /// The scavenger's return to a link its primary left.
    refill: Refill,
}

impl Auto {
    /// The role running the flow.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The window the competing member starts from: the largest delivery rate the flow measured
    /// times the RTT the competitor's queue now imposes (the last window's base RTT plus queue
    /// floor), if that is more than the running window, in slow start from there, as a CUBIC
    /// flow that joins does. The running window was set by a delay target that the
    /// competitor's queue defeats and says nothing of the share: CUBIC from a starved window
    /// gains on an established CUBIC in a deep buffer over minutes (`tests/auto.rs`). Flows
    /// that start together measure about their share in start-up; a flow that had the link
    /// alone takes it back for a round trip and loses.
    ///
    /// Slow start, not congestion avoidance at the share: the competitors grew while the flow
    /// starved, and a drop-tail queue drops from every flow at once when it overflows, so each
    /// backs off by the same factor and the flows keep their ratio for tens of seconds. Started
    /// in congestion avoidance at its share (15.6 Mbit/s of a fair 16.7 against two CUBIC flows
    /// in a 4-BDP buffer) the flow met that overflow at 0.72 of the others' window and held
    /// 0.82 of its fair share over 20 s; in slow start it reaches the others' window before
    /// the overflow and holds 1.00 (SUITE.md, "The competing member joins in slow start").
    fn competing_start(&self) -> Overrides {
        let (Some(w), Some(bw)) = (self.last_window, self.classifier.largest_bandwidth()) else {
            return Overrides::default();
        };
        let rtt = w.base + w.queue_floor.unwrap_or(Duration::ZERO);
        let share = bw.bytes_in(rtt);
        if share <= self.active.cwnd() {
            return Overrides::default();
        }
        Overrides {
            cwnd: Some(share),
            ssthresh: None,
            slow_start: true,
        }
    }

    /// Hands the flow to a fresh instance of `role`'s controller with the running one's state.
    fn switch_to(&mut self, now: Time, role: Role) {
        if role == self.role {
            return;
        }
        if self.params.spec(role) == self.params.spec(self.role) {
            // The same controller serves both roles: it keeps the flow with its state (a CUBIC
            // epoch, a Copa mode) instead of a fresh instance.
            self.role = role;
            return;
        }
        let overrides = if role == Role::Competing {
            self.competing_start()
        } else {
            Overrides::default()
        };
        let state = handover::successor_state(&self.flow, self.active.as_ref(), overrides);
        let ctx = CcContext { now, ..self.ctx };
        // Every role's spec built in `build`, so this succeeds; should it not, the running
        // controller keeps the flow.
        let Ok(mut fresh) = self.registry.build(self.params.spec(role), &ctx) else {
            return;
        };
        fresh.adopt(now, &state);
        if let Some((_, intent)) = &self.intent {
            fresh.set_intent(now, intent);
        }
        self.active = fresh;
        self.role = role;
        self.switches += 1;
    }
}

impl CongestionControl for Auto {
    fn name(&self) -> &str {
        NAME
    }

    /// The controller running at the start hears the handshake; a later one adopts the
    /// transport's RTT state, which already holds it.
    fn on_handshake(&mut self, now: Time, rtt: Duration) {
        self.active.on_handshake(now, rtt);
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.flow.on_sent(sent);
        self.active.on_sent(now, sent);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.flow.on_ack(ack);
        self.active.on_ack(now, ack);
        let Some(w) = self.windows.on_ack(now, ack) else {
            return;
        };
        self.last_window = Some(w);
        if let Some(regime) = self.classifier.on_window(&w) {
            if self.intent.is_none() {
                self.reason = regime.code();
                self.switch_to(now, Role::of(regime));
            }
        }
        if matches!(self.intent, Some((Role::Scavenger, _))) {
            let largest = self.classifier.largest_bandwidth();
            let min_window = MIN_WINDOW_PACKETS * self.ctx.mss;
            if let Some(cwnd) = self
                .refill
                .on_window(&w, largest, self.active.cwnd(), min_window)
            {
                // The member's own adoption of a predecessor's state: the window, its velocity
                // or epoch restarted there.
                let overrides = Overrides {
                    cwnd: Some(cwnd),
                    ..Overrides::default()
                };
                let state = handover::successor_state(&self.flow, self.active.as_ref(), overrides);
                self.active.adopt(now, &state);
            }
        }
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.flow.on_loss(loss);
        self.windows.on_loss(loss);
        self.active.on_loss(now, loss);
    }

    fn on_feedback(&mut self, now: Time, feedback: &Feedback<'_>) {
        if self.active.wants_feedback() {
            self.active.on_feedback(now, feedback);
        }
    }
    /// Only the running controller takes receiver timing; none of the defaults does.
    fn wants_feedback(&self) -> bool {
        self.active.wants_feedback()
    }
    fn on_packet_acked(&mut self, now: Time, packet: &PacketOutcome) {
        if self.active.wants_packet_detail() {
            self.active.on_packet_acked(now, packet);
        }
    }
    fn on_packet_lost(&mut self, now: Time, packet: &PacketOutcome) {
        if self.active.wants_packet_detail() {
            self.active.on_packet_lost(now, packet);
        }
    }
    fn wants_packet_detail(&self) -> bool {
        self.active.wants_packet_detail()
    }
    /// Frames go to the running controller only, as in Janus.
    fn on_frame(&mut self, now: Time, frame: &FrameInfo) {
        self.active.on_frame(now, frame);
    }
    fn media_control(&self) -> Option<MediaControl> {
        self.active.media_control()
    }
    fn needs_media_frames(&self) -> bool {
        self.needs_frames
    }
    fn on_timer(&mut self, now: Time) {
        self.active.on_timer(now);
    }
    fn next_timer(&self) -> Option<Time> {
        self.active.next_timer()
    }

    fn cwnd(&self) -> Bytes {
        self.active.cwnd()
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.active.pacing_rate()
    }
    fn ssthresh(&self) -> Option<Bytes> {
        self.active.ssthresh()
    }
    fn in_slow_start(&self) -> bool {
        self.active.in_slow_start()
    }

    fn telemetry(&self) -> Telemetry {
        let inner = self.active.telemetry();
        let mut t = Telemetry::new(inner.state);
        t.push("member", self.role.code());
        t.push("reason", self.reason);
        let w = self.last_window;
        t.push(
            "queue_floor_ms",
            w.and_then(|w| w.queue_floor)
                .map_or(f64::NAN, |q| q.as_millis_f64()),
        );
        t.push(
            "rtt_spread_ms",
            w.and_then(|w| w.spread)
                .map_or(f64::NAN, |s| s.as_millis_f64()),
        );
        t.push("window_loss_rate", w.map_or(f64::NAN, |w| w.loss_rate));
        t.push("bunched_share", w.map_or(f64::NAN, |w| w.bunched_share));
        t.push(
            "bunch_interval_ms",
            w.and_then(|w| w.bunch_interval)
                .map_or(f64::NAN, |i| i.as_millis_f64()),
        );
        t.push("switches", self.switches as f64);
        // The running controller's own values, as room allows (a pool as a member may report
        // more than fits).
        for &(name, value) in inner.entries() {
            if t.entries().len() == Telemetry::CAPACITY {
                break;
            }
            t.push(name, value);
        }
        t
    }

    /// An intent with a specialist hands the flow to it and suspends the path's choice; bulk,
    /// video or no intent hands it back to the path's regime.
    fn set_intent(&mut self, now: Time, intent: &Intent) {
        match Role::of_intent(intent) {
            Some(role) => {
                self.intent = Some((role, *intent));
                self.reason = REASON_INTENT;
                if role == self.role {
                    self.active.set_intent(now, intent);
                } else {
                    self.switch_to(now, role);
                }
            }
            None => {
                self.intent = None;
                let regime = self.classifier.regime();
                self.reason = regime.code();
                self.switch_to(now, Role::of(regime));
                self.active.set_intent(now, intent);
            }
        }
    }

    fn calibrate(&mut self, now: Time, c: &Calibration) {
        self.active.calibrate(now, c);
    }

    fn handover_state(&self) -> HandoverState {
        self.flow.state_of(self.active.as_ref())
    }

    fn adopt(&mut self, now: Time, from: &HandoverState) {
        self.flow.adopt(from);
        self.active.adopt(now, from);
    }

    fn accepts_calibration(&self) -> bool {
        self.active.accepts_calibration()
    }
}

#[cfg(test)]
mod tests;
