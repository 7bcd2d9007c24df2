//! Linux's delayed ACKs (`net/ipv4/tcp_input.c` `__tcp_ack_snd_check`, `tcp_event_data_recv`,
//! `tcp_output.c` `tcp_send_delayed_ack`): the receiver of a flow on the Linux stack.
//!
//! - **Quick ACKs**: the first [`MAX_QUICKACKS`] ACKs of a connection go out at once, one per
//!   segment (`tcp_incr_quickack`), so that slow start is not slowed by the receiver; quick-ACK
//!   mode comes back after a gap longer than [`QUICKACK_GAP`] and on a duplicate segment.
//! - **Every second full segment** is acknowledged at once ("more than one full frame").
//! - **Out of order**: a segment above a hole, and one that fills a hole, are acknowledged at
//!   once (the kernel's SACK compression, which may hold such ACKs up to 1 ms, is not modelled).
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
}

/// A data segment as the receiver sees it arrive.
#[derive(Clone, Copy, Debug)]
pub struct Arriving {
    pub seg: Segment,
    /// When the sender sent it.
    pub sent: Time,
    /// Its payload.
    pub bytes: u64,
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
            // Held out of order: it grows the window too (`tcp_data_queue_ofo`), and is
            // acknowledged at once anyway.
            Segment::AboveHole => {
                self.window.on_segment(now, a.sent, a.bytes);
                return true;
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
}
