//! Linux's delayed ACKs (`net/ipv4/tcp_input.c` `__tcp_ack_snd_check`, `tcp_event_data_recv`,
//! `tcp_output.c` `tcp_send_delayed_ack`): the receiver of a flow on the Linux stack.
//!
//! - **Quick ACKs**: the first [`MAX_QUICKACKS`] ACKs of a connection go out at once, one per
//!   segment (`tcp_incr_quickack`), so that slow start is not slowed by the receiver; quick-ACK
//!   mode comes back after a gap longer than [`QUICKACK_GAP`] and on a duplicate segment.
//! - **Every second full segment** is acknowledged at once ("more than one full frame").
//! - **Out of order**: a segment that fills a hole is acknowledged at once. Segments above a
//!   hole are too, the first [`DUPACKS_AT_ONCE`] at each cumulative point; after those the
//!   kernel compresses the SACKs (`tcp_sack_compress`, since 4.18): the ACK waits up to
//!   [`COMP_SACK_DELAY`] or 5 % of the RTT, or until [`COMP_SACK_NR`] were held, so that a
//!   train of segments above a hole is SACKed by one ACK (traced at 100 Mbit/s: one SACK
//!   per 6-8 segments).
//! - **While the receive window grows**, each segment that grows it is acknowledged at once
//!   ([`ReceiveWindow`]; `tcp_grow_window` sets `icsk_ack.quick |= 1`).
//! - **The delayed-ACK timer** otherwise: `ato`, which starts at [`ATO_MIN`] (40 ms) and follows
//!   the segments' inter-arrival time (`tcp_event_data_recv`), at most [`ATO_MAX`] (200 ms).

use super::receive_window::ReceiveWindow;
use polycc::units::{Duration, Time};

/// `TCP_MAX_QUICKACKS`: ACKs sent at once at the start and after a long gap.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_ATO_MIN` = `TCP_DELACK_MIN` = HZ/25: the delayed-ACK timer's floor and start.
pub const ATO_MIN: Duration = Duration::from_millis(40);
/// `TCP_DELACK_MAX` = HZ/5: the longest an ACK is held.
pub const ATO_MAX: Duration = Duration::from_millis(200);
/// `tcp_event_data_recv` re-enters quick-ACK mode after a gap longer than the RTO; the receiver
/// of a bulk flow has no RTT of its own, so the RTO's floor (`TCP_RTO_MIN`) stands in for it.
pub const QUICKACK_GAP: Duration = Duration::from_millis(200);
/// `__tcp_ack_snd_check`: "more than one full frame received" sends the ACK, so one ACK covers
/// two full segments.
pub const SEGMENTS_PER_ACK: u32 = 2;

/// `TCP_FASTRETRANS_THRESH`: the duplicate ACKs sent at once at a cumulative point before the
/// kernel compresses the next ones (`__tcp_ack_snd_check`), so that the sender's fast
/// retransmit is not delayed.
pub const DUPACKS_AT_ONCE: u32 = 3;
/// `net.ipv4.tcp_comp_sack_nr` (default 44): at most this many ACKs are held back by SACK
/// compression before one goes out.
pub const COMP_SACK_NR: u32 = 44;
/// `net.ipv4.tcp_comp_sack_delay_ns` (default 1 ms): the longest a compressed SACK waits.
pub const COMP_SACK_DELAY: Duration = Duration::from_millis(1);
/// The compressed SACK waits 5 % of the receiver's RTT if that is shorter (`rtt / 20`).
pub const COMP_SACK_RTT_DIVISOR: u64 = 20;

/// How an arriving segment relates to what was received before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// The next expected one, with nothing received beyond it.
    InOrder,
    /// Above a hole: the receiver holds it out of order.
    AboveHole,
    /// The next expected one while segments beyond it are held: it fills (part of) the hole.
    FillsHole,
    /// Already received (a spurious retransmission).
    Duplicate,
}

