//! BBR v1 as Linux `net/ipv4/tcp_bbr.c` and draft-cardwell-iccrg-bbr-congestion-control-00.
//!
//! Model: BtlBw is the windowed max of delivery-rate samples over 10 packet-timed round trips,
//! min RTT the windowed min over 10 s. Control: pacing rate = pacing_gain · BtlBw · (1 − 1 %),
//! cwnd = cwnd_gain · BtlBw · min_RTT + the TSO quantization budget. States STARTUP (gain
//! 2/ln 2), DRAIN (its inverse), PROBE_BW (gain cycle 5/4, 3/4, 1 ×6 starting at a random phase
//! that is never 3/4) and PROBE_RTT (4 packets for 200 ms and a round, when min RTT was not
//! refreshed for 10 s). Loss: packet conservation for the first round of recovery, then the window
//! saved at the start of recovery is restored.
//!
//! The ACK-aggregation allowance (`extra_acked`, added to Linux's v1 in 4.19: `tcp_bbr.c`
//! `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`) is a parameter, off by default as
//! in the original v1, where with ACK aggregation the cwnd of 2·BDP limits BBR (its known
//! behaviour); `stack = "linux"` turns it on, as the kernel has it. Not modelled: long-term
//! policer detection (`lt_bw`), and the earliest-departure-time correction of in-flight
//! (`bbr_packets_in_net_at_edt`, which concerns the kernel's pacing layer).

use super::ack_aggregation::AckAggregation;
use super::bdp::bdp;
use super::cwnd;
use super::handover::{self, LastAck};
use super::min_rtt::{MinRttFilter, MIN_RTT_WINDOW};
use super::pacing::Pacing;
use super::prng::{default_seed, Prng, SEED_PARAM};
use super::probe_rtt::{ProbeRtt, PROBE_RTT_DURATION};
use super::quantum::{tso_goal_v1, TSO_MAX_SEGS};
use super::recovery::{CaState, Recovery};
use super::rounds::Rounds;
use super::scavenger::{LinuxMdev, ScavengerRule};
use crate::cc::{Calibration, CcContext, CongestionControl, HandoverState, Telemetry};
use crate::estimators::windowed_filter::WindowedFilter;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Duration, Rate, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "bbr";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "BBR v1 (Linux tcp_bbr.c, draft-cardwell-iccrg-bbr-congestion-control-00): model-based rate and window";

/// Linux `bbr_high_gain` = 2/ln 2 ≈ 2.885 (2885/1000 in 1/256 units, plus one): the smallest gain
/// that doubles the delivery rate every round in STARTUP.
pub const HIGH_GAIN: f64 = 2.885;
/// Linux `bbr_cwnd_gain`: cwnd = 2·BDP in PROBE_BW, tolerating delayed and stretched ACKs.
pub const CWND_GAIN: f64 = 2.0;
/// Linux `bbr_pacing_gain`: the PROBE_BW cycle, one phase per min RTT.
pub const PACING_GAIN_CYCLE: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_LEN: usize = 8;
/// Linux `bbr_cycle_rand`: the starting phase is drawn from the 7 phases other than 3/4.
const CYCLE_RAND: u64 = 7;
/// Linux `bbr_bw_rtts` = CYCLE_LEN + 2: BtlBw max-filter window in round trips.
pub const BW_FILTER_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// Linux `bbr_full_bw_thresh`: STARTUP continues while BtlBw grows by at least 25 % a round…
pub const FULL_BW_THRESH: f64 = 1.25;
/// … and the pipe is full after `bbr_full_bw_cnt` = 3 rounds without such growth.
pub const FULL_BW_COUNT: u32 = 3;
/// Linux `TCP_INIT_CWND`: cwnd keeps growing until this many packets were delivered.
const INIT_CWND_PACKETS: u64 = 10;
/// Linux `bbr_extra_acked_win_rtts`: the extra_acked max filter spans 5–10 round trips.
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Linux `bbr_extra_acked_max_us`: the allowance is at most 100 ms at the estimated bandwidth
/// (`bbr_extra_acked_gain` is 1).
pub const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// ns-3 3.37 `TcpBbr::SetSendQuantum`: the send quantum is one segment whatever the pacing rate
/// (ns-3 does not model TSO), so ns-3's quantization budget is 3 segments where Linux's is 3 TSO
/// goals. `send_quantum_packets = 1` gives polycc's BBR that budget (VALIDATION.md, D8).
pub const NS3_SEND_QUANTUM_PACKETS: u64 = 1;

