//! BBR v3 as google/bbr `net/ipv4/tcp_bbr.c` (BBR_VERSION 3), the algorithm of
//! draft-ietf-ccwg-bbr.
//!
//! Against v1 the model gains bounds: `bw_hi` is the max-bandwidth filter over the last two
//! PROBE_BW cycles, `inflight_hi` the in-flight level at which probing saw more than
//! `loss_thresh` (2 %) loss; `bw_lo` / `inflight_lo` are short-term lower bounds cut by
//! `beta` (to 0.7) in every round with loss while not probing. PROBE_BW is DOWN (0.91) → CRUISE
//! (1.0, at most inflight_hi less 15 % headroom) → REFILL (1.0, one round) → UP (1.25, cwnd gain
//! 2.25), with the next probe 2–3 s of wall clock (random) or a Reno-coexistence number of rounds
//! (at most 63) after DOWN began. STARTUP paces at 2.77 with cwnd gain 2 and also exits on
//! persistent high loss; PROBE_RTT comes every 5 s at half the BDP; cwnd carries the
//! ACK-aggregation allowance (`extra_acked`). ECN is not used (the transport does not report it),
//! nor PLB or the TLP-specific loss handling.

use super::ack_aggregation::AckAggregation;
use super::bdp::bdp;
use super::cwnd;
use super::handover::{self, LastAck};
use super::min_rtt::{MinRttFilter, MIN_RTT_WINDOW};
use super::pacing::Pacing;
use super::prng::{default_seed, Prng, SEED_PARAM};
use super::probe_rtt::{ProbeRtt, PROBE_RTT_DURATION};
use super::quantum::tso_goal_v3;
use super::recovery::{CaState, Recovery};
use super::rounds::Rounds;
use super::tx_records::{TxRecord, TxRecords};
use crate::algos::round::RoundTracker;
use crate::cc::{Calibration, CcContext, CongestionControl, HandoverState, Telemetry};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "bbr3";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "BBR v3 (google/bbr tcp_bbr.c v3, draft-ietf-ccwg-bbr): BBR with loss-bounded inflight_hi/lo";

/// google/bbr v3 `bbr_startup_pacing_gain` = 4·ln 2 ≈ 2.77: doubles the sending rate each round
/// like an unpaced slow start.
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// `bbr_startup_cwnd_gain`.
pub const STARTUP_CWND_GAIN: f64 = 2.0;
/// `bbr_drain_gain` = 1000/2885.
pub const DRAIN_PACING_GAIN: f64 = 1.0 / 2.885;
/// `bbr_cwnd_gain`.
pub const CWND_GAIN: f64 = 2.0;
/// `bbr_bw_probe_cwnd_gain` = 1 quarter: PROBE_BW UP adds 0.25 to the cwnd gain.
pub const PROBE_UP_EXTRA_CWND_GAIN: f64 = 0.25;
/// `bbr_pacing_gain[]` for UP: 5/4, probing for more bandwidth…
pub const PROBE_UP_GAIN: f64 = 1.25;
/// … and for DOWN: 91/100, draining the queue the probe built (CRUISE and REFILL pace at 1).
pub const PROBE_DOWN_GAIN: f64 = 0.91;
/// `bbr_loss_thresh`: probing went too far when more than 2 % of the data in flight was lost.
pub const LOSS_THRESH: f64 = 0.02;
/// `bbr_beta` = 30 % reduction: bounds are scaled to 0.7 (draft BBR.Beta = 0.7).
pub const BETA: f64 = 0.7;
/// `bbr_inflight_headroom`: CRUISE leaves 15 % of inflight_hi unused.
pub const HEADROOM: f64 = 0.15;
/// `bbr_full_bw_thresh`: STARTUP continues while the bandwidth grows by at least 25 % a round…
pub const FULL_BW_THRESH: f64 = 1.25;
/// … and the pipe is full after `bbr_full_bw_cnt` = 3 rounds without such growth.
pub const FULL_BW_COUNT: u32 = 3;
/// `bbr_full_loss_cnt`: STARTUP also ends after 6 loss events in a round with loss too high.
pub const FULL_LOSS_COUNT: u32 = 6;
/// `bbr_probe_rtt_win_ms`: PROBE_RTT when the min RTT was not refreshed for 5 s.
pub const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
/// `bbr_probe_rtt_cwnd_gain`: PROBE_RTT holds half a BDP.
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// `bbr_bw_probe_base_us`: the next bandwidth probe comes 2 s of wall clock after DOWN began…
pub const PROBE_WAIT_BASE: Duration = Duration::from_secs(2);
/// … plus a uniformly random part below `bbr_bw_probe_rand_us` = 1 s, drawn at each DOWN (or
/// sooner, after the Reno-coexistence rounds, [`PROBE_MAX_ROUNDS`] at most).
pub const PROBE_WAIT_RAND: Duration = Duration::from_secs(1);
/// `bbr_bw_probe_max_rounds`: Reno-coexistence bound on rounds between probes…
pub const PROBE_MAX_ROUNDS: u64 = 63;
/// … randomised by up to `bbr_bw_probe_rand_rounds` rounds.
const PROBE_RAND_ROUNDS: u64 = 2;
/// `bbr_extra_acked_win_rtts`: the extra_acked filter spans 5–10 rounds (1–2 in STARTUP).
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// `bbr_extra_acked_gain` = 1 and `bbr_extra_acked_max_us`: the allowance is capped at 100 ms of
/// the bandwidth estimate.
const EXTRA_ACKED_GAIN: f64 = 1.0;
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);

