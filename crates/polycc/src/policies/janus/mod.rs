//! Janus (Zhou, Choffnes & Chowdhury, "Janus: A Multi-TCP Framework for Application-Aware
//! Optimization in Mobile Networks", IEEE TMC 2018): a per-flow policy that runs a conservative
//! CCA (default Vegas) while the application's target rate is met and an aggressive one (default
//! CUBIC) while it is not, and adapts the target so that competing flows converge to max-min
//! fairness.
//!
//! One concept per file: [`metrics`] (§4.2), [`switching`] (§4.3), [`rate_control`] (§4.4: rate
//! control, buffer clearing, D_p), [`target_rate`] (§5, Algorithm 1).
//!
//! Hand-over follows Linux `tcp_set_congestion_control`, which Janus calls (§7.1): the socket
//! keeps cwnd, ssthresh and its RTT state, and the new algorithm starts from its `init`. So every
//! switch builds a fresh instance of the target CCA from the registry (Vegas relearns its base
//! RTT, CUBIC starts a new epoch) and hands it the running one's state through
//! [`CongestionControl::adopt`], by the hand-over PolyCC's pilot change shares
//! ([`crate::policies::handover`]). Only the running CCA sees events, as only the socket's
//! current `tcp_congestion_ops` is called.

pub mod metrics;
pub mod rate_control;
pub mod switching;
pub mod target_rate;

#[cfg(test)]
mod tests;

use crate::cc::{
    Calibration, CcContext, ClampChange, CongestionControl, HandoverState, MediaControl, Telemetry,
};
use crate::intent::Intent;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::policies::handover::{self, FlowView, Overrides};
use crate::registry::{CcError, CcSpec, Params, Registry};
use crate::signals::{AckEvent, Feedback, FrameInfo, LossEvent, PacketOutcome, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use metrics::{Metrics, Window};
use rate_control::{Clamp, PropagationDelay};
use serde::{Deserialize, Serialize};
use switching::{Stage, Switching};
use target_rate::TargetRate;

/// One-line description of `janus` shown in the registry listing.
pub const SUMMARY: &str =
    "Janus policy (Zhou et al., IEEE TMC 2018): conservative CCA while the intent's target rate is met, aggressive otherwise; adaptive max-min fair targets";

/// §4.3: Vegas is the conservative CCA.
pub const DEFAULT_CONSERVATIVE: &str = "vegas";
/// §4.3: CUBIC is the aggressive CCA.
pub const DEFAULT_AGGRESSIVE: &str = "cubic";
/// §4.2: a flow without a target waits two RTTs after its conservative slow start ends, then
/// takes its sample throughput as the target (the bandwidth it found available).
pub const INIT_WAIT_RTTS: u32 = 2;

/// Registry and scenario name.
pub const NAME: &str = "janus";

/// Registers Janus under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<JanusParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JanusParams {
    #[serde(default = "default_conservative")]
    conservative: CcSpec,
    #[serde(default = "default_aggressive")]
    aggressive: CcSpec,
    #[serde(default = "default_gamma")]
    gamma: f64,
    #[serde(default = "default_epsilon")]
    epsilon: f64,
    #[serde(default = "default_tau")]
    tau: f64,
    #[serde(default = "default_q_avg")]
    q_avg: f64,
}

fn default_conservative() -> CcSpec {
    CcSpec::named(DEFAULT_CONSERVATIVE)
}
fn default_aggressive() -> CcSpec {
    CcSpec::named(DEFAULT_AGGRESSIVE)
}
fn default_gamma() -> f64 {
    switching::GAMMA
}
fn default_epsilon() -> f64 {
    rate_control::EPSILON
}
fn default_tau() -> f64 {
    target_rate::TAU
}
fn default_q_avg() -> f64 {
    rate_control::Q_AVG_PACKETS
}