/// Registers BBR v1 under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<BbrParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct BbrParams {
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default = "default_cwnd_gain")]
    cwnd_gain: f64,
    #[serde(default = "default_startup_gain")]
    startup_gain: f64,
    /// Packets per send quantum in the quantization budget; absent: Linux's TSO goal.
    #[serde(default)]
    send_quantum_packets: Option<u64>,
    #[serde(default)]
    extra_acked: bool,
}

fn default_cwnd_gain() -> f64 {
    CWND_GAIN
}
fn default_startup_gain() -> f64 {
    HIGH_GAIN
}

impl ParamTable for BbrParams {
    const PARAMS: &'static [ParamSpec] = &[
        SEED_PARAM,
        // At least one BDP in flight; above 10 the window no longer bounds anything.
        ParamSpec::new(
            "cwnd_gain",
            Kind::Number,
            "PROBE_BW window in BDPs",
            "Linux tcp_bbr.c bbr_cwnd_gain",
        )
        .range(1.0, 10.0),
        // Below 1.5 STARTUP would barely grow and never see the 25 % growth it waits for.
        ParamSpec::new(
            "startup_gain",
            Kind::Number,
            "STARTUP pacing and window gain (DRAIN paces at its inverse)",
            "Linux tcp_bbr.c bbr_high_gain = 2/ln 2",
        )
        .range(1.5, 10.0),
        // Linux never bursts more than TSO_MAX_SEGS segments; fewer than one is no quantum.
        ParamSpec::new(
            "send_quantum_packets",
            Kind::Integer,
            "packets per send quantum in the quantization budget (1 = ns-3 TcpBbr)",
            "Linux tcp_bbr.c bbr_tso_segs_goal; ns-3 3.37 TcpBbr::SetSendQuantum",
        )
        .range(1.0, TSO_MAX_SEGS as f64)
        .when_absent("Linux's TSO goal, about 1 ms of the pacing rate"),
        ParamSpec::new(
            "extra_acked",
            Kind::Bool,
            "ACK-aggregation allowance: the cwnd target adds what ACK epochs delivered beyond the bandwidth estimate",
            "Linux tcp_bbr.c bbr_update_ack_aggregation",
        ),
    ];
}

/// Builds BBR v1 from scenario parameters (`seed`, `cwnd_gain`, `startup_gain`,
/// `send_quantum_packets`, `extra_acked`), checking them against the declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: BbrParams = params::parse(NAME, p)?;
    Ok(Box::new(BbrV1::new(
        ctx,
        BbrV1Config {
            seed: params.seed.unwrap_or_else(|| default_seed(ctx, 1)),
            cwnd_gain: params.cwnd_gain,
            startup_gain: params.startup_gain,
            send_quantum_packets: params.send_quantum_packets,
            extra_acked: params.extra_acked,
            scavenger: None,
        },
    )))
}

