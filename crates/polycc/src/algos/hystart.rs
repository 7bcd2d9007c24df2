//! HyStart as Linux ships it with CUBIC (`net/ipv4/tcp_cubic.c`, `hystart_update` and
//! `cubictcp_acked`; Ha and Rhee, "Taming the Elephants: New TCP Slow Start", 2011): the
//! slow-start exit of `cubic` with `hystart_variant = "linux"`, which `stack = "linux"` selects.
//!
//! Once the window holds [`LOW_WINDOW_PACKETS`], each ACK with an RTT sample checks two signals;
//! the first to fire ends slow start for good (ssthresh = cwnd):
//! - **ACK train** (`HYSTART_ACK_TRAIN`): the ACKs since the round began arrived at most
//!   [`ACK_DELTA`] apart, for longer than half the path's minimum RTT (plus a small cushion). An
//!   unpaced sender's window leaves in bursts, so a train that long means the window already
//!   fills half the pipe and will fill all of it by the end of the round.
//! - **Delay increase** (`HYSTART_DELAY`): the smallest of the round's first [`MIN_SAMPLES`]
//!   RTT samples exceeds the minimum RTT by clamp(min/8, 4 ms, 16 ms): a queue persists.
//!
//! Unlike HyStart++ (RFC 9406, in `cubic.rs`) there is no conservative phase and no way back.
//!
//! Deviations: rounds end when a packet sent after the round began is acknowledged (packet
//! numbers; the kernel compares `snd_una` with `snd_nxt` at the round's start); the ACK train's
//! threshold is the unpaced kernel's (no `fq` qdisc: `sk_pacing_status == SK_PACING_NONE`, which
//! halves it), the only case the Linux stack model has for a window-based CUBIC.

use crate::algos::round::RoundTracker;
use crate::signals::AckEvent;
use crate::units::{Bytes, Duration, Time};

/// `hystart_low_window`: no exit is looked for below a window of 16 packets.
pub const LOW_WINDOW_PACKETS: u64 = 16;
/// `hystart_ack_delta_us` = 2000: ACKs at most 2 ms apart belong to one train.
pub const ACK_DELTA: Duration = Duration::from_millis(2);
/// `HYSTART_MIN_SAMPLES`: the round's minimum is trusted after 8 RTT samples.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`: the delay threshold is at least 4 ms…
pub const DELAY_THRESH_MIN: Duration = Duration::from_millis(4);
/// … and `HYSTART_DELAY_MAX`: at most 16 ms; in between, 1/8 of the minimum RTT.
pub const DELAY_THRESH_MAX: Duration = Duration::from_millis(16);
/// `HYSTART_DELAY_THRESH(delay_min >> 3)`: the minimum RTT's share that is the threshold.
const DELAY_THRESH_DIVISOR: u64 = 8;
/// `hystart_ack_delay`: the cushion for TSO/GRO aggregation is the time of four 64 KiB GSO
/// bursts (`sk_gso_max_size`, `GSO_LEGACY_MAX_SIZE`) at the pacing rate, at most 1 ms.
const ACK_DELAY_BURSTS: u64 = 4;
const GSO_MAX_BYTES: u64 = 65_536;
const ACK_DELAY_MAX: Duration = Duration::from_millis(1);
/// `tcp_update_pacing_rate` in slow start: the kernel's pacing rate (which the cushion divides
/// by, paced or not) is `tcp_pacing_ss_ratio` = 200 % of cwnd/srtt.
const SS_PACING_RATIO: u64 = 2;
/// The unpaced kernel halves the ACK train's threshold (`threshold >>= 1`).
const UNPACED_TRAIN_DIVISOR: u64 = 2;

/// Which signal ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartExit {
    /// `HYSTART_ACK_TRAIN`.
    AckTrain,
    /// `HYSTART_DELAY`.
    Delay,
}

/// Linux's HyStart state (`struct bictcp`'s `round_start`, `end_seq`, `last_ack`, `curr_rtt`,
/// `sample_cnt`, `delay_min`).
#[derive(Clone, Debug, Default)]
pub(crate) struct LinuxHyStart {
    rounds: RoundTracker,
    round_start: Time,
    last_ack: Time,
    /// The round's smallest RTT sample so far (`curr_rtt`).
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    /// The smallest RTT sample seen (`delay_min`).
    delay_min: Option<Duration>,
}

