//! The parts of BBR's path model and control that v1 and v3 share: the BDP and its quantization
//! budget, the min-RTT filter with its PROBE_RTT clock, the loss-recovery cwnd save / restore,
//! the ACK-aggregation (extra_acked) estimator, per-packet send records, and a seeded PRNG.
//!
//! Windows are bytes; the packet counts Linux uses (`bbr_cwnd_min_target`, the TSO budget) are
//! converted with the flow's MSS.

use crate::cc::CcContext;
use crate::signals::{AckEvent, LossEvent};
use crate::units::{Bytes, Duration, Rate, Time};

/// Linux `bbr_cwnd_min_target`: at least 4 packets in flight, so that ACK-every-other-packet
/// receivers still see two outstanding pairs.
pub const CWND_MIN_TARGET_PACKETS: u64 = 4;
/// Linux `bbr_pacing_margin_percent`: pace about 1 % below the estimated bandwidth.
pub const PACING_MARGIN: f64 = 0.01;
/// Linux `bbr_min_rtt_win_sec`: window of the min-RTT filter.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// Linux `bbr_probe_rtt_mode_ms`: least time spent at the PROBE_RTT window.
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// Linux `bbr_min_tso_rate`: below 1.2 Mbit/s the TSO goal is one segment, else two.
const MIN_TSO_RATE: Rate = Rate::from_bps(1_200_000);
/// Linux `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER` (64 KiB less about 320 header bytes): the
/// largest burst the TSO budget allows.
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Linux TSO goal cap (`0x7F` segments).
pub const TSO_MAX_SEGS: u64 = 0x7f;
/// Linux `sk_pacing_shift` default 10: the TSO burst is about 1 ms (1/1024 s) of the pacing rate.
const PACING_SHIFT: u32 = 10;

/// A small deterministic PRNG (splitmix64): BBR's random gain-cycle phase and probe wait come from
/// here, seeded per controller, never from a global source.
#[derive(Clone, Debug)]
pub struct Prng(u64);

impl Prng {
    pub fn new(seed: u64) -> Self {
        Prng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0), as Linux `get_random_u32_below`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The seed used when the scenario gives none: the transport's per-flow seed (`CcContext::seed`;
/// the simulator derives one per flow from the run's seed and the flow's index) mixed with the
/// creation time, MSS and version, so runs are reproducible and flows created at the same
/// instant still draw their own gain-cycle phases and probe waits.
pub fn default_seed(ctx: &CcContext, version: u64) -> u64 {
    let mut p = Prng::new(ctx.seed ^ ctx.now.0 ^ ctx.mss.rotate_left(40) ^ version.rotate_left(56));
    p.next_u64()
}

/// `ceil(bw · min_rtt · gain)` in bytes, rounded up to whole packets (Linux `bbr_bdp` rounds up in
/// packets "to avoid a negative feedback loop"). Without an RTT sample: the initial window.
pub fn bdp(bw: Rate, min_rtt: Option<Duration>, gain: f64, mss: Bytes, init_cwnd: Bytes) -> Bytes {
    let Some(rtt) = min_rtt else {
        return init_cwnd;
    };
    let bytes = bw.as_bytes_per_sec_f64() * rtt.as_secs_f64() * gain;
    let packets = (bytes / mss.max(1) as f64).ceil();
    // Saturate far below u64::MAX so that later additions cannot overflow.
    (packets.min((u64::MAX >> 8) as f64 / mss.max(1) as f64) as u64) * mss.max(1)
}

/// Linux v1 `bbr_tso_segs_goal`: segments per burst, about 1 ms of the pacing rate, at least 1
/// (below 1.2 Mbit/s) or 2, at most 127 or 64 KiB.
pub fn tso_goal_v1(pacing_rate: Rate, mss: Bytes) -> u64 {
    let bytes = ((pacing_rate.as_bps() / 8) >> PACING_SHIFT).min(GSO_MAX_BYTES);
    let min_segs = if pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
    (bytes / mss.max(1)).max(min_segs).min(TSO_MAX_SEGS)
}

/// google/bbr v3 `bbr_tso_segs_generic`: as v1 plus a min-RTT based allowance of 64 KiB halved
/// for every 512 µs of min RTT (`bbr_tso_rtt_shift` = 9), at least `tcp_min_tso_segs` = 2.
pub fn tso_goal_v3(pacing_rate: Rate, min_rtt: Option<Duration>, mss: Bytes) -> u64 {
    let mut bytes = (pacing_rate.as_bps() / 8) >> PACING_SHIFT;
    if let Some(rtt) = min_rtt {
        let r = (rtt.as_nanos() / 1000) >> 9;
        if r < 32 {
            bytes += 65_536 >> r;
        }
    }
    (bytes.min(GSO_MAX_BYTES) / mss.max(1)).max(2)
}

/// The pacing rate for `bw` and `gain`, less the pacing margin; never zero.
pub fn pacing_for(bw: Rate, gain: f64) -> Rate {
    Rate(bw.mul_f64(gain * (1.0 - PACING_MARGIN)).as_bps().max(1))
}

/// Min-RTT filter with the PROBE_RTT clock, as google/bbr v3 `bbr_update_min_rtt`: a short
/// filter (`probe_rtt_win`) whose expiry schedules PROBE_RTT, feeding the long `min_rtt` filter
/// (10 s). With both windows equal (BBR v1) this is exactly v1's single 10-s filter whose expiry
/// triggers PROBE_RTT.
#[derive(Clone, Debug)]
pub struct MinRttFilter {
    pub min_rtt: Option<Duration>,
    min_stamp: Time,
    probe_min: Option<Duration>,
    probe_stamp: Time,
    min_win: Duration,
    probe_win: Duration,
}

impl MinRttFilter {
    pub fn new(now: Time, min_win: Duration, probe_win: Duration) -> Self {
        MinRttFilter {
            min_rtt: None,
            min_stamp: now,
            probe_min: None,
            probe_stamp: now,
            min_win,
            probe_win: probe_win.min(min_win),
        }
    }