/// Tunables of [`BbrV1`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrV1Config {
    /// Seed of the random PROBE_BW starting phase (Linux `bbr_cycle_rand`); [`build`] derives
    /// one per flow when the scenario gives none.
    pub seed: u64,
    /// PROBE_BW cwnd gain.
    pub cwnd_gain: f64,
    /// STARTUP pacing and cwnd gain; DRAIN paces at its inverse.
    pub startup_gain: f64,
    /// Fixed send quantum (packets) of the quantization budget; `None`: Linux's TSO goal, about
    /// 1 ms of the pacing rate (`tso_goal_v1`). `Some(NS3_SEND_QUANTUM_PACKETS)` is ns-3's.
    pub send_quantum_packets: Option<u64>,
    /// Linux's ACK-aggregation allowance: once the pipe is full, the cwnd target adds the most
    /// data an ACK epoch delivered beyond what the bandwidth estimate explains (max over 5–10
    /// rounds, at most the window and 100 ms at that bandwidth), so that aggregated ACKs (Wi-Fi,
    /// delayed and stretched ACKs) do not leave the window short between bursts.
    pub extra_acked: bool,
    /// BBR-S: yield by forcing PROBE_RTT on RTT deviation (see [`super::scavenger`]).
    pub scavenger: Option<ScavengerRule>,
}

/// BBR v1's states (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `BBR_STARTUP`: rate and window at the high gain until the bandwidth stops growing.
    Startup,
    /// `BBR_DRAIN`: pacing at the inverse gain until in flight is down to the gain-1 target
    /// (one BDP plus the quantization budget).
    Drain,
    /// `BBR_PROBE_BW`: the gain cycle around the estimated bandwidth.
    ProbeBw,
    /// `BBR_PROBE_RTT`: the 4-packet window, so that a fresh min RTT is measured.
    ProbeRtt,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// BBR v1 on one flow: the model (BtlBw, min RTT), the state machine over it and the window
/// and pacing rate it sets.
#[derive(Clone, Debug)]
pub struct BbrV1 {
    cfg: BbrV1Config,
    mss: Bytes,
    init_cwnd: Bytes,
    mode: Mode,
    cwnd: Bytes,
    pacing: Pacing,
    /// BtlBw: max filter over `BW_FILTER_ROUNDS`, time in round counts.
    bw: WindowedFilter<Rate>,
    rounds: Rounds,
    min_rtt: MinRttFilter,
    full_bw: Rate,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    probe_rtt: ProbeRtt,
    /// How long the current PROBE_RTT holds its minimal window (200 ms, or BBR-S's forced hold).
    probe_rtt_hold: Duration,
    /// BBR-S: the kernel's smoothed RTT deviation the scavenger rule compares.
    rtt_dev: LinuxMdev,
    /// PROBE_RTT entries forced by the scavenger rule (telemetry).
    forced_probe_rtts: u64,
    idle_restart: bool,
    recovery: Recovery,
    packet_conservation: bool,
    /// Bytes declared lost since the last ACK (Linux `rs->losses`).
    pending_losses: Bytes,
    rng: Prng,
    clamp: Option<Bytes>,
    last: LastAck,
    /// `extra_acked`'s estimator (updated only when the parameter is on).
    ack_agg: AckAggregation,
}

impl BbrV1 {
    /// Starts in STARTUP at the initial window, paced as that window over 1 ms at the startup
    /// gain until the first RTT sample.
    pub fn new(ctx: &CcContext, cfg: BbrV1Config) -> Self {
        let (mss, init_cwnd) = cwnd::initial(ctx);
        BbrV1 {
            cfg,
            mss,
            init_cwnd,
            mode: Mode::Startup,
            cwnd: init_cwnd,
            pacing: Pacing::new(init_cwnd, cfg.startup_gain),
            bw: WindowedFilter::new_max(BW_FILTER_ROUNDS),
            rounds: Rounds::default(),
            min_rtt: MinRttFilter::new(ctx.now, MIN_RTT_WINDOW, MIN_RTT_WINDOW),
            full_bw: Rate::ZERO,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: ctx.now,
            probe_rtt: ProbeRtt::default(),
            probe_rtt_hold: PROBE_RTT_DURATION,
            rtt_dev: LinuxMdev::default(),
            forced_probe_rtts: 0,
            idle_restart: false,
            recovery: Recovery::new(init_cwnd),
            packet_conservation: false,
            pending_losses: 0,
            rng: Prng::new(cfg.seed),
            clamp: None,
            last: LastAck::default(),
            ack_agg: AckAggregation::new(ctx.now),
        }
    }