impl ParamTable for JanusParams {
    // Upper bounds of tau and q_avg only catch typos; gamma below 1 keeps (1 − gamma)·R positive.
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "conservative",
            Kind::Cca,
            "the CCA that runs while the target rate is met",
            "Janus §4.3",
        ),
        ParamSpec::new(
            "aggressive",
            Kind::Cca,
            "the CCA that runs while it is not",
            "Janus §4.3",
        ),
        ParamSpec::new(
            "gamma",
            Kind::Number,
            "protection margin γ: turn aggressive below (1 − γ)·R'; also Algorithm 1's step",
            "Janus §4.3, §7.2",
        )
        .range(0.01, 0.9),
        ParamSpec::new(
            "epsilon",
            Kind::Number,
            "extra share ε: the conservative stage clamps the window at (1 + ε)·R·RTT",
            "Janus §4.4, §7.2",
        )
        .range(0.0, 10.0),
        ParamSpec::new(
            "tau",
            Kind::Number,
            "τ: scale of Algorithm 1's adjustment intervals, τ·γ/(1 − γ) RTTs",
            "Janus §5, §7.2",
        )
        .range(0.1, 1000.0),
        ParamSpec::new(
            "q_avg",
            Kind::Number,
            "packets the conservative CCA keeps queued on average, for the D_p estimate",
            "Janus §4.4 eq. 1, §7.2",
        )
        .range(0.0, 1000.0),
    ];
}

/// Tunables of [`Janus`] (§7.2 defaults), validated by [`build`].
#[derive(Clone, Debug, PartialEq)]
pub struct JanusConfig {
    /// The CCA that runs while the target rate is met (§4.3), as [`DEFAULT_CONSERVATIVE`].
    pub conservative: CcSpec,
    /// The CCA that runs while it is not (§4.3), as [`DEFAULT_AGGRESSIVE`].
    pub aggressive: CcSpec,
    /// Protection margin γ of the switching rule and step of Algorithm 1, as
    /// [`switching::GAMMA`].
    pub gamma: f64,
    /// Extra share ε a satisfied flow may take: the conservative stage clamps its window at
    /// (1 + ε)·R·RTT (§4.4), as [`rate_control::EPSILON`].
    pub epsilon: f64,
    /// τ, the scale of Algorithm 1's adjustment intervals (§5), as [`target_rate::TAU`].
    pub tau: f64,
    /// Q_avg in packets: what the conservative CCA keeps queued on average, subtracted from
    /// RTT_min for the D_p estimate (§4.4, eq. 1), as [`rate_control::Q_AVG_PACKETS`].
    pub q_avg: f64,
}

impl Default for JanusConfig {
    fn default() -> Self {
        JanusConfig {
            conservative: default_conservative(),
            aggressive: default_aggressive(),
            gamma: default_gamma(),
            epsilon: default_epsilon(),
            tau: default_tau(),
            q_avg: default_q_avg(),
        }
    }
}

/// Builds Janus from scenario parameters (`conservative`, `aggressive`, `gamma`, `epsilon`,
/// `tau`, `q_avg`), checking them against the declared schema; the two CCAs are built from
/// `registry`.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    registry: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: JanusParams = params::parse(NAME, p)?;
    let cfg = JanusConfig {
        conservative: params.conservative,
        aggressive: params.aggressive,
        gamma: params.gamma,
        epsilon: params.epsilon,
        tau: params.tau,
        q_avg: params.q_avg,
    };
    Ok(Box::new(Janus::new(ctx, registry, cfg)?))
}

/// Where a flow is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No target yet (§4.2): conservative, waiting for slow start to end, then this many
    /// windows (`None` while still in slow start).
    Initialising {
        windows_after_slow_start: Option<u32>,
    },
    /// R' is set; the switching engine runs.
    Running,
}

/// The Janus policy over one flow: owns both CCAs and feeds events to the running one.
pub struct Janus {
    cfg: JanusConfig,
    registry: Registry,
    ctx: CcContext,
    conservative: Box<dyn CongestionControl>,
    aggressive: Box<dyn CongestionControl>,
    stage: Stage,
    phase: Phase,
    metrics: Metrics,
    switching: Switching,
    target: TargetRate,
    clamp: Clamp,
    dp: PropagationDelay,
    /// The transport's latest RTT state and bytes in flight, handed over on a switch.
    flow: FlowView,
    /// The aggressive stage's ssthresh waits for the first D_p estimate.
    ssthresh_pending: bool,
    /// An aggressive stage entered before any RTT sample starts Algorithm 1's clock at the
    /// first measurement window instead.
    algorithm_clock_pending: bool,
    switches: u64,
}

