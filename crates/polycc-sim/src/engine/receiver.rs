//! The receiving end of a reliable flow: which packets and segments arrived, when to ACK, and the
//! arrival log that carries per-packet receive times back to the sender as feedback.

use super::delayed_ack::{Arriving, LinuxDelayedAck, Segment};
use super::events::Timer;
use super::pn_ranges::{Arrived, PnRanges};
use super::segset::SegSet;
use super::sender::NO_SEGMENT;
use crate::scenario::host::ReceiverAcks;
use polycc::signals::Arrival;
use polycc::units::{Duration, Time};
use std::collections::VecDeque;

/// Laid out in the order written (`repr(C)`): what every arriving packet touches first, the
/// arrival log (kept for some controllers only) last.
#[repr(C)]
pub struct Receiver {
    /// Received packet numbers. Holes are permanent losses on FIFO paths (a retransmission gets
    /// a new number); behind a reordering link `jitter` a late packet fills (part of) one and is
    /// acknowledged like any other.
    pub pns: PnRanges,
    pub segs: SegSet,
    /// The application's [`super::app::App::receiving_end`], kept here beside `segs`, which
    /// every data packet reads, so that a packet that completes no transfer does not read the
    /// application's state (with many flows a cache miss per packet; BENCHMARKS.md, issue 15).
    pub transfer_end: u64,
    pub ack_timer: Timer,
    largest_arrival: Time,
    max_ack_delay: Duration,
    ack_every: u32,
    unacked: u32,
    pub keep_log: bool,
    /// Linux's delayed ACKs instead of `ack_every` and `max_ack_delay` (the Linux stack);
    /// boxed, so that the other stacks' receivers stay small.
    linux: Option<Box<LinuxDelayedAck>>,
    /// The segments' payload, for what the Linux receiver's application has read.
    mss: u64,
    /// Arrivals not yet consumed by the sender, and the global index of the first one.
    pub log: VecDeque<Arrival>,
    pub log_base: u64,
}

/// What the receiver decided about an arriving packet.
pub struct Received {
    /// The segment was new: its payload counts towards goodput.
    pub new_segment: bool,
    /// Send an ACK now.
    pub ack_now: bool,
}

impl Receiver {
    pub fn new(ack_every: u32, max_ack_delay: Duration, keep_log: bool) -> Self {
        Receiver {
            pns: PnRanges::new(),
            segs: SegSet::new(),
            transfer_end: u64::MAX,
            ack_every,
            max_ack_delay,
            unacked: 0,
            ack_timer: Timer::default(),
            largest_arrival: Time::ZERO,
            log: VecDeque::new(),
            log_base: 0,
            keep_log,
            linux: None,
            mss: 0,
        }
    }

    /// Acknowledges as `acks` says: the policy given to [`Receiver::new`], or Linux's delayed
    /// ACKs ([`LinuxDelayedAck`]) for segments of `mss` bytes whose ACKs take `reverse_owd`
    /// back to the sender.
    pub fn with_acks(self, acks: ReceiverAcks, mss: u64, reverse_owd: Duration) -> Self {
        Receiver {
            linux: (acks == ReceiverAcks::Linux)
                .then(|| Box::new(LinuxDelayedAck::new(mss, reverse_owd))),
            mss,
            ..self
        }
    }

    #[inline]
    pub fn on_data(&mut self, now: Time, pn: u64, seg: u64, bytes: u64, sent: Time) -> Received {
        let in_order = self.pns.insert(pn) == Arrived::InOrder;
        self.largest_arrival = now;
        if self.keep_log {
            self.log.push_back(Arrival {
                pn,
                bytes,
                sent_time: sent,
                arrival_time: now,
            });
        }
        let (next_seg, hole) = (self.segs.cumulative(), self.segs.has_hole());
        let new_segment = seg != NO_SEGMENT && self.segs.insert(seg);
        self.unacked += 1;
        let ack_now = match self.linux.as_mut() {
            // RFC 9000 §13.2.1 / RFC 5681 §4.2: acknowledge at once when a gap appears and when
            // a packet arrives below the largest (it fills a hole, or is a duplicate).
            None => !in_order || self.unacked >= self.ack_every,
            // TCP's receiver goes by sequence (segments), not by packet numbers.
            Some(d) => {
                let kind = if !new_segment {
                    Segment::Duplicate
                } else if seg != next_seg {
                    Segment::AboveHole
                } else if hole {
                    Segment::FillsHole
                } else {
                    Segment::InOrder
                };
                let arriving = Arriving {
                    seg: kind,
                    sent,
                    bytes: self.mss,
                    rcv_nxt: self.segs.cumulative(),
                };
                let ack_now = d.on_segment(now, arriving, self.unacked);
                // The application reads what is in order as it arrives.
                d.on_read(now, self.segs.cumulative() * self.mss);
                ack_now
            }
        };
        Received {
            new_segment,
            ack_now,
        }
    }

    /// Where to move the ACK timer, armed for `armed`, after a packet that was not
    /// acknowledged at once; `None` keeps it. A held ACK's timer is not pushed back by later
    /// packets; a SACK compressed by the Linux receiver brings it forward.
    pub fn ack_deadline(&self, now: Time, armed: Option<Time>) -> Option<Time> {
        match &self.linux {
            None => armed.is_none().then(|| now + self.max_ack_delay),
            Some(d) => match d.compressed_deadline() {
                Some(c) => armed.is_none_or(|a| c < a).then_some(c),
                None => armed.is_none().then(|| d.deadline(now)),
            },
        }
    }

    /// Builds the fields of an ACK sent at `now`: (last arrival-run index, largest pn, ACK
    /// delay, log position); the first two pin down what it covers (`PnRanges`).
    pub fn make_ack(&mut self, now: Time) -> Option<(u64, u64, Duration, u64)> {
        let (idx, largest) = (self.pns.runs().last_index()?, self.pns.largest()?);
        self.unacked = 0;
        if let Some(d) = self.linux.as_mut() {
            d.on_ack_sent();
        }
        self.ack_timer.cancel();
        Some((
            idx as u64,
            largest,
            now - self.largest_arrival,
            self.log_base + self.log.len() as u64,
        ))
    }

    /// Drops log entries the sender has consumed.
    pub fn trim_log(&mut self, upto: u64) {
        while self.log_base < upto && self.log.pop_front().is_some() {
            self.log_base += 1;
        }
    }

    pub fn has_unacked(&self) -> bool {
        self.unacked > 0
    }
}