impl LinuxHyStart {
    pub(crate) fn on_sent(&mut self, pn: u64) {
        self.rounds.on_sent(pn);
    }

    /// One ACK in slow start with the window `cwnd` of `mss`-byte packets: `Some` when slow start
    /// ends here. ACKs without an RTT sample are ignored, as the kernel's `pkts_acked` does.
    pub(crate) fn on_ack(
        &mut self,
        now: Time,
        ack: &AckEvent,
        cwnd: Bytes,
        mss: Bytes,
    ) -> Option<HyStartExit> {
        // `ca_rtt_us`: the RTT of the most recently sent packet this ACK covers.
        let delay = ack.min_rtt_sample?.max(Duration(1));
        let delay_min = self.delay_min.map_or(delay, |m| m.min(delay));
        self.delay_min = Some(delay_min);
        if self.rounds.on_ack(ack.largest_acked) {
            self.round_start = now;
            self.last_ack = now;
            self.curr_rtt = None;
            self.sample_cnt = 0;
        }
        if cwnd < LOW_WINDOW_PACKETS * mss.max(1) {
            return None;
        }
        let mut exit = None;
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            let cushion = ack_delay(cwnd, ack.rtt.smoothed);
            let threshold = Duration((delay_min + cushion).0 / UNPACED_TRAIN_DIVISOR);
            if now - self.round_start > threshold {
                exit = Some(HyStartExit::AckTrain);
            }
        }
        let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
        self.curr_rtt = Some(curr);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = Duration(delay_min.0 / DELAY_THRESH_DIVISOR)
                .clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX);
            if curr > delay_min + thresh {
                exit = exit.or(Some(HyStartExit::Delay));
            }
        }
        exit
    }
}