impl Janus {
    /// Builds both CCAs from `registry`; an unknown name or bad parameter is reported with the
    /// role it was given.
    pub fn new(ctx: &CcContext, registry: &Registry, cfg: JanusConfig) -> Result<Self, CcError> {
        let role_err = |role: &str, e: CcError| CcError::BadParams {
            name: NAME.to_string(),
            message: format!("{role}: {e}"),
        };
        let conservative = registry
            .build(&cfg.conservative, ctx)
            .map_err(|e| role_err("conservative", e))?;
        let aggressive = registry
            .build(&cfg.aggressive, ctx)
            .map_err(|e| role_err("aggressive", e))?;
        Ok(Janus {
            registry: registry.clone(),
            ctx: *ctx,
            conservative,
            aggressive,
            // §4.2: without an intent, start conservative and find the available bandwidth.
            stage: Stage::Conservative,
            phase: Phase::Initialising {
                windows_after_slow_start: None,
            },
            metrics: Metrics::default(),
            switching: Switching::new(cfg.gamma),
            target: TargetRate::new(cfg.tau, cfg.gamma),
            clamp: Clamp::new(cfg.epsilon),
            dp: PropagationDelay::new(cfg.q_avg, ctx.mss),
            flow: FlowView::default(),
            ssthresh_pending: false,
            algorithm_clock_pending: false,
            switches: 0,
            cfg,
        })
    }

    /// Which CCA runs the flow.
    #[cfg(test)]
    pub(crate) fn stage(&self) -> Stage {
        self.stage
    }
    /// R', bit/s (0 before a flow without target has initialised it).
    #[cfg(test)]
    pub(crate) fn target_bps(&self) -> f64 {
        self.target.adjusted
    }
    /// The round-trip propagation delay estimate D_p (§4.4, eq. 1), `None` before the first.
    #[cfg(test)]
    pub(crate) fn propagation_delay(&self) -> Option<Duration> {
        self.dp.get()
    }
    /// P_avg (§4.2), bit/s: the moving average of sample throughput that the switching rule
    /// compares with the target.
    #[cfg(test)]
    pub(crate) fn p_avg_bps(&self) -> f64 {
        self.metrics.p_avg_bps()
    }
    /// The conservative stage's window clamp (1 + ε)·R·RTT (§4.4), in bytes, while one is set.
    #[cfg(test)]
    pub(crate) fn clamp(&self) -> Option<Bytes> {
        self.clamp.value
    }
    /// Stage switches so far.
    #[cfg(test)]
    pub(crate) fn switches(&self) -> u64 {
        self.switches
    }

    fn active(&self) -> &dyn CongestionControl {
        match self.stage {
            Stage::Conservative => self.conservative.as_ref(),
            Stage::Aggressive => self.aggressive.as_ref(),
        }
    }
    fn active_mut(&mut self) -> &mut Box<dyn CongestionControl> {
        match self.stage {
            Stage::Conservative => &mut self.conservative,
            Stage::Aggressive => &mut self.aggressive,
        }
    }

    fn min_window(&self) -> Bytes {
        self.ctx.min_window()
    }

    /// The RTT Janus measures with: the last window's min-filtered srtt, else the transport's.
    fn rtt_now(&self) -> Duration {
        self.metrics
            .last()
            .map(|w| w.rtt)
            .unwrap_or(self.flow.rtt.smoothed)
    }

    /// Hands the flow to a fresh instance of `to`'s CCA with the running one's state, optionally
    /// overriding the window and threshold (buffer clearing, rate control).
    fn hand_over(&mut self, now: Time, to: Stage, cwnd: Option<Bytes>, ssthresh: Option<Bytes>) {
        let overrides = Overrides {
            cwnd,
            ssthresh,
            ..Overrides::default()
        };
        let state = handover::successor_state(&self.flow, self.active(), overrides);
        let spec = match to {
            Stage::Conservative => &self.cfg.conservative,
            Stage::Aggressive => &self.cfg.aggressive,
        };
        let ctx = CcContext { now, ..self.ctx };
        // The spec built at construction, so this succeeds; should it not, the instance kept
        // from before takes the flow over instead.
        if let Ok(fresh) = self.registry.build(spec, &ctx) {
            match to {
                Stage::Conservative => self.conservative = fresh,
                Stage::Aggressive => self.aggressive = fresh,
            }
        }
        self.stage = to;
        self.active_mut().adopt(now, &state);
        self.switches += 1;
    }