    fn max_bw(&self) -> Rate {
        self.bw.get().unwrap_or(Rate::ZERO)
    }

    fn gains(&self) -> (f64, f64) {
        match self.mode {
            Mode::Startup => (self.cfg.startup_gain, self.cfg.startup_gain),
            Mode::Drain => (1.0 / self.cfg.startup_gain, self.cfg.startup_gain),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], self.cfg.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        }
    }

    fn min_cwnd_target(&self) -> Bytes {
        cwnd::min_target(self.mss)
    }

    /// Linux `bbr_quantization_budget`: 3 TSO bursts for the end hosts, rounded up to an even
    /// number of packets, plus 2 packets in the 5/4 phase so that it really raises in-flight.
    /// DRAIN and the 3/4 phase stop at this target, so the budget is a standing queue.
    fn quantization_budget(&self, cwnd: Bytes) -> Bytes {
        let quantum = self
            .cfg
            .send_quantum_packets
            .unwrap_or_else(|| tso_goal_v1(self.pacing.rate(), self.mss));
        let mut packets = cwnd.div_ceil(self.mss) + 3 * quantum;
        packets = (packets + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            packets += 2;
        }
        packets.saturating_mul(self.mss)
    }

    /// Linux `bbr_inflight`: the in-flight target for `gain` (BDP plus quantization budget).
    fn inflight(&self, bw: Rate, gain: f64) -> Bytes {
        self.quantization_budget(bdp(
            bw,
            self.min_rtt.min_rtt,
            gain,
            self.mss,
            self.init_cwnd,
        ))
    }

    fn reset_probe_bw_mode(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    /// Linux `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, now: Time, ack: &AckEvent, losses: bool) -> bool {
        let min_rtt = self.min_rtt.min_rtt.unwrap_or(Duration::ZERO);
        let full_length = now - self.cycle_stamp > min_rtt;
        let gain = PACING_GAIN_CYCLE[self.cycle_idx];
        if gain == 1.0 {
            return full_length;
        }
        let inflight = ack.prior_in_flight;
        if gain > 1.0 {
            // The 5/4 phase lasts at least a min RTT and until it has raised in-flight to
            // 5/4·BDP or seen loss.
            full_length && (losses || inflight >= self.inflight(self.max_bw(), gain))
        } else {
            // The 3/4 phase ends early once the queue it drains is gone.
            full_length || inflight <= self.inflight(self.max_bw(), 1.0)
        }
    }

    /// Linux `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, app_limited: bool) {
        if self.full_bw_reached || !self.rounds.start || app_limited {
            return;
        }
        let max_bw = self.max_bw();
        if max_bw >= self.full_bw.mul_f64(FULL_BW_THRESH) {
            self.full_bw = max_bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_COUNT;
    }

    /// Linux `bbr_check_drain`.
    fn check_drain(&mut self, now: Time, in_flight: Bytes) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.reset_probe_bw_mode(now);
        }
    }

    fn check_probe_rtt_done(&mut self, now: Time) {
        let prior_cwnd = self.recovery.prior_cwnd;
        if self
            .probe_rtt
            .leave_if_done(now, &mut self.min_rtt, &mut self.cwnd, prior_cwnd)
        {
            self.reset_mode(now);
        }
    }

    /// Enters PROBE_RTT (Linux `bbr_update_min_rtt`'s entry): the window is saved and cut to
    /// 4 packets; once in flight is that low, it is held for `hold` and a round.
    fn enter_probe_rtt(&mut self, hold: Duration) {
        self.recovery.save_cwnd(self.cwnd, false);
        self.mode = Mode::ProbeRtt;
        self.probe_rtt.enter();
        self.probe_rtt_hold = hold;
    }

    /// Linux `bbr_update_min_rtt`, with PROBE_RTT entry and exit.
    fn update_min_rtt(&mut self, now: Time, ack: &AckEvent, delivered_any: bool) {
        let expired = self.min_rtt.update(now, ack.min_rtt_sample);
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.enter_probe_rtt(PROBE_RTT_DURATION);
        }
        if let Some(rule) = self.cfg.scavenger {
            // On the kernel's TCP, the kernel's own mdev_us; elsewhere its estimator, which
            // takes the RTT of the earliest newly acked packet.
            if let Some(mdev) = ack.kernel_mdev {
                self.rtt_dev.on_kernel(mdev);
            } else if let Some(sample) = ack.max_rtt_sample {
                self.rtt_dev.on_sample(sample);
            }
            if self.mode != Mode::ProbeRtt && rule.should_yield(&self.rtt_dev) {
                self.enter_probe_rtt(rule.hold);
                self.forced_probe_rtts += 1;
            }
        }
        if self.mode == Mode::ProbeRtt {
            let target = self.min_cwnd_target();
            let hold = self.probe_rtt_hold;
            if self
                .probe_rtt
                .on_ack(now, ack.in_flight, target, hold, &mut self.rounds)
            {
                self.check_probe_rtt_done(now);
            }
        }
        if delivered_any {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_ack_aggregation_cwnd`: the allowance added to the cwnd target once the pipe
    /// is full, when `extra_acked` is on.
    fn aggregation_cwnd(&self) -> Bytes {
        if !self.cfg.extra_acked || !self.full_bw_reached {
            return 0;
        }
        let cap = self.max_bw().bytes_in(EXTRA_ACKED_MAX);
        self.ack_agg.extra_acked().min(cap)
    }

    /// Linux `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    fn set_cwnd(&mut self, ack: &AckEvent, gain: f64) {
        let acked = ack.acked_bytes;
        if acked > 0 {
            if self.recovery.on_ack(ack).is_some() {
                // Leaving recovery or the loss state: restore the window saved when it began.
                self.cwnd = self.cwnd.max(self.recovery.prior_cwnd);
                self.packet_conservation = false;
            }
            if self.packet_conservation {
                self.cwnd = self.cwnd.max(ack.in_flight.saturating_add(acked));
            } else {
                let target = match self.aggregation_cwnd() {
                    0 => self.inflight(self.max_bw(), gain),
                    extra => self.quantization_budget(
                        bdp(
                            self.max_bw(),
                            self.min_rtt.min_rtt,
                            gain,
                            self.mss,
                            self.init_cwnd,
                        )
                        .saturating_add(extra),
                    ),
                };
                let early = ack.delivered < INIT_CWND_PACKETS * self.mss;
                let (full, floor) = (self.full_bw_reached, self.min_cwnd_target());
                self.cwnd = cwnd::grow(self.cwnd, acked, target, full, early, floor);
            }
        }
        self.apply_caps();
    }

    /// The clamp, the PROBE_RTT window, RFC 9002's minimum (v1 has no model cap).
    fn apply_caps(&mut self) {
        let mut w = cwnd::clamp(self.cwnd, self.clamp);
        if self.mode == Mode::ProbeRtt {
            w = w.min(self.min_cwnd_target());
        }
        self.cwnd = cwnd::at_least_minimum(w, self.mss);
    }

    /// BDP at gain 1 for telemetry; NaN before the model has both estimates.
    fn bdp_bytes(&self) -> f64 {
        match (self.bw.get(), self.min_rtt.min_rtt) {
            (Some(bw), Some(_)) => {
                bdp(bw, self.min_rtt.min_rtt, 1.0, self.mss, self.init_cwnd) as f64
            }
            _ => f64::NAN,
        }
    }

    /// Index of the current phase in [`PACING_GAIN_CYCLE`].
    #[cfg(test)]
    pub(crate) fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
}

