//! When a paced packet may leave: one packet at a time (RFC 9002 §7.7), or in the bursts Linux's
//! TCP pacing sends.

use polycc::units::{Bytes, Duration, Rate, Time};

/// Linux `sk_pacing_shift` default 10: a TSO burst is about 1/1024 s of the pacing rate
/// (`tcp_tso_autosize`).
const PACING_SHIFT: u32 = 10;
/// Linux `sysctl_tcp_tso_rtt_log` default 9: on short paths the burst grows by 64 KiB >>
/// (min_rtt_us >> 9): all of it below 512 µs, half below 1 ms, and so on (`tcp_tso_autosize`).
const TSO_RTT_LOG: u32 = 9;
/// Linux `GSO_LEGACY_MAX_SIZE` (64 KiB): a device's `sk_gso_max_size`, the largest burst.
const GSO_MAX_BYTES: u64 = 65_536;
/// Linux `sysctl_tcp_min_tso_segs` default 2: a burst is at least 2 segments.
pub const MIN_TSO_SEGS: u64 = 2;
/// Linux `tcp_update_skb_after_send`: "Original sch_fq does not pace first 10 MSS"; the
/// connection's first data packets (`data_segs_out` < 10) leave unpaced.
pub const UNPACED_FIRST_PACKETS: u64 = 10;

/// How paced packets leave (the rate is the controller's, else the transport's fallback).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacer {
    /// Each packet waits for the one before it to have taken its own size at the rate.
    #[default]
    PerPacket,
    /// Linux's TCP pacing (`tcp_write_xmit`, `tcp_update_skb_after_send`): a TSO burst of
    /// [`tso_autosize`] segments leaves at once and the next waits for the whole burst's time at
    /// the rate; the connection's first [`UNPACED_FIRST_PACKETS`] are not paced; a sender that
    /// is late (idle, or window-limited) gets the lateness back as credit, up to half a packet's
    /// time, so that host delays do not lower the rate.
    LinuxTso,
}

/// Linux `tcp_tso_autosize`: segments per burst at `rate`: about 1 ms of it (1/1024 s), plus up
/// to 64 KiB on paths with a min RTT under a few milliseconds, at most 64 KiB, at least
/// [`MIN_TSO_SEGS`]; `mss` is the bytes of one packet.
pub fn tso_autosize(rate: Rate, min_rtt: Duration, mss: Bytes) -> u64 {
    let mut bytes = (rate.as_bps() / 8) >> PACING_SHIFT;
    let shift = (min_rtt.0 / 1000) >> TSO_RTT_LOG;
    if shift < u64::from(u32::BITS) {
        bytes += GSO_MAX_BYTES >> shift;
    }
    (bytes.min(GSO_MAX_BYTES) / mss.max(1)).max(MIN_TSO_SEGS)
}

/// The pacing clock of one sender: when the next packet may leave, given the rate each packet
/// was sent at. [`crate::Sender`] keeps one; a transport that has its own window and loss
/// recovery (polycc-quic over s2n-quic) keeps one to answer "earliest departure time".
#[derive(Clone, Debug, Default)]
pub struct PacingClock {
    pacer: Pacer,
    /// Earliest time pacing lets the next packet (the next burst's first) leave.
    next_send: Time,
    /// The burst in progress (`LinuxTso`): when it left and how many packets it has.
    burst_start: Time,
    burst_len: u64,
    /// Ack-eliciting packets sent so far.
    sent: u64,
}

impl PacingClock {
    /// A clock that lets the first packet leave at once.
    pub fn new(pacer: Pacer) -> Self {
        PacingClock {
            pacer,
            ..PacingClock::default()
        }
    }

    /// Earliest time pacing lets the next packet leave (in the past once it may).
    #[inline]
    pub fn next_send(&self) -> Time {
        self.next_send
    }

    /// When a packet may leave if `now` is too early; `goal` is the burst size in force.
    #[inline]
    pub fn wait(&self, now: Time, goal: impl FnOnce() -> u64) -> Option<Time> {
        if now >= self.next_send {
            return None;
        }
        match self.pacer {
            Pacer::PerPacket => Some(self.next_send),
            Pacer::LinuxTso if now == self.burst_start && self.burst_len < goal() => None,
            Pacer::LinuxTso => Some(self.next_send),
        }
    }