/// `hystart_ack_delay`: 4 GSO bursts at the kernel's slow-start pacing rate 2·cwnd/srtt, at
/// most 1 ms.
fn ack_delay(cwnd: Bytes, srtt: Duration) -> Duration {
    let rate_num = SS_PACING_RATIO * cwnd.max(1);
    let ns = (ACK_DELAY_BURSTS * GSO_MAX_BYTES) as u128 * srtt.0 as u128 / rate_num as u128;
    Duration(ns.min(ACK_DELAY_MAX.0 as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimators::rtt::RttSnapshot;

    const MSS: Bytes = 1500;
    const MIN_RTT: Duration = Duration::from_millis(40);

    fn ack_at(pn: u64, rtt: Duration) -> AckEvent {
        AckEvent {
            acked_bytes: MSS,
            acked_packets: 1,
            largest_acked: pn,
            min_rtt_sample: Some(rtt),
            max_rtt_sample: Some(rtt),
            rtt: RttSnapshot {
                smoothed: MIN_RTT,
                min: MIN_RTT,
                latest: rtt,
                has_sample: true,
                ..RttSnapshot::default()
            },
            mss: MSS,
            ..AckEvent::default()
        }
    }

    /// A round of `n` ACKs at `spacing`, the first at `start`, each with RTT sample `rtt`;
    /// packets `first..first + n` were sent before the round began. Returns the exit and the
    /// index of the ACK that gave it.
    fn round(
        hs: &mut LinuxHyStart,
        start: Time,
        first: u64,
        n: u64,
        spacing: Duration,
        rtt: Duration,
        cwnd: Bytes,
    ) -> Option<(HyStartExit, u64)> {
        for k in 0..n {
            let now = start + spacing * k;
            if let Some(e) = hs.on_ack(now, &ack_at(first + k, rtt), cwnd, MSS) {
                return Some((e, k));
            }
        }
        None
    }

    fn sent(hs: &mut LinuxHyStart, upto: u64) {
        for pn in 0..upto {
            hs.on_sent(pn);
        }
    }

    #[test]
    fn an_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        let mut hs = LinuxHyStart::default();
        sent(&mut hs, 100);
        // ACKs 1.2 ms apart (every other 1500-byte packet at 20 Mbit/s) at the path's RTT: the
        // train passes (40 + 1) / 2 = 20.5 ms after the round's first ACK, on ACK 18 (21.6 ms).
        let cushion = ack_delay(64 * MSS, MIN_RTT);
        assert_eq!(cushion, ACK_DELAY_MAX);
        let got = round(
            &mut hs,
            Time::ZERO + MIN_RTT,
            0,
            60,
            Duration::from_micros(1200),
            MIN_RTT,
            64 * MSS,
        );
        assert_eq!(got, Some((HyStartExit::AckTrain, 18)));
    }

    #[test]
    fn a_gap_in_the_acks_breaks_the_train_for_the_round() {
        let mut hs = LinuxHyStart::default();
        sent(&mut hs, 100);
        let t0 = Time::ZERO + MIN_RTT;
        // Ten ACKs 1 ms apart, then a 3 ms gap: later ACKs are measured against the last ACK of
        // the broken train, which never moves again, so no train ends slow start this round.
        let spacing = Duration::from_millis(1);
        assert_eq!(round(&mut hs, t0, 0, 10, spacing, MIN_RTT, 64 * MSS), None);
        let t1 = t0 + Duration::from_millis(12);
        assert_eq!(round(&mut hs, t1, 10, 40, spacing, MIN_RTT, 64 * MSS), None);
    }

    #[test]
    fn nothing_below_the_low_window() {
        let mut hs = LinuxHyStart::default();
        sent(&mut hs, 100);
        let slow = Duration::from_millis(60);
        let got = round(
            &mut hs,
            Time::ZERO + MIN_RTT,
            0,
            60,
            Duration::from_micros(1200),
            slow,
            15 * MSS,
        );
        assert_eq!(got, None);
    }

    #[test]
    fn a_round_minimum_above_min_rtt_plus_an_eighth_ends_slow_start() {
        let mut hs = LinuxHyStart::default();
        sent(&mut hs, 10);
        // Round 1 at 40 ms sets delay_min; ACKs 5 ms apart never form a train.
        let spacing = Duration::from_millis(5);
        let t0 = Time::ZERO + MIN_RTT;
        assert_eq!(round(&mut hs, t0, 0, 10, spacing, MIN_RTT, 20 * MSS), None);
        sent(&mut hs, 40);
        // Round 2 at 45 ms: 5 ms is exactly the threshold (40/8), not above it.
        let t1 = t0 + Duration::from_millis(100);
        let at_thresh = MIN_RTT + Duration::from_millis(5);
        assert_eq!(
            round(&mut hs, t1, 10, 30, spacing, at_thresh, 40 * MSS),
            None
        );
        sent(&mut hs, 80);
        // Round 3 at 45.1 ms: the 9th sample of the round ends slow start.
        let t2 = t1 + Duration::from_millis(200);
        let above = at_thresh + Duration::from_micros(100);
        assert_eq!(
            round(&mut hs, t2, 40, 30, spacing, above, 40 * MSS),
            Some((HyStartExit::Delay, MIN_SAMPLES as u64))
        );
    }

    #[test]
    fn the_delay_threshold_is_clamped_to_4_and_16_ms() {
        for (min_rtt_ms, thresh_ms) in [(10, 4), (80, 10), (400, 16)] {
            let min_rtt = Duration::from_millis(min_rtt_ms);
            let mut hs = LinuxHyStart::default();
            sent(&mut hs, 10);
            let spacing = Duration::from_millis(5);
            let t0 = Time::ZERO + min_rtt;
            assert_eq!(round(&mut hs, t0, 0, 10, spacing, min_rtt, 20 * MSS), None);
            sent(&mut hs, 40);
            let t1 = t0 + Duration::from_secs(1);
            let at = min_rtt + Duration::from_millis(thresh_ms);
            assert_eq!(round(&mut hs, t1, 10, 30, spacing, at, 20 * MSS), None);
            sent(&mut hs, 80);
            let t2 = t1 + Duration::from_secs(1);
            let above = at + Duration::from_micros(1);
            let got = round(&mut hs, t2, 40, 30, spacing, above, 20 * MSS);
            assert_eq!(
                got.map(|g| g.0),
                Some(HyStartExit::Delay),
                "{min_rtt_ms} ms"
            );
        }
    }

    #[test]
    fn the_cushion_is_four_gso_bursts_at_the_slow_start_pacing_rate() {
        // 1 ms srtt, 100 packets: 2 · 150 kB / 1 ms = 300 MB/s; 4 · 64 KiB at that rate is
        // 873.8 µs, below the 1 ms cap.
        let d = ack_delay(100 * MSS, Duration::from_millis(1));
        assert_eq!(d, Duration(873_813));
    }
}