    fn enter_conservative(&mut self, now: Time, w: &Window) {
        if !self.switching.been_conservative {
            // §4.3 (2): P_avg restarts from the sample throughput.
            self.metrics.reset_average(w.p_smp_bps);
            self.switching.been_conservative = true;
        }
        let dp = self.dp.get().unwrap_or(w.rtt);
        let cwnd = rate_control::clearing_cwnd(
            self.active().cwnd(),
            self.metrics.p_avg_bps(),
            dp,
            self.min_window(),
        );
        // snd_ssthresh comes down with the window. The cleared window is the flow's share
        // without its queue (§4.4: "just large enough to maintain its current throughput"); the
        // aggressive stage's threshold (R·D_p, or CUBIC's after a loss) is usually above it, and
        // left there it would put Vegas in slow start: doubling each RTT until it sees a packet
        // queued, refilling the buffer that clearing emptied and overshooting the share it was
        // handed while the other flows' Vegas yield to that queue (in the max-min experiments,
        // Figs. 11–12 and 15, the flows then froze at uneven shares). The conservative stage
        // starts in congestion avoidance at the cleared window, one packet per RTT from there.
        self.hand_over(now, Stage::Conservative, Some(cwnd), Some(cwnd));
        self.clamp.clear();
        self.dp.start_measuring(now);
    }

    /// The end of the start (§4.2): the conservative CCA's slow start ends only once packets
    /// queue, and on a deep buffer its last doubling leaves up to a window queued, which Vegas
    /// then drains by one packet per RTT (on 20 Mbit/s, 50 ms and 1000 packets of buffer, 120 ms
    /// of queue for 25 s). Janus' buffer clearing (§4.4: every flow minimises its
    /// self-inflicted queue) cuts the window to the flow's share without it, P_smp·D_p with D_p
    /// still the lifetime minimum RTT, here as before every later conservative stage; the eq. 1
    /// measurement that follows then reads RTT_min from packets sent after the cut (through the
    /// start's queue it read 169 ms of D_p on that 50 ms path, and every later clearing kept
    /// that much queue).
    fn clear_start_overshoot(&mut self, now: Time, p_smp_bps: f64) {
        let (Some(dp), Stage::Conservative) = (self.dp.get(), self.stage) else {
            return;
        };
        let cwnd = self.active().cwnd();
        let cleared = rate_control::clearing_cwnd(cwnd, p_smp_bps, dp, self.min_window());
        if cleared < cwnd {
            self.active_mut().calibrate(
                now,
                &Calibration {
                    cwnd: Some(cleared),
                    ssthresh: Some(cleared),
                    ..Calibration::default()
                },
            );
        }
    }

    fn enter_aggressive(&mut self, now: Time, rtt: Duration) {
        self.clamp.clear();
        // The threshold takes eq. 1 without the recent-minimum bound (which protects buffer
        // clearing from a D_p read through a standing queue): it is to carry slow start to the
        // window that reaches R, and where other flows keep a queue eq. 1's RTT_min holds it.
        // Bounded, two Janus flows against CUBIC (Fig. 20) started CUBIC from half the
        // threshold and held 3.00 instead of 3.87 Mbit/s.
        let ssthresh = self.dp.unbounded().map(|dp| {
            rate_control::aggressive_ssthresh(self.target.adjusted, dp, self.min_window())
        });
        self.ssthresh_pending = ssthresh.is_none();
        self.hand_over(now, Stage::Aggressive, None, ssthresh);
        self.target.enter_aggressive(now, rtt);
        self.algorithm_clock_pending = !self.flow.rtt.has_sample;
    }

    /// Runs once per measurement window (one RTT).
    fn on_window(&mut self, now: Time, w: Window) {
        if let Phase::Initialising {
            windows_after_slow_start,
        } = self.phase
        {
            let waited = match windows_after_slow_start {
                None if self.active().in_slow_start() => None,
                None => Some(0),
                Some(n) => Some(n + 1),
            };
            if waited.is_some_and(|n| n >= INIT_WAIT_RTTS) {
                // §4.2: R = P_smp, and P_avg starts there too.
                let floor = self.min_window() as f64 * 8.0 / w.rtt.as_secs_f64().max(1e-9);
                self.target.initialise(w.p_smp_bps.max(floor));
                self.metrics.reset_average(w.p_smp_bps);
                self.switching.been_conservative = true;
                self.phase = Phase::Running;
                self.clear_start_overshoot(now, w.p_smp_bps);
                self.dp.start_measuring(now);
            } else {
                self.phase = Phase::Initialising {
                    windows_after_slow_start: waited,
                };
            }
            return;
        }
        let p_avg = self.metrics.p_avg_bps();
        match self.stage {
            Stage::Aggressive => {
                if self.algorithm_clock_pending {
                    self.algorithm_clock_pending = false;
                    self.target.enter_aggressive(now, w.rtt);
                } else {
                    self.target.on_aggressive(now, w.rtt, w.rtt_var);
                }
                if self.switching.decide(
                    Stage::Aggressive,
                    w.p_smp_bps,
                    p_avg,
                    self.target.adjusted,
                ) == Some(Stage::Conservative)
                {
                    self.enter_conservative(now, &w);
                }
            }
            Stage::Conservative => {
                if self.switching.decide(
                    Stage::Conservative,
                    w.p_smp_bps,
                    p_avg,
                    self.target.adjusted,
                ) == Some(Stage::Aggressive)
                {
                    self.enter_aggressive(now, w.rtt);
                    return;
                }
                self.target.on_conservative(p_avg);
                // Rate control applies to flows whose application stated a target.
                if self.target.original > 0.0 {
                    let min = self.min_window();
                    if let Some(c) = self.clamp.update(p_avg, self.target.original, w.rtt, min) {
                        self.active_mut().calibrate(
                            now,
                            &Calibration {
                                cwnd_clamp: Some(c),
                                ..Calibration::default()
                            },
                        );
                    }
                }
            }
        }
    }
}