/// The delayed-ACK state of one connection's receiver (`icsk_ack`).
#[derive(Clone, Debug)]
pub struct LinuxDelayedAck {
    /// ACKs left to send at once (`icsk_ack.quick`); `None` before the first segment.
    quick: Option<u32>,
    /// The delayed-ACK timeout (`icsk_ack.ato`).
    ato: Duration,
    /// When the last in-order segment arrived (`icsk_ack.lrcvtime`).
    last_arrival: Time,
    window: ReceiveWindow,
    /// SACK compression (`tcp_sock` `compressed_ack_rcv_nxt`, `dup_ack_counter`,
    /// `compressed_ack`, and the compressed-ACK timer's expiry).
    dupacks_at: u64,
    dupacks: u32,
    compressed: u32,
    compressed_deadline: Option<Time>,
}

/// A data segment as the receiver sees it arrive.
#[derive(Clone, Copy, Debug)]
pub struct Arriving {
    pub seg: Segment,
    /// When the sender sent it.
    pub sent: Time,
    /// Its payload.
    pub bytes: u64,
    /// The next segment expected in order once this one is taken (`rcv_nxt`).
    pub rcv_nxt: u64,
}

impl LinuxDelayedAck {
    /// The receiver of a connection whose segments carry `mss` bytes and whose ACKs take
    /// `reverse_owd` to the sender.
    pub fn new(mss: u64, reverse_owd: Duration) -> Self {
        LinuxDelayedAck {
            quick: None,
            ato: ATO_MIN,
            last_arrival: Time::ZERO,
            window: ReceiveWindow::new(mss, reverse_owd),
            dupacks_at: u64::MAX,
            dupacks: 0,
            compressed: 0,
            compressed_deadline: None,
        }
    }

    /// A segment arrived at `now`; `unacked` counts the segments not yet acknowledged,
    /// this one included. Returns whether to acknowledge at once.
    pub fn on_segment(&mut self, now: Time, a: Arriving, unacked: u32) -> bool {
        match a.seg {
            Segment::Duplicate => {
                self.enter_quickack();
                return true;
            }
            // Held out of order: it grows the window too (`tcp_data_queue_ofo`).
            Segment::AboveHole => {
                if self.window.on_segment(now, a.sent, a.bytes) {
                    self.quick = self.quick.map(|q| q | 1);
                }
                return self.in_quickack() || self.dupack_at_once(now, a.rcv_nxt);
            }
            Segment::InOrder | Segment::FillsHole => {
                self.on_data(now);
                if self.window.on_segment(now, a.sent, a.bytes) {
                    self.quick = self.quick.map(|q| q | 1);
                }
            }
        }
        a.seg == Segment::FillsHole || self.in_quickack() || unacked >= SEGMENTS_PER_ACK
    }

    /// `__tcp_ack_snd_check` for a segment above a hole outside quick-ACK mode: the first
    /// duplicate ACKs at a cumulative point go at once, later ones are compressed.
    fn dupack_at_once(&mut self, now: Time, rcv_nxt: u64) -> bool {
        if self.compressed >= COMP_SACK_NR {
            return true;
        }
        if self.dupacks_at != rcv_nxt {
            self.dupacks_at = rcv_nxt;
            self.dupacks = 0;
        }
        if self.dupacks < DUPACKS_AT_ONCE {
            self.dupacks += 1;
            return true;
        }
        self.compressed += 1;
        if self.compressed_deadline.is_none() {
            // The kernel takes the smaller of the receiver's RTT estimate and the socket's
            // srtt, 0 before either exists; the model's receiver has the first only.
            let rtt = self.window.rtt().unwrap_or(Duration::ZERO);
            let wait = COMP_SACK_DELAY.min(Duration(rtt.0 / COMP_SACK_RTT_DIVISOR));
            self.compressed_deadline = Some(now + wait);
        }
        false
    }

    /// When the ACK held by SACK compression is due, if one is held.
    pub fn compressed_deadline(&self) -> Option<Time> {
        self.compressed_deadline
    }

    /// The application read everything in order, `copied` bytes in all, at `now`: the
    /// receive buffer's autotuning ([`ReceiveWindow::on_read`]).
    pub fn on_read(&mut self, now: Time, copied: u64) {
        self.window.on_read(now, copied);
    }