impl CongestionControl for BbrV1 {
    fn name(&self) -> &str {
        if self.cfg.scavenger.is_some() {
            super::scavenger::NAME
        } else {
            NAME
        }
    }

    fn on_handshake(&mut self, now: Time, rtt: Duration) {
        // Linux's bbr_init runs once the handshake is done: its min RTT starts at the
        // handshake's sample (`tcp_min_rtt`) and its pacing rate is the initial window over it
        // (`bbr_init_pacing_rate_from_rtt`), not over 1 ms.
        self.min_rtt.update(now, Some(rtt));
        self.pacing
            .init_from_rtt(self.cwnd, Some(rtt), self.cfg.startup_gain);
    }

    fn on_sent(&mut self, now: Time, sent: &SentPacket) {
        self.rounds.on_sent(sent.pn);
        self.probe_rtt.on_sent(sent.pn);
        if self.last.restarts_from_idle(sent, &self.pacing) {
            self.idle_restart = true;
            self.ack_agg.restart(now);
            match self.mode {
                Mode::ProbeBw if self.max_bw() > Rate::ZERO => {
                    self.pacing.set(self.max_bw(), 1.0);
                }
                Mode::ProbeRtt => self.check_probe_rtt_done(now),
                _ => {}
            }
        }
    }

    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.on_ack_cwnd(now, ack);
    }

    // The ACK's whole work, one copy shared by both entry points: inlined into `on_ack` it would
    // be compiled twice and its helpers no longer inlined (BENCHMARKS.md, per-ACK cost).
    #[inline(never)]
    fn on_ack_cwnd(&mut self, now: Time, ack: &AckEvent) -> Bytes {
        if ack.mss > 0 {
            self.mss = ack.mss;
        }
        let losses = std::mem::take(&mut self.pending_losses) > 0;
        self.last.record(ack);
        let rs = self.probe_rtt.rate_sample(ack, true);

        if self.rounds.on_ack(rs.as_ref(), ack.largest_acked) {
            self.packet_conservation = false;
        }
        if let Some(r) = rs {
            // App-limited samples only count when they raise the max: they can underestimate,
            // never overestimate.
            if !r.is_app_limited || r.delivery_rate >= self.max_bw() {
                self.bw.update(Time(self.rounds.count), r.delivery_rate);
            }
            if self.cfg.extra_acked && ack.acked_bytes > 0 {
                let (bw, cwnd, start) = (self.max_bw(), self.cwnd, self.rounds.start);
                self.ack_agg.update(
                    now,
                    ack.acked_bytes,
                    bw,
                    cwnd,
                    start,
                    EXTRA_ACKED_WIN_ROUNDS,
                );
            }
        }
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, ack, losses) {
            self.advance_cycle_phase(now);
        }
        let app_limited = rs.map_or(ack.app_limited, |r| r.is_app_limited);
        self.check_full_bw_reached(app_limited);
        self.check_drain(now, ack.in_flight);
        self.update_min_rtt(now, ack, rs.is_some_and(|r| r.delivered > 0));

        let (pacing_gain, cwnd_gain) = self.gains();
        let (startup_gain, full) = (self.cfg.startup_gain, self.full_bw_reached);
        let bw = self.max_bw();
        self.pacing
            .update(&ack.rtt, self.cwnd, startup_gain, bw, pacing_gain, full);
        self.set_cwnd(ack, cwnd_gain);
        self.cwnd
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        if loss.mss > 0 {
            self.mss = loss.mss;
        }
        self.pending_losses = self.pending_losses.saturating_add(loss.lost_bytes);
        let out = self
            .recovery
            .on_loss(now, loss, self.cwnd, self.mode == Mode::ProbeRtt);
        if out.persistent {
            // Linux bbr_set_state(TCP_CA_Loss): restart full-bandwidth detection; TCP sets cwnd to
            // what is in flight plus one packet (here the RFC 9002 minimum window).
            self.full_bw = Rate::ZERO;
            self.rounds.start = true;
            self.packet_conservation = false;
            self.cwnd = loss.in_flight.saturating_add(self.mss);
        } else if out.new_epoch {
            // Entering recovery: packet conservation for one round (Linux sets cwnd = in flight +
            // acked on the first recovery ACK; in flight here is before that ACK's removal).
            self.packet_conservation = true;
            self.rounds.restart();
            self.cwnd = loss.in_flight;
        } else {
            self.cwnd = self.cwnd.saturating_sub(loss.lost_bytes);
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
        let mut t = Telemetry::new(self.mode.name());
        t.push("btl_bw_mbps", self.max_bw().as_mbps_f64());
        t.push("min_rtt_ms", self.min_rtt.min_rtt_ms());
        t.push("bdp_bytes", self.bdp_bytes());
        t.push("pacing_gain", pacing_gain);
        t.push("cwnd_gain", cwnd_gain);
        t.push(
            "cycle_idx",
            if self.mode == Mode::ProbeBw {
                self.cycle_idx as f64
            } else {
                f64::NAN
            },
        );
        t.push("full_bw_reached", self.full_bw_reached as u8 as f64);
        t.push("full_bw_cnt", self.full_bw_cnt as f64);
        t.push("round", self.rounds.count as f64);
        if self.cfg.scavenger.is_some() {
            t.push("forced_probe_rtts", self.forced_probe_rtts as f64);
            t.push(
                "rtt_mdev_ms",
                self.rtt_dev.mdev().map_or(f64::NAN, |d| d.as_millis_f64()),
            );
        }
        if self.cfg.extra_acked {
            t.push("extra_acked_bytes", self.ack_agg.extra_acked() as f64);
        }
        t.push("prior_cwnd_bytes", self.recovery.prior_cwnd as f64);
        t.push(
            "ca_state",
            match self.recovery.state {
                CaState::Open => 0.0,
                CaState::Recovery => 1.0,
                CaState::Loss => 2.0,
            },
        );
        t
    }

    /// `cwnd` and `pacing_rate` are written as is (the model recomputes both on the next ACK),
    /// `cwnd_clamp` bounds the window as Linux `snd_cwnd_clamp`; BBR has no ssthresh
    /// (`handover::calibrate`).
    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        handover::calibrate(c, &mut self.clamp, &mut self.cwnd, &mut self.pacing);
        self.apply_caps();
    }

    fn calibrate_cwnd(&mut self, _now: Time, cwnd: Bytes) -> Bytes {
        self.cwnd = cwnd;
        self.apply_caps();
        self.cwnd
    }

    fn handover_state(&self) -> HandoverState {
        handover::state(self.cwnd, &self.pacing, self.max_bw(), &self.last)
    }

    /// Keeps the predecessor's window and seeds min RTT from its RTT state (`handover::adopt`).
    /// With a bandwidth estimate BtlBw is seeded with it, pacing starts at it and PROBE_BW starts
    /// (the pipe is taken as full); without one BBR starts in STARTUP at the inherited window, as
    /// Linux does on a switch.
    fn adopt(&mut self, now: Time, from: &HandoverState) {
        let (startup_gain, min_rtt) = (self.cfg.startup_gain, &mut self.min_rtt);
        let (cwnd, last, pacing) = (&mut self.cwnd, &mut self.last, &mut self.pacing);
        self.rounds.restart_at_next_send();
        if let Some(bw) = handover::adopt(now, from, cwnd, min_rtt, last, pacing, startup_gain) {
            self.bw.reset(Time(self.rounds.count), bw);
            self.full_bw = bw;
            self.full_bw_reached = true;
            self.reset_probe_bw_mode(now);
        }
        self.apply_caps();
    }
}