impl CongestionControl for Janus {
    fn name(&self) -> &str {
        "janus"
    }

    /// Both stages' controllers hear the handshake: each was built for this flow at its start,
    /// and the conservative one (Vegas) takes its base RTT from it, as it does over the kernel's
    /// TCP, where the shim's first report carries the SYN's round trip.
    fn on_handshake(&mut self, now: Time, rtt: Duration) {
        self.conservative.on_handshake(now, rtt);
        self.aggressive.on_handshake(now, rtt);
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.flow.on_sent(sent);
        self.active_mut().on_sent(now, sent);
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.flow.on_ack(ack);
        self.active_mut().on_ack(now, ack);
        if let Some(sample) = ack.min_rtt_sample {
            self.dp.on_sample(
                now,
                sample,
                ack.largest_acked_sent_time,
                self.metrics.p_avg_bps(),
            );
        }
        if self.ssthresh_pending && self.stage == Stage::Aggressive {
            if let Some(dp) = self.dp.unbounded() {
                self.ssthresh_pending = false;
                let s =
                    rate_control::aggressive_ssthresh(self.target.adjusted, dp, self.min_window());
                self.active_mut().calibrate(
                    now,
                    &Calibration {
                        ssthresh: Some(s),
                        ..Calibration::default()
                    },
                );
            }
        }
        if let Some(w) = self.metrics.on_ack(now, ack) {
            self.on_window(now, w);
        }
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.flow.on_loss(loss);
        self.active_mut().on_loss(now, loss);
    }

    fn on_feedback(&mut self, now: Time, feedback: &Feedback<'_>) {
        if self.active().wants_feedback() {
            self.active_mut().on_feedback(now, feedback);
        }
    }
    fn wants_feedback(&self) -> bool {
        self.conservative.wants_feedback() || self.aggressive.wants_feedback()
    }
    fn on_packet_acked(&mut self, now: Time, packet: &PacketOutcome) {
        if self.active().wants_packet_detail() {
            self.active_mut().on_packet_acked(now, packet);
        }
    }
    fn on_packet_lost(&mut self, now: Time, packet: &PacketOutcome) {
        if self.active().wants_packet_detail() {
            self.active_mut().on_packet_lost(now, packet);
        }
    }
    fn wants_packet_detail(&self) -> bool {
        self.conservative.wants_packet_detail() || self.aggressive.wants_packet_detail()
    }
    /// Frames go to the active CCA only: a CCA that schedules frames (PIBES) keeps its frame
    /// queue in step with the packets it sees leave, and the idle one sees none.
    fn on_frame(&mut self, now: Time, frame: &FrameInfo) {
        self.active_mut().on_frame(now, frame);
    }
    fn on_timer(&mut self, now: Time) {
        self.active_mut().on_timer(now);
    }
    fn next_timer(&self) -> Option<Time> {
        self.active().next_timer()
    }

    fn cwnd(&self) -> Bytes {
        self.active().cwnd()
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.active().pacing_rate()
    }
    /// The active stage's: a media controller in either stage drives its source while in charge.
    fn media_control(&self) -> Option<MediaControl> {
        self.active().media_control()
    }
    fn ssthresh(&self) -> Option<Bytes> {
        self.active().ssthresh()
    }
    fn in_slow_start(&self) -> bool {
        self.active().in_slow_start()
    }

