//! Which packets one s2n-quic ACK acknowledged, rebuilt from its byte count.
//!
//! s2n-quic's `CongestionController::on_ack` gets the bytes newly acknowledged by an ACK frame
//! and the packet info of the newest of them only; losses come one packet at a time with their
//! info. polycc's per-packet outcomes ([`polycc::CongestionControl::on_packet_acked`], used by
//! PCC's monitor intervals) and an ACK's packet count and RTT spread need each acknowledged
//! packet. The ledger keeps every congestion-controlled packet the adapter numbered, and
//! attributes an ACK's bytes to the packets still in flight at or below the newest one,
//! newest first.
//!
//! The attribution is exact when the ACK's ranges cover everything in flight below its newest
//! packet (the common case), and when the packets it skips were declared lost before it (s2n
//! reports losses before the ACK that reveals them, RFC 9002 Appendix A.7). It is inexact only
//! for a gap not yet declared lost (reordering within the loss thresholds): a packet of the gap
//! is counted as acknowledged and one older packet stays in flight. The totals stay exact, and
//! the ledger stays bounded: after each ACK, entries more than [`PACKET_THRESHOLD`] below the
//! newest acknowledged one are dropped, since s2n has by then declared lost any such packet
//! that was not acknowledged.

use polycc::units::{Bytes, Time};
use std::collections::VecDeque;

/// RFC 9002 §6.1.1 kPacketThreshold (s2n-quic `K_PACKET_THRESHOLD`): a packet this many below
/// an acknowledged one is lost, so no later ACK can acknowledge it for the first time.
pub const PACKET_THRESHOLD: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InFlight,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    bytes: Bytes,
    sent: Time,
    state: State,
}

/// One acknowledged packet, as attributed: its number (the adapter's), size and send time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acked {
    /// The adapter's packet number ([`polycc::SentPacket::pn`]).
    pub pn: u64,
    /// Bytes counted in flight.
    pub bytes: Bytes,
    /// When it was sent.
    pub sent: Time,
}

/// The packets in flight, by the adapter's consecutive packet numbers.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    entries: VecDeque<Entry>,
    /// The packet number of `entries[0]`.
    first: u64,
    /// Entries in state `InFlight`.
    in_flight: usize,
}

impl Ledger {
    /// An empty ledger whose first packet will be number 0.
    pub fn new() -> Self {
        Ledger::default()
    }