    /// `tcp_event_data_recv`: the first segment starts quick-ACK mode; later ones move `ato`
    /// towards the inter-arrival time.
    fn on_data(&mut self, now: Time) {
        if self.quick.is_none() {
            self.quick = Some(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else {
            let m = now - self.last_arrival;
            if m <= Duration(ATO_MIN.0 / 2) {
                self.ato = Duration(self.ato.0 / 2) + Duration(ATO_MIN.0 / 2);
            } else if m < self.ato {
                self.ato = (Duration(self.ato.0 / 2) + m).min(ATO_MAX);
            } else if m > QUICKACK_GAP {
                self.enter_quickack();
            }
        }
        self.last_arrival = now;
    }

    fn enter_quickack(&mut self) {
        self.quick = Some(MAX_QUICKACKS);
    }

    fn in_quickack(&self) -> bool {
        self.quick.is_some_and(|q| q > 0)
    }

    /// An ACK left (`tcp_dec_quickack_mode`): one quick ACK fewer; leaving quick-ACK mode
    /// deflates `ato` to its floor.
    pub fn on_ack_sent(&mut self) {
        // `tcp_event_ack_sent`: any ACK ends the compression in progress.
        self.compressed = 0;
        self.compressed_deadline = None;
        if let Some(q) = self.quick.as_mut() {
            if *q > 0 {
                *q -= 1;
                if *q == 0 {
                    self.ato = ATO_MIN;
                }
            }
        }
    }

    /// When the delayed-ACK timer fires for an ACK held at `now` (`tcp_send_delayed_ack`).
    pub fn deadline(&self, now: Time) -> Time {
        now + self.ato.clamp(ATO_MIN, ATO_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    const MSS: u64 = 1448;

    /// A receiver whose window is already open, so that only the ACK rules act.
    fn opened() -> LinuxDelayedAck {
        let mut d = LinuxDelayedAck::new(MSS, Duration::ZERO);
        while d.window.on_segment(Time::ZERO, Time::ZERO, MSS) {}
        d
    }

    fn seg(seg: Segment) -> Arriving {
        Arriving {
            seg,
            sent: Time::ZERO,
            bytes: MSS,
            rcv_nxt: 0,
        }
    }

    /// Feeds in-order segments at `times` and returns which were acknowledged at once,
    /// sending the ACKs as the receiver would.
    fn acks(d: &mut LinuxDelayedAck, times: impl IntoIterator<Item = Time>) -> Vec<bool> {
        let mut unacked = 0;
        times
            .into_iter()
            .map(|t| {
                unacked += 1;
                let now = d.on_segment(t, seg(Segment::InOrder), unacked);
                if now {
                    d.on_ack_sent();
                    unacked = 0;
                }
                now
            })
            .collect()
    }

    #[test]
    fn sixteen_quick_acks_then_every_second_segment() {
        let mut d = opened();
        let got = acks(&mut d, (0..24).map(ms));
        assert!(got[..16].iter().all(|&a| a), "{got:?}");
        assert_eq!(
            &got[16..],
            [false, true, false, true, false, true, false, true]
        );
    }

    #[test]
    fn a_held_ack_waits_ato_which_follows_the_arrivals() {
        let mut d = opened();
        acks(&mut d, (0..16).map(ms));
        // Segments 1 ms apart: ato = ato/2 + 20 ms stays at 40 ms.
        assert_eq!(d.deadline(ms(100)), ms(140));
        // Segments 30 ms apart (above 20 ms, below ato): ato = ato/2 + 30 = 50, then 55 ms.
        acks(&mut d, [ms(45)]);
        assert_eq!(d.deadline(ms(100)), ms(150));
        acks(&mut d, [ms(75)]);
        assert_eq!(d.deadline(ms(200)), ms(255));
    }

    #[test]
    fn out_of_order_and_duplicate_segments_are_acknowledged_at_once() {
        let mut d = opened();
        acks(&mut d, (0..17).map(ms));
        assert!(d.on_segment(ms(20), seg(Segment::AboveHole), 1));
        assert!(d.on_segment(ms(21), seg(Segment::FillsHole), 1));
        // A duplicate re-enters quick-ACK mode: the next segments are acknowledged one by one.
        assert!(d.on_segment(ms(22), seg(Segment::Duplicate), 1));
        d.on_ack_sent();
        assert!(d.on_segment(ms(23), seg(Segment::InOrder), 1));
    }

    #[test]
    fn a_long_gap_brings_quick_acks_back() {
        let mut d = opened();
        acks(&mut d, (0..17).map(ms));
        assert!(!d.on_segment(ms(17), seg(Segment::InOrder), 1));
        assert!(d.on_segment(ms(500), seg(Segment::InOrder), 2));
        d.on_ack_sent();
        assert!(d.on_segment(ms(501), seg(Segment::InOrder), 1));
    }

    /// A segment above a hole at `rcv_nxt`, sent at `sent` (its one-way delay is 0 here, so
    /// the receiver's RTT samples are the reverse path's delay).
    fn above_hole(rcv_nxt: u64, sent: Time) -> Arriving {
        Arriving {
            rcv_nxt,
            sent,
            ..seg(Segment::AboveHole)
        }
    }

    /// A receiver past its quick ACKs with a receiver RTT of `rtt`.
    fn opened_with_rtt(rtt: Duration) -> LinuxDelayedAck {
        let mut d = LinuxDelayedAck::new(MSS, rtt);
        while d.window.on_segment(Time::ZERO, Time::ZERO, MSS) {}
        acks(&mut d, (0..17).map(|_| Time::ZERO));
        d
    }

    #[test]
    fn after_three_dupacks_sacks_are_compressed_for_a_millisecond() {
        let mut d = opened_with_rtt(Duration::from_millis(30));
        let t = |us: u64| Time::ZERO + Duration::from_micros(100_000 + us);
        // Segments above the hole at 5, 120 µs apart: three duplicate ACKs at once.
        for i in 0..3 {
            assert!(
                d.on_segment(t(120 * i), above_hole(5, t(120 * i)), 1),
                "dupack {i}"
            );
            d.on_ack_sent();
        }
        // The next ones are held: 1 ms (below 5 % of 30 ms) from the first held.
        for i in 3..10 {
            assert!(
                !d.on_segment(t(120 * i), above_hole(5, t(120 * i)), 1),
                "segment {i}"
            );
        }
        assert_eq!(d.compressed_deadline(), Some(t(360) + COMP_SACK_DELAY));
        // The held ACK goes out; the count at this cumulative point stays spent.
        d.on_ack_sent();
        assert_eq!(d.compressed_deadline(), None);
        assert!(!d.on_segment(t(2000), above_hole(5, t(2000)), 1));
        // A new cumulative point (part of the hole filled) gets its three at once again.
        d.on_ack_sent();
        assert!(d.on_segment(t(3000), above_hole(7, t(3000)), 1));
    }

    #[test]
    fn compression_waits_five_percent_of_a_short_rtt_and_holds_at_most_44() {
        let mut d = opened_with_rtt(Duration::from_millis(4));
        for _ in 0..DUPACKS_AT_ONCE {
            assert!(d.on_segment(ms(100), above_hole(0, ms(100)), 1));
            d.on_ack_sent();
        }
        for _ in 0..COMP_SACK_NR {
            assert!(!d.on_segment(ms(100), above_hole(0, ms(100)), 1));
        }
        // 5 % of the 4-ms receiver RTT (the model's sample: one-way 0 + reverse 4 ms).
        assert_eq!(
            d.compressed_deadline(),
            Some(ms(100) + Duration::from_micros(200))
        );
        assert!(
            d.on_segment(ms(100), above_hole(0, ms(100)), 1),
            "the 45th goes at once"
        );
    }

    #[test]
    fn in_quick_ack_mode_every_segment_above_a_hole_is_acknowledged() {
        let mut d = opened_with_rtt(Duration::from_millis(30));
        // A duplicate segment re-enters quick-ACK mode (16 ACKs at once).
        assert!(d.on_segment(ms(50), seg(Segment::Duplicate), 1));
        d.on_ack_sent();
        for i in 0..10 {
            assert!(
                d.on_segment(ms(51), above_hole(3, ms(51)), 1),
                "segment {i}"
            );
            d.on_ack_sent();
        }
        assert_eq!(d.compressed_deadline(), None);
    }
}