    /// Takes the ACK's RTT sample; returns whether the PROBE_RTT window had expired (judged before
    /// the sample was applied, as Linux does).
    pub fn update(&mut self, now: Time, sample: Option<Duration>) -> bool {
        let probe_expired = now > self.probe_stamp + self.probe_win;
        if let Some(s) = sample {
            if self.probe_min.is_none_or(|m| s < m) || probe_expired {
                self.probe_min = Some(s);
                self.probe_stamp = now;
            }
        }
        let min_expired = now > self.min_stamp + self.min_win;
        if let Some(p) = self.probe_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_expired {
                self.min_rtt = Some(p);
                self.min_stamp = self.probe_stamp;
            }
        }
        probe_expired
    }

    /// PROBE_RTT done: the next one is a full window away.
    pub fn probe_done(&mut self, now: Time) {
        self.probe_stamp = now;
        if self.probe_win >= self.min_win {
            self.min_stamp = now;
        }
    }

    /// Seeds the estimate (hand-over from another controller).
    pub fn seed(&mut self, now: Time, rtt: Duration) {
        let rtt = rtt.max(Duration(1));
        self.min_rtt = Some(rtt);
        self.probe_min = Some(rtt);
        self.min_stamp = now;
        self.probe_stamp = now;
    }
}

/// TCP's congestion-avoidance state as BBR sees it (`icsk_ca_state`), rebuilt from QUIC-style
/// events: a recovery epoch starts with the first loss of a packet sent after the previous epoch
/// began, and ends with the first ACK of a packet sent after it began (RFC 9002 §7.3.2); RFC 9002
/// §7.6 persistent congestion plays the part of TCP's retransmission timeout (`TCP_CA_Loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
}

/// What a loss event meant for the recovery state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossOutcome {
    /// A new recovery epoch (or a timeout) began with this loss.
    pub new_epoch: bool,
    pub persistent: bool,
}

#[derive(Clone, Debug)]
pub struct Recovery {
    pub state: CaState,
    /// Packets sent at or before this time belong to the current (or last) epoch.
    start: Option<Time>,
    /// Linux `prior_cwnd`: the last known good window, restored when recovery or PROBE_RTT ends.
    pub prior_cwnd: Bytes,
}

impl Recovery {
    pub fn new(prior_cwnd: Bytes) -> Self {
        Recovery {
            state: CaState::Open,
            start: None,
            prior_cwnd,
        }
    }