    /// Packets it still holds (in flight or not yet pruned).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Packets it holds that are still in flight (neither acknowledged, lost nor dropped).
    pub fn in_flight_packets(&self) -> usize {
        self.in_flight
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Records packet `pn`, the next number after the last one pushed.
    pub fn push(&mut self, pn: u64, bytes: Bytes, sent: Time) {
        if self.entries.is_empty() {
            self.first = pn;
        }
        debug_assert_eq!(pn, self.first + self.entries.len() as u64);
        self.entries.push_back(Entry {
            bytes,
            sent,
            state: State::InFlight,
        });
        self.in_flight += 1;
    }

    fn index(&self, pn: u64) -> Option<usize> {
        let i = usize::try_from(pn.checked_sub(self.first)?).ok()?;
        (i < self.entries.len()).then_some(i)
    }

    /// Packet `pn` was declared lost; false when the ledger had already attributed it to an
    /// ACK or dropped it.
    pub fn on_lost(&mut self, pn: u64) -> bool {
        match self.index(pn) {
            Some(i) if self.entries[i].state == State::InFlight => {
                self.entries[i].state = State::Done;
                self.in_flight -= 1;
                true
            }
            _ => false,
        }
    }

    /// An ACK newly acknowledged `bytes`, `newest` being its newest packet: fills `out` with the
    /// packets it is attributed, oldest first, and prunes, filling `dropped` with the packets
    /// pruned while still in flight (s2n discarded them, or the attribution missed them): no
    /// outcome will come for those.
    pub fn on_ack(
        &mut self,
        newest: u64,
        bytes: Bytes,
        out: &mut Vec<Acked>,
        dropped: &mut Vec<Acked>,
    ) {
        out.clear();
        dropped.clear();
        let mut left = bytes;
        if let Some(top) = self.index(newest) {
            for i in (0..=top).rev() {
                if left == 0 {
                    break;
                }
                let e = &mut self.entries[i];
                if e.state == State::InFlight {
                    e.state = State::Done;
                    self.in_flight -= 1;
                    left = left.saturating_sub(e.bytes);
                    out.push(Acked {
                        pn: self.first + i as u64,
                        bytes: e.bytes,
                        sent: e.sent,
                    });
                }
            }
        }
        out.reverse();
        self.prune(newest, dropped);
    }

    /// Drops finished entries from the front, and those more than [`PACKET_THRESHOLD`] below
    /// `newest` whatever their state (packets the attribution missed or s2n discarded), the
    /// latter into `dropped`.
    fn prune(&mut self, newest: u64, dropped: &mut Vec<Acked>) {
        let floor = newest.saturating_sub(PACKET_THRESHOLD);
        while let Some(e) = self.entries.front() {
            if e.state == State::InFlight && self.first >= floor {
                break;
            }
            if e.state == State::InFlight {
                self.in_flight -= 1;
                dropped.push(Acked {
                    pn: self.first,
                    bytes: e.bytes,
                    sent: e.sent,
                });
            }
            self.entries.pop_front();
            self.first += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(n: u64, bytes: Bytes) -> Ledger {
        let mut l = Ledger::new();
        for pn in 0..n {
            l.push(pn, bytes, Time(pn * 1000));
        }
        l
    }

    fn pns(out: &[Acked]) -> Vec<u64> {
        out.iter().map(|a| a.pn).collect()
    }

    #[test]
    fn a_contiguous_ack_is_attributed_exactly() {
        let mut l = ledger(10, 1200);
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        l.on_ack(4, 5 * 1200, &mut out, &mut dropped);
        assert_eq!(pns(&out), vec![0, 1, 2, 3, 4]);
        assert_eq!(out[2].sent, Time(2000));
        // Acked entries left the front: 5 remain, all in flight.
        assert_eq!(l.len(), 5);
        assert_eq!(l.in_flight_packets(), 5);
        l.on_ack(9, 5 * 1200, &mut out, &mut dropped);
        assert_eq!(pns(&out), vec![5, 6, 7, 8, 9]);
        assert!(l.is_empty());
        assert_eq!(l.in_flight_packets(), 0);
    }

    #[test]
    fn packets_lost_before_the_ack_are_skipped() {
        // 0..10 sent; 5 declared lost (s2n reports it before the ACK [0-4, 6-9]).
        let mut l = ledger(10, 1200);
        assert!(l.on_lost(5));
        assert!(!l.on_lost(5), "a loss is taken once");
        assert_eq!(l.in_flight_packets(), 9);
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        l.on_ack(9, 9 * 1200, &mut out, &mut dropped);
        assert_eq!(pns(&out), vec![0, 1, 2, 3, 4, 6, 7, 8, 9]);
        assert!(l.is_empty());
    }

    #[test]
    fn mixed_sizes_are_consumed_newest_first() {
        let mut l = Ledger::new();
        for (pn, b) in [(0, 1200), (1, 300), (2, 1200)] {
            l.push(pn, b, Time(pn));
        }
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        // An ACK of packets 1 and 2 (1500 bytes) leaves packet 0 in flight.
        l.on_ack(2, 1500, &mut out, &mut dropped);
        assert_eq!(pns(&out), vec![1, 2]);
        assert_eq!(
            l.len(),
            3,
            "packet 0 is still in flight and holds the front"
        );
        l.on_ack(0, 1200, &mut out, &mut dropped);
        assert_eq!(pns(&out), vec![0]);
        assert!(l.is_empty());
    }

    #[test]
    fn an_unattributed_packet_is_dropped_past_the_packet_threshold() {
        // ACK [1-8, 10] while 9 is in a gap not yet declared lost: 9 is taken for 0.
        let mut l = ledger(11, 1000);
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        l.on_ack(10, 10 * 1000, &mut out, &mut dropped);
        assert_eq!(out.len(), 10);
        assert_eq!(out[0].pn, 1, "packet 0 is missed, 9 counted instead");
        // Packet 0 is more than 3 below 10: dropped, so the ledger holds nothing in flight, and
        // handed back as a packet no outcome will come for.
        assert!(l.is_empty());
        assert_eq!(pns(&dropped), vec![0]);
        // The late loss of 9 finds it already attributed.
        assert!(!l.on_lost(9));
    }

    #[test]
    fn the_ledger_stays_bounded_over_a_long_lossy_run() {
        // A million packets, a window of 64 in flight, ACKs of two packets; 3 % lost (declared
        // before the ACK that reveals them) and 0.1 % never reported at all (s2n discarded
        // them). The ledger holds the window and at most the few packets below the newest
        // acknowledged one that the packet threshold keeps: never more, however long the run.
        const WINDOW: u64 = 64;
        const BOUND: usize = WINDOW as usize + PACKET_THRESHOLD as usize + 2;
        let mut l = Ledger::new();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut draw = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1000
        };
        let (mut sent, mut resolved, mut longest) = (0u64, 0u64, 0usize);
        let (mut out, mut dropped) = (Vec::new(), Vec::new());
        let (mut acked, mut lost, mut gone) = (0u64, 0u64, 0u64);
        while resolved < 1_000_000 {
            while sent - resolved < WINDOW {
                l.push(sent, 1200, Time(sent));
                sent += 1;
            }
            longest = longest.max(l.len());
            let (mut newest, mut bytes) = (None, 0);
            for pn in resolved..resolved + 2 {
                match draw() {
                    0..30 => {
                        assert!(l.on_lost(pn), "packet {pn} is in flight");
                        lost += 1;
                    }
                    30 => {} // never reported
                    _ => {
                        newest = Some(pn);
                        bytes += 1200;
                    }
                }
            }
            resolved += 2;
            if let Some(n) = newest {
                l.on_ack(n, bytes, &mut out, &mut dropped);
                acked += out.len() as u64;
                gone += dropped.len() as u64;
            }
            // The in-flight count is every packet sent without an outcome yet.
            assert_eq!(l.in_flight_packets() as u64, sent - acked - lost - gone);
            assert!(
                l.len() <= BOUND,
                "{} entries after packet {resolved}",
                l.len()
            );
        }
        assert!(longest <= BOUND, "{longest}");
        // The outcomes: nearly every packet that was not lost was attributed to an ACK (a
        // packet never reported can take the place of one the ACK covered, once in a while).
        assert!(lost > 25_000 && lost < 35_000, "{lost}");
        assert!(
            acked + lost >= 998_000 && acked + lost <= 1_000_000,
            "{acked} + {lost}"
        );
    }
}
