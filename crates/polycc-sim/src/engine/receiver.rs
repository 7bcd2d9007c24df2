//! The receiving end of a reliable flow: which packets and segments arrived, when to ACK, and the
//! arrival log that carries per-packet receive times back to the sender as feedback.

use super::events::Timer;
use super::segset::SegSet;
use super::sender::NO_SEGMENT;
use polycc::signals::Arrival;
use polycc::units::{Duration, Time};
use std::collections::VecDeque;

pub struct Receiver {
    /// Received packet-number ranges, inclusive, append-only (packets of one flow arrive in
    /// order because every stage of the path is FIFO per flow, so holes are permanent losses;
    /// a link `jitter` with `reorder` breaks this on purpose, and a late packet is then
    /// delivered but not acknowledged).
    pub ranges: Vec<(u64, u64)>,
    pub segs: SegSet,
    ack_every: u32,
    max_ack_delay: Duration,
    unacked: u32,
    pub ack_timer: Timer,
    largest_arrival: Time,
    /// Arrivals not yet consumed by the sender, and the global index of the first one.
    pub log: VecDeque<Arrival>,
    pub log_base: u64,
    pub keep_log: bool,
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
            ranges: Vec::new(),
            segs: SegSet::new(),
            ack_every,
            max_ack_delay,
            unacked: 0,
            ack_timer: Timer::default(),
            largest_arrival: Time::ZERO,
            log: VecDeque::new(),
            log_base: 0,
            keep_log,
        }
    }

    pub fn largest(&self) -> Option<u64> {
        self.ranges.last().map(|r| r.1)
    }

    pub fn on_data(&mut self, now: Time, pn: u64, seg: u64, bytes: u64, sent: Time) -> Received {
        let in_order = match self.ranges.last_mut() {
            Some(r) if pn == r.1 + 1 => {
                r.1 = pn;
                true
            }
            Some(r) if pn <= r.1 => false, // late (reordering jitter only): not acknowledged
            None if pn == 0 => {
                self.ranges.push((0, 0));
                true
            }
            _ => {
                self.ranges.push((pn, pn));
                false
            }
        };
        self.largest_arrival = now;
        if self.keep_log {
            self.log.push_back(Arrival {
                pn,
                bytes,
                sent_time: sent,
                arrival_time: now,
            });
        }
        let new_segment = seg != NO_SEGMENT && self.segs.insert(seg);
        self.unacked += 1;
        // RFC 9000 §13.2.1 / RFC 5681 §4.2: acknowledge at once when a gap appears.
        let ack_now = !in_order || self.unacked >= self.ack_every;
        Received {
            new_segment,
            ack_now,
        }
    }

    /// When the delayed-ACK timer should fire after a packet that was not acknowledged at once.
    pub fn ack_deadline(&self, now: Time) -> Time {
        now + self.max_ack_delay
    }

    /// Builds the fields of an ACK sent at `now`: (last range index, largest pn, ACK delay,
    /// log position).
    pub fn make_ack(&mut self, now: Time) -> Option<(u64, u64, Duration, u64)> {
        let (idx, largest) = (self.ranges.len().checked_sub(1)?, self.largest()?);
        self.unacked = 0;
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