    fn telemetry(&self) -> Telemetry {
        let state = match (self.phase, self.stage) {
            (Phase::Initialising { .. }, _) => "initialising",
            (_, s) => s.name(),
        };
        let mut t = Telemetry::new(state);
        t.push(
            "stage",
            match self.stage {
                Stage::Conservative => 0.0,
                Stage::Aggressive => 1.0,
            },
        );
        t.push(
            "target_rate_mbps",
            if self.phase == Phase::Running {
                self.target.adjusted / 1e6
            } else {
                f64::NAN
            },
        );
        t.push(
            "dp_ms",
            self.dp.get().map_or(f64::NAN, |d| d.as_millis_f64()),
        );
        t.push("p_avg_mbps", self.metrics.p_avg_bps() / 1e6);
        t.push(
            "p_smp_mbps",
            self.metrics.last().map_or(f64::NAN, |w| w.p_smp_bps / 1e6),
        );
        t.push(
            "rtt_ms",
            self.metrics
                .last()
                .map_or(f64::NAN, |w| w.rtt.as_millis_f64()),
        );
        t.push(
            "clamp_bytes",
            self.clamp.value.map_or(f64::NAN, |c| c as f64),
        );
        t.push(
            "ssthresh_bytes",
            match self.active().ssthresh() {
                Some(s) if s != Bytes::MAX => s as f64,
                _ => f64::NAN,
            },
        );
        t.push("switches", self.switches as f64);
        t
    }

    /// A target-rate intent (or a video's maximum rate, with its minimum as R_min) sets R and
    /// R' = R; the switching engine acts on it from the next window. Other intents leave the
    /// flow without a target: R' is kept (or found as at start, §4.2, if the flow has none).
    fn set_intent(&mut self, now: Time, intent: &Intent) {
        let (target, min) = match *intent {
            Intent::BandwidthGuarantee {
                target_rate,
                min_rate,
            } => (Some(target_rate), min_rate),
            Intent::RealtimeVideo { min_rate, max_rate } => (Some(max_rate), min_rate),
            Intent::Bulk | Intent::DelaySensitive | Intent::Scavenger => (None, Rate::ZERO),
        };
        match target {
            Some(r) => {
                self.target.set(r.as_bps() as f64, min.as_bps() as f64);
                self.phase = Phase::Running;
                if self.metrics.last().is_none() && self.stage == Stage::Conservative {
                    // A new flow with a target starts aggressive to reach it quickly (§4.3,
                    // Fig. 6), with ssthresh = R·D_p once D_p is known.
                    let rtt = self.rtt_now();
                    self.enter_aggressive(now, rtt);
                }
                if self.stage == Stage::Conservative {
                    // The clamp follows the new R from the next window.
                    self.clamp.clear();
                    self.active_mut().calibrate(
                        now,
                        &Calibration {
                            cwnd_clamp: Some(ClampChange::Remove),
                            ..Calibration::default()
                        },
                    );
                }
            }
            None => {
                self.target.set(0.0, 0.0);
                if self.stage == Stage::Conservative && self.clamp.value.is_some() {
                    self.clamp.clear();
                    self.active_mut().calibrate(
                        now,
                        &Calibration {
                            cwnd_clamp: Some(ClampChange::Remove),
                            ..Calibration::default()
                        },
                    );
                }
                let p_avg = self.metrics.p_avg_bps();
                if self.phase == Phase::Running && p_avg > 0.0 {
                    self.target.initialise(p_avg);
                } else {
                    self.phase = Phase::Initialising {
                        windows_after_slow_start: None,
                    };
                }
            }
        }
    }

    fn calibrate(&mut self, now: Time, c: &Calibration) {
        self.active_mut().calibrate(now, c);
    }

    fn handover_state(&self) -> HandoverState {
        self.flow.state_of(self.active())
    }

    fn adopt(&mut self, now: Time, from: &HandoverState) {
        self.flow.adopt(from);
        self.active_mut().adopt(now, from);
    }

    /// Either stage may run the flow.
    fn needs_media_frames(&self) -> bool {
        self.conservative.needs_media_frames() || self.aggressive.needs_media_frames()
    }

    /// Calibrations reach whichever stage is active, so both must accept them.
    fn accepts_calibration(&self) -> bool {
        self.conservative.accepts_calibration() && self.aggressive.accepts_calibration()
    }
}