/// Registers BBR v3 under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<Bbr3Params>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Bbr3Params {
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default = "default_loss_thresh")]
    loss_thresh: f64,
    #[serde(default = "default_beta")]
    beta: f64,
    #[serde(default = "default_headroom")]
    headroom: f64,
}

fn default_loss_thresh() -> f64 {
    LOSS_THRESH
}
fn default_beta() -> f64 {
    BETA
}
fn default_headroom() -> f64 {
    HEADROOM
}

impl ParamTable for Bbr3Params {
    const PARAMS: &'static [ParamSpec] = &[
        SEED_PARAM,
        ParamSpec::new(
            "loss_thresh",
            Kind::Number,
            "loss rate above which a bandwidth probe went too far (sets inflight_hi)",
            "google/bbr v3 tcp_bbr.c bbr_loss_thresh; draft-ietf-ccwg-bbr BBR.LossThresh",
        )
        .range(0.001, 0.5),
        ParamSpec::new(
            "beta",
            Kind::Number,
            "fraction of the bounds kept on loss",
            "google/bbr v3 tcp_bbr.c bbr_beta; draft-ietf-ccwg-bbr BBR.Beta",
        )
        .range(0.05, 0.99),
        ParamSpec::new(
            "headroom",
            Kind::Number,
            "fraction of inflight_hi left unused in PROBE_BW CRUISE",
            "google/bbr v3 tcp_bbr.c bbr_inflight_headroom; draft-ietf-ccwg-bbr BBR.Headroom",
        )
        .range(0.0, 0.9),
    ];
}

/// Builds BBR v3 from scenario parameters (`seed`, `loss_thresh`, `beta`, `headroom`), checking
/// them against the declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: Bbr3Params = params::parse(NAME, p)?;
    Ok(Box::new(BbrV3::new(
        ctx,
        BbrV3Config {
            seed: params.seed.unwrap_or_else(|| default_seed(ctx, 3)),
            loss_thresh: params.loss_thresh,
            beta: params.beta,
            headroom: params.headroom,
        },
    )))
}

/// Tunables of [`BbrV3`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrV3Config {
    /// Seed of the random wait (time and rounds) before each bandwidth probe; [`build`] derives
    /// one per flow when the scenario gives none.
    pub seed: u64,
    /// Loss rate above which a probe went too far and `inflight_hi` is set, as [`LOSS_THRESH`].
    pub loss_thresh: f64,
    /// Fraction of the bounds kept on loss (0.7).
    pub beta: f64,
    /// Fraction of `inflight_hi` that CRUISE leaves unused, as [`HEADROOM`].
    pub headroom: f64,
}

impl Default for BbrV3Config {
    fn default() -> Self {
        BbrV3Config {
            seed: 0,
            loss_thresh: LOSS_THRESH,
            beta: BETA,
            headroom: HEADROOM,
        }
    }
}

/// BBR v3's states (google/bbr `enum bbr_mode`; draft-ietf-ccwg-bbr's `BBR.state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Rate and window at the startup gains until the bandwidth stops growing or loss is too
    /// high.
    Startup,
    /// Pacing at [`DRAIN_PACING_GAIN`] until in flight is down to the gain-1 target (one BDP
    /// plus the quantization budget).
    Drain,
    /// The bandwidth-probing cycle, in one of its phases.
    ProbeBw(Phase),
    /// Half a BDP in flight, so that a fresh min RTT is measured.
    ProbeRtt,
}