    /// A packet of `bytes` left at `now`, paced at `rate` (`None`: not paced) in bursts of `goal`.
    #[inline]
    pub fn on_sent(
        &mut self,
        now: Time,
        rate: Option<Rate>,
        bytes: Bytes,
        goal: impl FnOnce() -> u64,
    ) {
        self.sent += 1;
        let Some(rate) = rate else { return };
        match self.pacer {
            Pacer::PerPacket => {
                self.next_send = self.next_send.max(now) + rate.time_to_send(bytes);
            }
            Pacer::LinuxTso => {
                if self.sent < UNPACED_FIRST_PACKETS {
                    // The kernel still moves its clock to the send time (`tcp_wstamp_ns`), so
                    // the first paced burst gets no credit for the unpaced start.
                    self.next_send = self.next_send.max(now);
                    return;
                }
                if !(now == self.burst_start && self.burst_len < goal()) {
                    self.burst_start = now;
                    self.burst_len = 0;
                }
                self.burst_len += 1;
                let t = rate.time_to_send(bytes);
                let late = if now > self.next_send {
                    now - self.next_send
                } else {
                    Duration::ZERO
                };
                let t = t - late.min(Duration(t.0 / 2));
                self.next_send = self.next_send.max(now) + t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tso_burst_is_a_millisecond_of_the_rate_at_least_two_segments() {
        let rtt = Duration::from_millis(40);
        // 20 Mbit/s: 2441 bytes a millisecond, one 1500-byte packet: at least 2.
        assert_eq!(tso_autosize(Rate::from_mbps(20), rtt, 1500), 2);
        // 100 Mbit/s: 12 207 bytes, 8 packets; 1 Gbit/s: 122 070 bytes, capped at 64 KiB.
        assert_eq!(tso_autosize(Rate::from_mbps(100), rtt, 1500), 8);
        assert_eq!(tso_autosize(Rate::from_mbps(1000), rtt, 1500), 43);
        // A 100-µs path adds 64 KiB >> 0: the cap.
        let lan = Duration::from_micros(100);
        assert_eq!(tso_autosize(Rate::from_mbps(20), lan, 1500), 43);
        // 2 ms: 64 KiB >> 3 = 8 KiB more.
        let two_ms = Duration::from_millis(2);
        assert_eq!(tso_autosize(Rate::from_mbps(20), two_ms, 1500), 7);
    }

    fn send(c: &mut PacingClock, now: Time, rate: Rate, goal: u64) -> Option<Time> {
        let wait = c.wait(now, || goal);
        if wait.is_none() {
            c.on_sent(now, Some(rate), 1500, || goal);
        }
        wait
    }

    #[test]
    fn linux_pacing_sends_bursts_after_ten_unpaced_packets() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let rate = Rate::from_mbps(12);
        let mut c = PacingClock::new(Pacer::LinuxTso);
        let t0 = Time::ZERO + Duration::from_millis(5);
        for _ in 0..9 {
            assert_eq!(send(&mut c, t0, rate, 3), None);
        }
        // The 10th is paced: it and two more make a burst of 3, then 3 ms of wait.
        for _ in 0..3 {
            assert_eq!(send(&mut c, t0, rate, 3), None);
        }
        let t1 = t0 + Duration::from_millis(3);
        assert_eq!(send(&mut c, t0, rate, 3), Some(t1));
        for _ in 0..3 {
            assert_eq!(send(&mut c, t1, rate, 3), None);
        }
        assert_eq!(
            send(&mut c, t1, rate, 3),
            Some(t1 + Duration::from_millis(3))
        );
    }

    #[test]
    fn a_late_burst_gets_up_to_half_a_packet_of_credit() {
        let rate = Rate::from_mbps(12);
        let mut c = PacingClock::new(Pacer::LinuxTso);
        let t0 = Time::ZERO + Duration::from_millis(5);
        for _ in 0..10 {
            send(&mut c, t0, rate, 1);
        }
        // Due at t0 + 1 ms; sent 0.2 ms late: the next is due 0.8 ms after it.
        let late = t0 + Duration::from_micros(1200);
        assert_eq!(send(&mut c, late, rate, 1), None);
        assert_eq!(
            send(&mut c, late, rate, 1),
            Some(late + Duration::from_micros(800))
        );
        // Very late: at most half a packet's time is forgiven.
        let later = late + Duration::from_millis(50);
        assert_eq!(send(&mut c, later, rate, 1), None);
        assert_eq!(
            send(&mut c, later, rate, 1),
            Some(later + Duration::from_micros(500))
        );
    }

    #[test]
    fn per_packet_pacing_spaces_every_packet() {
        let rate = Rate::from_mbps(12);
        let mut c = PacingClock::new(Pacer::PerPacket);
        let t0 = Time::ZERO + Duration::from_millis(5);
        assert_eq!(send(&mut c, t0, rate, 3), None);
        let t1 = t0 + Duration::from_millis(1);
        assert_eq!(send(&mut c, t0, rate, 3), Some(t1));
        assert_eq!(send(&mut c, t1, rate, 3), None);
    }
}