    /// Linux `bbr_save_cwnd`: a window cut by recovery or PROBE_RTT is not remembered as good.
    pub fn save_cwnd(&mut self, cwnd: Bytes, in_probe_rtt: bool) {
        if self.state == CaState::Open && !in_probe_rtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Classifies a loss and saves the window when an epoch begins (Linux calls `ssthresh`, and so
    /// `bbr_save_cwnd`, when it enters recovery or the loss state).
    pub fn on_loss(
        &mut self,
        now: Time,
        loss: &LossEvent,
        cwnd: Bytes,
        in_probe_rtt: bool,
    ) -> LossOutcome {
        let new_epoch = self.start.is_none_or(|r| loss.largest_lost_sent_time > r);
        if new_epoch || loss.persistent_congestion {
            self.save_cwnd(cwnd, in_probe_rtt);
            self.start = Some(now);
            self.state = if loss.persistent_congestion {
                CaState::Loss
            } else {
                CaState::Recovery
            };
        }
        LossOutcome {
            new_epoch,
            persistent: loss.persistent_congestion,
        }
    }

    /// Returns the state left when this ACK ends recovery or the loss state.
    pub fn on_ack(&mut self, ack: &AckEvent) -> Option<CaState> {
        let ended = self.state != CaState::Open
            && self.start.is_none_or(|r| ack.largest_acked_sent_time > r);
        if ended {
            let was = self.state;
            self.state = CaState::Open;
            return Some(was);
        }
        None
    }
}

/// ACK-aggregation estimator (Linux `bbr_update_ack_aggregation`, BBR v2+): the data acked beyond
/// what the bandwidth estimate explains since an epoch began, max-filtered over two windows of
/// `win_rounds` round trips; it lets cwnd cover the silences between aggregated ACKs.
#[derive(Clone, Debug)]
pub struct AckAggregation {
    epoch_start: Time,
    epoch_acked: Bytes,
    win_rounds: u32,
    idx: usize,
    extra: [Bytes; 2],
}

/// Linux `bbr_ack_epoch_acked_reset_thresh` (2^20 packets), in bytes of a 1500-byte packet.
const ACK_EPOCH_RESET_BYTES: Bytes = (1 << 20) * 1500;

impl AckAggregation {
    pub fn new(now: Time) -> Self {
        AckAggregation {
            epoch_start: now,
            epoch_acked: 0,
            win_rounds: 0,
            idx: 0,
            extra: [0; 2],
        }
    }

    /// Largest recent excess in bytes.
    pub fn extra_acked(&self) -> Bytes {
        self.extra[0].max(self.extra[1])
    }

    /// Restarting from idle starts a new epoch (Linux `CA_EVENT_TX_START`).
    pub fn restart(&mut self, now: Time) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    pub fn update(
        &mut self,
        now: Time,
        acked: Bytes,
        bw: Rate,
        cwnd: Bytes,
        round_start: bool,
        window_rounds: u32,
    ) {
        if round_start {
            self.win_rounds = (self.win_rounds + 1).min(0x1f);
            if self.win_rounds >= window_rounds {
                self.win_rounds = 0;
                self.idx ^= 1;
                self.extra[self.idx] = 0;
            }
        }
        let mut expected = bw.bytes_in(now - self.epoch_start);
        if self.epoch_acked <= expected
            || self.epoch_acked.saturating_add(acked) >= ACK_EPOCH_RESET_BYTES
        {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked = self.epoch_acked.saturating_add(acked);
        let extra = (self.epoch_acked - expected.min(self.epoch_acked)).min(cwnd);
        if extra > self.extra[self.idx] {
            self.extra[self.idx] = extra;
        }
    }
}

/// PROBE_RTT's "ignore low rate samples" (Linux sets `tp->app_limited = delivered + inflight` on
/// every PROBE_RTT ACK): packets sent from then until everything in flight at the mark has been
/// delivered are application-limited, so their low delivery rates neither enter nor age out the
/// max-bandwidth filter. Tracked here by packet number, since the transport's own app-limited flag
/// only knows about the application.
#[derive(Clone, Debug, Default)]
pub struct ProbeRttAppLimited {
    largest_sent: Option<u64>,
    largest_acked: Option<u64>,
    /// Packets are marked while this one is unacknowledged.
    mark: Option<u64>,
    /// Largest packet number sent while marked.
    upto: Option<u64>,
}

impl ProbeRttAppLimited {
    pub fn on_sent(&mut self, pn: u64) {
        self.largest_sent = Some(self.largest_sent.map_or(pn, |p| p.max(pn)));
        if self.mark.is_some() {
            self.upto = Some(self.upto.map_or(pn, |u| u.max(pn)));
        }
    }

    pub fn on_ack(&mut self, largest_acked: u64) {
        let a = self
            .largest_acked
            .map_or(largest_acked, |p| p.max(largest_acked));
        self.largest_acked = Some(a);
        if self.mark.is_some_and(|m| a >= m) {
            self.mark = None;
        }
    }

    /// Marks everything sent until what is in flight now has been delivered.
    pub fn mark(&mut self) {
        self.mark = self.largest_sent.or(self.largest_acked);
    }

    /// The packet was sent during a marked period.
    pub fn covers(&self, pn: u64) -> bool {
        self.upto.is_some_and(|u| pn <= u)
    }
}

/// What BBR v3 remembers about a packet until it is acknowledged or lost (Linux `scb->tx`):
/// bytes in flight just after it was sent, total bytes lost by then, and the app-limited flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRecord {
    pub pn: u64,
    pub in_flight: Bytes,
    pub lost: Bytes,
    pub app_limited: bool,
}

const EMPTY: TxRecord = TxRecord {
    pn: u64::MAX,
    in_flight: 0,
    lost: 0,
    app_limited: false,
};
/// Slots kept at least / at most (the table grows with the window; 2^16 slots cover windows of
/// 32 768 packets).
const TX_MIN_SLOTS: usize = 64;
const TX_MAX_SLOTS: usize = 1 << 16;

/// Send records addressed by packet number modulo a power-of-two table that grows to twice the
/// packets in flight, so lookups are O(1) and steady state allocates nothing. A record overwritten
/// by a later packet is simply not found.
#[derive(Clone, Debug, Default)]
pub struct TxRecords {
    slots: Vec<TxRecord>,
}

impl TxRecords {
    pub fn insert(&mut self, rec: TxRecord, mss: Bytes) {
        let want = ((rec.in_flight / mss.max(1)).saturating_mul(2) as usize)
            .clamp(TX_MIN_SLOTS, TX_MAX_SLOTS)
            .next_power_of_two();
        if want > self.slots.len() {
            let old = std::mem::replace(&mut self.slots, vec![EMPTY; want]);
            for r in old.into_iter().filter(|r| r.pn != u64::MAX) {
                self.put(r);
            }
        }
        self.put(rec);
    }

    fn put(&mut self, rec: TxRecord) {
        let n = self.slots.len();
        self.slots[(rec.pn as usize) & (n - 1)] = rec;
    }

    pub fn get(&self, pn: u64) -> Option<TxRecord> {
        let n = self.slots.len();
        if n == 0 {
            return None;
        }
        let r = self.slots[(pn as usize) & (n - 1)];
        (r.pn == pn).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prng_is_deterministic_and_bounded() {
        let mut a = Prng::new(7);
        let mut b = Prng::new(7);
        for _ in 0..1000 {
            let x = a.below(7);
            assert_eq!(x, b.below(7));
            assert!(x < 7);
        }
        assert_eq!(Prng::new(1).below(0), 0);
    }

    #[test]
    fn bdp_rounds_up_to_packets() {
        // 12 Mbit/s · 10 ms = 15 000 B = 10 packets of 1500 B; ×2.885 = 28.85 → 29 packets.
        let bw = Rate::from_mbps(12);
        let rtt = Some(Duration::from_millis(10));
        assert_eq!(bdp(bw, rtt, 1.0, 1500, 0), 15_000);
        assert_eq!(bdp(bw, rtt, 2.885, 1500, 0), 29 * 1500);
        assert_eq!(bdp(bw, None, 2.0, 1500, 14_720), 14_720);
    }

    #[test]
    fn tso_goal_is_a_millisecond_of_pacing() {
        // 50 Mbit/s: 6.25 MB/s >> 10 = 6103 B = 4 packets of 1500 B.
        assert_eq!(tso_goal_v1(Rate::from_mbps(50), 1500), 4);
        assert_eq!(tso_goal_v1(Rate::from_bps(1_000_000), 1500), 1);
        assert_eq!(tso_goal_v1(Rate::from_mbps(10), 1500), 2);
        // 40 ms min RTT: no RTT allowance; 100 µs: 64 KiB allowance, capped.
        assert_eq!(
            tso_goal_v3(Rate::from_mbps(50), Some(Duration::from_millis(40)), 1500),
            4
        );
        assert_eq!(
            tso_goal_v3(Rate::from_mbps(50), Some(Duration::from_micros(100)), 1500),
            GSO_MAX_BYTES / 1500
        );
    }

    #[test]
    fn min_rtt_filter_expires_and_schedules_probe_rtt() {
        let ms = Duration::from_millis;
        let mut f = MinRttFilter::new(Time::ZERO, MIN_RTT_WINDOW, Duration::from_secs(5));
        assert!(!f.update(Time::ZERO, Some(ms(40))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        // Larger samples within the windows leave the minimum alone.
        assert!(!f.update(Time::ZERO + Duration::from_secs(4), Some(ms(60))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        // 5 s on: the PROBE_RTT window expired; the probe minimum takes the new sample, but the
        // 10-s minimum is kept.
        assert!(f.update(Time::ZERO + ms(5001), Some(ms(60))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        f.probe_done(Time::ZERO + ms(5300));
        assert!(!f.update(Time::ZERO + ms(9000), Some(ms(60))));
        // 10 s on the 10-s filter expires: the probe minimum (60 ms) replaces it.
        assert!(!f.update(Time::ZERO + ms(10_001), Some(ms(61))));
        assert_eq!(f.min_rtt, Some(ms(60)));
    }

    #[test]
    fn tx_records_grow_and_forget_overwritten_packets() {
        let mut t = TxRecords::default();
        for pn in 0..100 {
            t.insert(
                TxRecord {
                    pn,
                    in_flight: (pn + 1) * 1000,
                    lost: 0,
                    app_limited: false,
                },
                1000,
            );
        }
        // 100 packets in flight: 256 slots, every record still there.
        assert_eq!(t.get(0).map(|r| r.in_flight), Some(1000));
        assert_eq!(t.get(99).map(|r| r.in_flight), Some(100_000));
        assert_eq!(t.get(100), None);
    }
}