/// The PROBE_BW phases (google/bbr `enum bbr_pacing_gain_phase`; the draft's ProbeBW_DOWN,
/// ProbeBW_CRUISE, ProbeBW_REFILL, ProbeBW_UP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Paced at [`PROBE_DOWN_GAIN`] to drain the queue of the last probe.
    Down,
    /// Paced at the bandwidth, in flight kept below `inflight_hi` less the headroom, until it is
    /// time to probe.
    Cruise,
    /// One round at the bandwidth with the short-term bounds lifted, filling the pipe before UP.
    Refill,
    /// Paced at [`PROBE_UP_GAIN`], raising `inflight_hi` while loss stays below the threshold.
    Up,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw(Phase::Down) => "probe_bw_down",
            Mode::ProbeBw(Phase::Cruise) => "probe_bw_cruise",
            Mode::ProbeBw(Phase::Refill) => "probe_bw_refill",
            Mode::ProbeBw(Phase::Up) => "probe_bw_up",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// google/bbr `bbr_ack_phase`: which part of a bandwidth probe the ACKs now arriving describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The per-ACK (or per-lost-packet) facts BBR v3 judges: Linux's `rate_sample` fields it uses.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// Bytes in flight when the sampled packet was sent.
    tx_in_flight: Bytes,
    /// Bytes declared lost since the sampled packet was sent.
    lost: Bytes,
    is_app_limited: bool,
}

/// BBR v3 on one flow: the model (bandwidth and in-flight bounds, min RTT), the state machine
/// over it and the window and pacing rate it sets.
#[derive(Clone, Debug)]
pub struct BbrV3 {
    cfg: BbrV3Config,
    mss: Bytes,
    init_cwnd: Bytes,
    mode: Mode,
    cwnd: Bytes,
    pacing: Pacing,
    /// Max-bandwidth filter: [previous cycle, current cycle].
    bw_hi: [Rate; 2],
    bw_lo: Option<Rate>,
    inflight_hi: Option<Bytes>,
    inflight_lo: Option<Bytes>,
    bw_latest: Rate,
    inflight_latest: Bytes,
    rounds: Rounds,
    loss_rounds: RoundTracker,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    min_rtt: MinRttFilter,
    full_bw: Rate,
    full_bw_cnt: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    cycle_stamp: Time,
    probe_wait: Duration,
    rounds_since_probe: u64,
    /// Bytes acked per MSS of inflight_hi growth in UP; `None` when not growing.
    bw_probe_up_cnt: Option<Bytes>,
    bw_probe_up_acks: Bytes,
    bw_probe_up_rounds: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    ack_phase: AckPhase,
    /// Linux `tp->is_cwnd_limited`: the window was full at some send in this or the last round.
    cwnd_limited_this_round: bool,
    cwnd_limited_last_round: bool,
    probe_rtt: ProbeRtt,
    idle_restart: bool,
    ack_agg: AckAggregation,
    recovery: Recovery,
    tx: TxRecords,
    lost_total: Bytes,
    pending_losses: Bytes,
    rng: Prng,
    clamp: Option<Bytes>,
    last: LastAck,
}

impl BbrV3 {
    /// Starts in STARTUP at the initial window, paced as that window over 1 ms at the startup
    /// gain until the first RTT sample.
    pub fn new(ctx: &CcContext, cfg: BbrV3Config) -> Self {
        let (mss, init_cwnd) = cwnd::initial(ctx);
        BbrV3 {
            cfg,
            mss,
            init_cwnd,
            mode: Mode::Startup,
            cwnd: init_cwnd,
            pacing: Pacing::new(init_cwnd, STARTUP_PACING_GAIN),
            bw_hi: [Rate::ZERO; 2],
            bw_lo: None,
            inflight_hi: None,
            inflight_lo: None,
            bw_latest: Rate::ZERO,
            inflight_latest: 0,
            rounds: Rounds::default(),
            loss_rounds: RoundTracker::default(),
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            min_rtt: MinRttFilter::new(ctx.now, MIN_RTT_WINDOW, PROBE_RTT_INTERVAL),
            full_bw: Rate::ZERO,
            full_bw_cnt: 0,
            full_bw_now: false,
            full_bw_reached: false,
            cycle_stamp: ctx.now,
            probe_wait: Duration::ZERO,
            rounds_since_probe: 0,
            bw_probe_up_cnt: None,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            ack_phase: AckPhase::Init,
            cwnd_limited_this_round: false,
            cwnd_limited_last_round: false,
            probe_rtt: ProbeRtt::default(),
            idle_restart: false,
            ack_agg: AckAggregation::new(ctx.now),
            recovery: Recovery::new(0),
            tx: TxRecords::default(),
            lost_total: 0,
            pending_losses: 0,
            rng: Prng::new(cfg.seed),
            clamp: None,
            last: LastAck::default(),
        }
    }

    fn max_bw(&self) -> Rate {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth the model uses: max_bw bounded by bw_lo.
    fn bw(&self) -> Rate {
        self.bw_lo.map_or(self.max_bw(), |lo| lo.min(self.max_bw()))
    }

    fn gains(&self) -> (f64, f64) {
        match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw(Phase::Up) => (PROBE_UP_GAIN, CWND_GAIN + PROBE_UP_EXTRA_CWND_GAIN),
            Mode::ProbeBw(Phase::Down) => (PROBE_DOWN_GAIN, CWND_GAIN),
            Mode::ProbeBw(_) => (1.0, CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        }
    }

    fn min_target(&self) -> Bytes {
        cwnd::min_target(self.mss)
    }

    fn is_probing_bw(&self) -> bool {
        matches!(
            self.mode,
            Mode::Startup | Mode::ProbeBw(Phase::Refill) | Mode::ProbeBw(Phase::Up)
        )
    }

    /// v3 `bbr_quantization_budget`: at least 3 TSO bursts and 4 packets, plus 2 packets in UP.
    fn quantization_budget(&self, cwnd: Bytes) -> Bytes {
        let goal = 3 * tso_goal_v3(self.pacing.rate(), self.min_rtt.min_rtt, self.mss) * self.mss;
        let mut w = cwnd.max(goal).max(self.min_target());
        if self.mode == Mode::ProbeBw(Phase::Up) {
            w = w.saturating_add(2 * self.mss);
        }
        w
    }

    fn bdp(&self, bw: Rate, gain: f64) -> Bytes {
        bdp(bw, self.min_rtt.min_rtt, gain, self.mss, self.init_cwnd)
    }

    fn inflight(&self, bw: Rate, gain: f64) -> Bytes {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_target_inflight`: the BDP, unless congestion cut cwnd below it.
    fn target_inflight(&self) -> Bytes {
        self.inflight(self.bw(), 1.0).min(self.cwnd)
    }

    fn inflight_with_headroom(&self) -> Bytes {
        let Some(hi) = self.inflight_hi else {
            return Bytes::MAX;
        };
        let headroom = ((hi as f64 * self.cfg.headroom) as Bytes).max(1);
        hi.saturating_sub(headroom).max(self.min_target())
    }

    fn probe_rtt_cwnd(&self) -> Bytes {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN)
            .max(self.min_target())
    }

    fn is_inflight_too_high(&self, s: &Sample) -> bool {
        s.lost > 0
            && s.tx_in_flight > 0
            && s.lost as f64 > s.tx_in_flight as f64 * self.cfg.loss_thresh
    }

    /// `bbr_inflight_hi_from_lost_skb`: the in-flight level at which the loss rate crossed the
    /// threshold, within the lost packet of `pkt` bytes.
    fn inflight_hi_from_lost(&self, s: &Sample, pkt: Bytes) -> Option<Bytes> {
        let inflight_prev = s.tx_in_flight.checked_sub(pkt)?;
        let lost_prev = s.lost.checked_sub(pkt)?;
        let budget = (inflight_prev as f64 * self.cfg.loss_thresh).ceil() as Bytes;
        let prefix = if lost_prev >= budget {
            0
        } else {
            ((budget - lost_prev) as f64 / (1.0 - self.cfg.loss_thresh)) as Bytes
        };
        Some(inflight_prev.saturating_add(prefix))
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = Rate::ZERO;
        self.inflight_latest = 0;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = None;
        self.inflight_lo = None;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = Rate::ZERO;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == Rate::ZERO {
            return; // no samples in this cycle: keep the old window
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = Rate::ZERO;
    }

    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(PROBE_RAND_ROUNDS);
        let rand_us = self.rng.below(PROBE_WAIT_RAND.as_nanos() / 1000);
        self.probe_wait = PROBE_WAIT_BASE + Duration::from_micros(rand_us);
    }

    fn start_probe_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = None;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.rounds.restart();
        self.mode = Mode::ProbeBw(Phase::Down);
    }

    fn start_probe_cruise(&mut self) {
        if let (Some(lo), Some(hi)) = (self.inflight_lo, self.inflight_hi) {
            self.inflight_lo = Some(lo.min(hi));
        }
        self.mode = Mode::ProbeBw(Phase::Cruise);
    }

    fn start_probe_refill(&mut self, up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.rounds.restart();
        self.mode = Mode::ProbeBw(Phase::Refill);
    }

    fn start_probe_up(&mut self, now: Time, sample_bw: Rate) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.rounds.restart();
        self.cycle_stamp = now;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.mode = Mode::ProbeBw(Phase::Up);
        self.raise_inflight_hi_slope();
    }

    /// Each round of UP doubles how fast inflight_hi grows: one MSS per cwnd/2^n bytes acked.
    fn raise_inflight_hi_slope(&mut self) {
        let growth = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = Some((self.cwnd / growth).max(self.mss));
    }

    fn probe_inflight_hi_upward(&mut self, acked: Bytes, cwnd_limited: bool) {
        let Some(hi) = self.inflight_hi else { return };
        if !cwnd_limited || self.cwnd < hi {
            return; // not using inflight_hi fully, so no evidence it could be higher
        }
        if let Some(cnt) = self.bw_probe_up_cnt {
            self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(acked);
            if self.bw_probe_up_acks >= cnt {
                let delta = self.bw_probe_up_acks / cnt;
                self.bw_probe_up_acks -= delta * cnt;
                self.inflight_hi = Some(hi.saturating_add(delta.saturating_mul(self.mss)));
            }
        }
        if self.rounds.start {
            self.raise_inflight_hi_slope();
        }
    }

    /// `bbr_handle_inflight_too_high`: once per probe, bound inflight_hi and stop probing.
    fn handle_inflight_too_high(&mut self, now: Time, s: &Sample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.is_app_limited {
            let floor = (self.target_inflight() as f64 * self.cfg.beta) as Bytes;
            self.inflight_hi = Some(s.tx_in_flight.max(floor));
        }
        if self.mode == Mode::ProbeBw(Phase::Up) {
            self.start_probe_down(now);
        }
    }

    /// `bbr_adapt_upper_bounds`; true when it decided a state transition.
    fn adapt_upper_bounds(
        &mut self,
        now: Time,
        s: &Sample,
        ack: &AckEvent,
        cwnd_limited: bool,
    ) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.rounds.start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.rounds.start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            let in_probe_bw = matches!(self.mode, Mode::ProbeBw(_));
            if in_probe_bw && !s.is_app_limited {
                self.advance_max_bw_filter();
            }
            if in_probe_bw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_probe_refill(0);
                return true;
            }
        }
        if self.is_inflight_too_high(s) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, s);
            }
        } else {
            let Some(hi) = self.inflight_hi else {
                return false;
            };
            if s.tx_in_flight > hi {
                self.inflight_hi = Some(s.tx_in_flight);
            }
            if self.mode == Mode::ProbeBw(Phase::Up) {
                self.probe_inflight_hi_upward(ack.acked_bytes, cwnd_limited);
            }
        }
        false
    }

    fn check_time_to_probe_bw(&mut self, now: Time) -> bool {
        let reno_rounds = (self.target_inflight() / self.mss).min(PROBE_MAX_ROUNDS);
        if now > self.cycle_stamp + self.probe_wait || self.rounds_since_probe >= reno_rounds {
            self.start_probe_refill(0);
            return true;
        }
        false
    }

    fn update_cycle_phase(
        &mut self,
        now: Time,
        ack: &AckEvent,
        s: &Sample,
        sample_bw: Rate,
        cwnd_limited: bool,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(now, s, ack, cwnd_limited) {
            return;
        }
        let Mode::ProbeBw(phase) = self.mode else {
            return;
        };
        let inflight = ack.prior_in_flight;
        match phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(now);
            }
            Phase::Refill => {
                // After a round of REFILL the ACKs start to reflect a full pipe: probe.
                if self.rounds.start {
                    self.bw_probe_samples = true;
                    self.start_probe_up(now, sample_bw);
                }
            }
            Phase::Up => {
                let hi = self.inflight_hi.unwrap_or(Bytes::MAX);
                let mut done = false;
                if self.prev_probe_too_high && inflight >= hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if cwnd_limited && self.cwnd >= hi {
                    // inflight_hi is what limits growth; the bandwidth plateau says nothing.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_probe_down(now);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(now) {
                    return;
                }
                if inflight <= self.inflight_with_headroom()
                    && inflight <= self.inflight(self.max_bw(), 1.0)
                {
                    self.start_probe_cruise();
                }
            }
        }
    }

    fn check_loss_too_high_in_startup(&mut self, s: &Sample, had_losses: bool) {
        if self.full_bw_reached {
            return;
        }
        if had_losses {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(0xf);
        }
        if self.loss_round_start
            && self.recovery.state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_COUNT
            && self.is_inflight_too_high(s)
        {
            self.full_bw_reached = true;
            self.inflight_hi = Some(self.inflight(self.max_bw(), 1.0).max(self.inflight_latest));
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_full_bw_reached(&mut self, sample_bw: Rate, app_limited: bool) {
        if self.full_bw_now || app_limited {
            return;
        }
        if sample_bw >= self.full_bw.mul_f64(FULL_BW_THRESH) {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.rounds.start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_COUNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    fn check_drain(&mut self, now: Time, in_flight: Bytes) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain && in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.start_probe_down(now);
        }
    }

    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bw() || !self.loss_in_round {
            return;
        }
        let bw_lo = self.bw_lo.unwrap_or(self.max_bw());
        let inflight_lo = self.inflight_lo.unwrap_or(self.cwnd);
        self.bw_lo = Some(
            self.bw_latest
                .max(bw_lo.mul_f64(self.cfg.beta))
                .max(Rate(1)),
        );
        self.inflight_lo = Some(
            self.inflight_latest
                .max((inflight_lo as f64 * self.cfg.beta) as Bytes),
        );
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.start_probe_down(now);
            self.start_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn check_probe_rtt_done(&mut self, now: Time) {
        let prior_cwnd = self.recovery.prior_cwnd;
        if self
            .probe_rtt
            .leave_if_done(now, &mut self.min_rtt, &mut self.cwnd, prior_cwnd)
        {
            self.exit_probe_rtt(now);
        }
    }

    fn update_min_rtt(&mut self, now: Time, ack: &AckEvent, delivered_any: bool) {
        let expired = self.min_rtt.update(now, ack.min_rtt_sample);
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.recovery.save_cwnd(self.cwnd, true);
            self.probe_rtt.enter();
            self.ack_phase = AckPhase::ProbeStopping;
            self.rounds.restart();
        }
        if self.mode == Mode::ProbeRtt {
            let target = self.probe_rtt_cwnd();
            if self.probe_rtt.on_ack(
                now,
                ack.in_flight,
                target,
                PROBE_RTT_DURATION,
                &mut self.rounds,
            ) {
                self.check_probe_rtt_done(now);
            }
        }
        if delivered_any {
            self.idle_restart = false;
        }
    }

    fn aggregation_cwnd(&self) -> Bytes {
        let bw = self.bw();
        ((self.ack_agg.extra_acked() as f64 * EXTRA_ACKED_GAIN) as Bytes)
            .min(bw.bytes_in(EXTRA_ACKED_MAX))
    }

    fn set_cwnd(&mut self, acked: Bytes, gain: f64) {
        if acked > 0 {
            let target = self.quantization_budget(
                self.bdp(self.bw(), gain)
                    .saturating_add(self.aggregation_cwnd()),
            );
            let early = self.cwnd < 2 * self.init_cwnd;
            let (full, floor) = (self.full_bw_reached, self.min_target());
            self.cwnd = cwnd::grow(self.cwnd, acked, target, full, early, floor);
        }
        self.apply_caps();
    }

    /// Linux `snd_cwnd_clamp`, the PROBE_RTT cap and `bbr_bound_cwnd_for_inflight_model`.
    fn apply_caps(&mut self) {
        let mut w = cwnd::clamp(self.cwnd, self.clamp);
        if self.mode == Mode::ProbeRtt {
            w = w.min(self.probe_rtt_cwnd());
        }
        let mut cap = match self.mode {
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeRtt => self.inflight_with_headroom(),
            Mode::ProbeBw(_) => self.inflight_hi.unwrap_or(Bytes::MAX),
            _ => Bytes::MAX,
        };
        cap = cap.min(self.inflight_lo.unwrap_or(Bytes::MAX));
        cap = cap.max(self.min_target());
        self.cwnd = cwnd::at_least_minimum(w.min(cap), self.mss);
    }

    /// The state the flow is in.
    #[cfg(test)]
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The long-term in-flight bound in bytes; `None` (no bound) until loss was too high.
    #[cfg(test)]
    pub(crate) fn inflight_hi(&self) -> Option<Bytes> {
        self.inflight_hi
    }
}

impl CongestionControl for BbrV3 {
    fn name(&self) -> &str {
        NAME
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.rounds.on_sent(sent.pn);
        self.probe_rtt.on_sent(sent.pn);
        self.loss_rounds.on_sent(sent.pn);
        if sent.in_flight.saturating_add(sent.bytes) > self.cwnd {
            self.cwnd_limited_this_round = true;
        }
        self.tx.insert(
            TxRecord {
                pn: sent.pn,
                in_flight: sent.in_flight,
                lost: self.lost_total,
                app_limited: sent.app_limited || self.probe_rtt.covers(sent.pn),
            },
            self.mss,
        );
        if self.last.restarts_from_idle(sent, &self.pacing) {
            self.idle_restart = true;
            self.ack_agg.restart(now);
            match self.mode {
                Mode::ProbeBw(_) if self.bw() > Rate::ZERO => {
                    self.pacing.set(self.bw(), 1.0);
                }
                Mode::ProbeRtt => self.check_probe_rtt_done(now),
                _ => {}
            }
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        if ack.mss > 0 {
            self.mss = ack.mss;
        }
        let losses = std::mem::take(&mut self.pending_losses);
        self.last.record(ack);
        // Linux bbr_set_state: leaving the loss state restores the window saved when it began.
        if self.recovery.on_ack(ack) == Some(CaState::Loss) {
            self.cwnd = self.cwnd.max(self.recovery.prior_cwnd);
        }
        // An ACK that acknowledges nothing new carries no sample for v3.
        let rs = self.probe_rtt.rate_sample(ack, ack.acked_bytes > 0);

        if self.rounds.on_ack(rs.as_ref(), ack.largest_acked) {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.cwnd_limited_last_round = std::mem::take(&mut self.cwnd_limited_this_round);
        }
        let cwnd_limited = self.cwnd_limited_this_round || self.cwnd_limited_last_round;
        let sample_bw = rs.map_or(Rate::ZERO, |r| r.delivery_rate);
        let app_limited = rs.map_or(ack.app_limited, |r| r.is_app_limited);
        let s = match self.tx.get(ack.largest_acked) {
            Some(rec) => Sample {
                tx_in_flight: rec.in_flight,
                lost: self.lost_total.saturating_sub(rec.lost),
                is_app_limited: app_limited,
            },
            // A transport that does not report sends: the flight before this ACK stands in.
            None => Sample {
                tx_in_flight: ack.prior_in_flight,
                lost: losses,
                is_app_limited: app_limited,
            },
        };

        // bbr_update_latest_delivery_signals
        self.loss_round_start = false;
        if let Some(r) = rs {
            self.bw_latest = self.bw_latest.max(sample_bw);
            self.inflight_latest = self.inflight_latest.max(r.delivered);
            if self.loss_rounds.on_ack(ack.largest_acked) {
                self.loss_round_start = true;
            }
        }

        // bbr_update_congestion_signals
        if rs.is_some() {
            if !app_limited || sample_bw >= self.max_bw() {
                self.bw_hi[1] = self.bw_hi[1].max(sample_bw);
            }
            self.loss_in_round |= losses > 0;
            if self.loss_round_start {
                self.adapt_lower_bounds();
                self.loss_in_round = false;
            }
            let window = if self.full_bw_reached {
                EXTRA_ACKED_WIN_ROUNDS
            } else {
                1
            };
            let bw = self.bw();
            self.ack_agg.update(
                now,
                ack.acked_bytes,
                bw,
                self.cwnd,
                self.rounds.start,
                window,
            );
        }
        self.check_loss_too_high_in_startup(&s, losses > 0);
        if rs.is_some() {
            self.check_full_bw_reached(sample_bw, app_limited);
        }
        self.check_drain(now, ack.in_flight);
        self.update_cycle_phase(now, ack, &s, sample_bw, cwnd_limited);
        self.update_min_rtt(now, ack, rs.is_some_and(|r| r.delivered > 0));

        let (pacing_gain, cwnd_gain) = self.gains();
        let (bw, full) = (self.bw(), self.full_bw_reached);
        self.pacing.update(
            &ack.rtt,
            self.cwnd,
            STARTUP_PACING_GAIN,
            bw,
            pacing_gain,
            full,
        );
        self.set_cwnd(ack.acked_bytes, cwnd_gain);

        // bbr_advance_latest_delivery_signals
        if self.loss_round_start {
            if let Some(r) = rs {
                self.bw_latest = sample_bw;
                self.inflight_latest = r.delivered;
            }
        }
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        if loss.mss > 0 {
            self.mss = loss.mss;
        }
        self.pending_losses = self.pending_losses.saturating_add(loss.lost_bytes);
        self.lost_total = self.lost_total.saturating_add(loss.lost_bytes);
        let out = self
            .recovery
            .on_loss(now, loss, self.cwnd, self.mode == Mode::ProbeRtt);
        // bbr_note_loss: the loss round runs until data sent from now on is acknowledged.
        if !self.loss_in_round {
            self.loss_rounds.start();
        }
        self.loss_in_round = true;
        if out.persistent {
            // bbr_set_state(TCP_CA_Loss), and TCP's cwnd = in flight + 1 packet.
            self.reset_full_bw();
            if !self.is_probing_bw() && self.inflight_lo.is_none() {
                self.inflight_lo = Some(self.cwnd.max(self.recovery.prior_cwnd));
            }
            self.cwnd = loss.in_flight.saturating_add(self.mss);
        }
        // bbr_skb_marked_lost: while probing, see whether loss in the flight leading up to the
        // lost packet crossed the threshold, and at which in-flight level.
        if self.bw_probe_samples {
            if let Some(rec) = self.tx.get(loss.largest_lost_pn) {
                let s = Sample {
                    tx_in_flight: rec.in_flight,
                    lost: self.lost_total.saturating_sub(rec.lost),
                    is_app_limited: rec.app_limited,
                };
                if self.is_inflight_too_high(&s) {
                    let pkt = loss.lost_bytes.min(self.mss);
                    if let Some(level) = self.inflight_hi_from_lost(&s, pkt) {
                        let s = Sample {
                            tx_in_flight: level,
                            ..s
                        };
                        self.handle_inflight_too_high(now, &s);
                    }
                }
            }
        }
        self.apply_caps();
    }

    fn cwnd(&self) -> Bytes {
        self.cwnd
    }

    fn pacing_rate(&self) -> Option<Rate> {
        Some(Rate(self.pacing.rate().as_bps().max(1)))
    }

    fn in_slow_start(&self) -> bool {
        self.mode == Mode::Startup
    }

    fn telemetry(&self) -> Telemetry {
        let (pacing_gain, cwnd_gain) = self.gains();
        let opt = |v: Option<Bytes>| v.map_or(f64::NAN, |b| b as f64);
        let mut t = Telemetry::new(self.mode.name());
        t.push("bw_mbps", self.bw().as_mbps_f64());
        t.push("max_bw_mbps", self.max_bw().as_mbps_f64());
        t.push(
            "bw_lo_mbps",
            self.bw_lo.map_or(f64::NAN, |b| b.as_mbps_f64()),
        );
        t.push("min_rtt_ms", self.min_rtt.min_rtt_ms());
        t.push("inflight_hi_bytes", opt(self.inflight_hi));
        t.push("inflight_lo_bytes", opt(self.inflight_lo));
        t.push("pacing_gain", pacing_gain);
        t.push("cwnd_gain", cwnd_gain);
        t.push("extra_acked_bytes", self.ack_agg.extra_acked() as f64);
        t.push("full_bw_reached", self.full_bw_reached as u8 as f64);
        t.push("round", self.rounds.count as f64);
        t.push("probe_wait_s", self.probe_wait.as_secs_f64());
        t
    }

    /// `cwnd` and `pacing_rate` are written as is (the model recomputes both on the next ACK),
    /// `cwnd_clamp` bounds the window as Linux `snd_cwnd_clamp`; BBR has no ssthresh
    /// (`handover::calibrate`).
    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        handover::calibrate(c, &mut self.clamp, &mut self.cwnd, &mut self.pacing);
        self.apply_caps();
    }

    fn handover_state(&self) -> HandoverState {
        handover::state(self.cwnd, &self.pacing, self.bw(), &self.last)
    }

    /// As [BBR v1's](super::v1::BbrV1) (`handover::adopt`); with a bandwidth estimate it is the
    /// max-bandwidth filter's and PROBE_BW starts cruising, the next probe 2–3 s away.
    fn adopt(&mut self, now: Time, from: &HandoverState) {
        let (cwnd, min_rtt) = (&mut self.cwnd, &mut self.min_rtt);
        let (last, pacing) = (&mut self.last, &mut self.pacing);
        let gain = STARTUP_PACING_GAIN;
        self.rounds.restart_at_next_send();
        if let Some(bw) = handover::adopt(now, from, cwnd, min_rtt, last, pacing, gain) {
            self.bw_hi = [Rate::ZERO, bw];
            self.full_bw = bw;
            self.full_bw_reached = true;
            self.start_probe_down(now);
            self.start_probe_cruise();
        }
        self.apply_caps();
    }
}
