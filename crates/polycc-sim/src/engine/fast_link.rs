//! Event-free service of a constant-rate drop-tail link direction.
//!
//! On such a link a packet's fate is known the moment it arrives: it is dropped if the waiting
//! packets leave no room, otherwise it starts transmission when the link has finished everything
//! accepted before it, `start = max(arrival, busy_until)`, and departs one transmission time
//! later. The engine therefore hands an accepted packet straight to the next delay line with its
//! departure as entry time, and needs no event per departure (one of the three events a data
//! packet costs on the general path).
//!
//! What the general path observes at service start and departure (sojourn samples, queue
//! occupancy, bytes sent per bin) is replayed lazily: [`FastLink::release`] hands back the
//! service starts and departures due by a given time, in time order, so counters and bins come
//! out as they would with one event per packet.
//!
//! Ties: a packet departing at `t` has left, and the next one has started, before a packet
//! arriving at `t` is judged (the general path's order depends on event insertion order).

use crate::queue::Limits;
use polycc::units::{Duration, Rate, Time};
use std::collections::VecDeque;

/// A packet accepted by the link, with its service already scheduled.
/// Its start is not kept: it is the later of its arrival and the departure of the packet before
/// it (`FastLink::last_depart` once that one has left), and 24 bytes stream through the caches
/// faster than 32 with a thousand flows' state competing for them (BENCHMARKS.md, issue 15).
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    arrival: Time,
    depart: Time,
    bytes: u32,
}

/// What [`FastLink::release`] hands back, in time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// A packet started transmission at `at` after waiting `sojourn`; `waiting_before` bytes
    /// were waiting just before.
    Started {
        at: Time,
        sojourn: Duration,
        waiting_before: u64,
    },
    /// A packet of this many bytes finished transmission.
    Departed(u64),
}

pub struct FastLink {
    rate: Rate,
    limits: Limits,
    /// Departure of the last accepted packet.
    busy_until: Time,
    /// Departure of the last packet that left (zero before the first).
    last_depart: Time,
    /// Accepted packets not yet departed, in service order. Packet k + 1 cannot start before
    /// packet k departs, so only the front can have started. A ring buffer: a vector compacted
    /// now and then (the departed entries moved out in bulk) copied 31 instructions' worth per
    /// packet and cycled through twice the memory, with a thousand flows the stores of the copy
    /// missing the L2 (BENCHMARKS.md, issue 15).
    scheduled: VecDeque<Scheduled>,
    front_started: bool,
    waiting_bytes: u64,
}

impl FastLink {
    /// `None` for a rate of zero (nothing is ever served; the general path handles it).
    pub fn new(rate: Rate, limits: Limits) -> Option<Self> {
        (rate.0 > 0).then(|| FastLink {
            rate,
            limits,
            busy_until: Time::ZERO,
            last_depart: Time::ZERO,
            scheduled: VecDeque::new(),
            front_started: false,
            waiting_bytes: 0,
        })
    }

    /// Judges a packet of `bytes` arriving at `now`; everything due by `now` must have been
    /// released. Returns its departure time and sojourn, or `None` when drop-tail drops it.
    /// A packet finding the link idle starts at `now`: release again to account for it.
    #[inline]
    pub fn admit(&mut self, now: Time, bytes: u32) -> Option<(Time, Duration)> {
        if self
            .limits
            .would_overflow(self.waiting_bytes, self.waiting_packets(), bytes as u64)
        {
            return None;
        }
        let start = now.max(self.busy_until);
        let depart = start + self.rate.time_to_send(bytes as u64);
        self.busy_until = depart;
        self.scheduled.push_back(Scheduled {
            arrival: now,
            depart,
            bytes,
        });
        self.waiting_bytes += bytes as u64;
        Some((depart, start - now))
    }

    /// Releases the next service start or departure at or before `until`.
    pub fn release(&mut self, until: Time) -> Option<Released> {
        let s = *self.scheduled.front()?;
        if !self.front_started {
            let start = s.arrival.max(self.last_depart);
            if start > until {
                return None;
            }
            let waiting_before = self.waiting_bytes;
            self.waiting_bytes -= s.bytes as u64;
            self.front_started = true;
            return Some(Released::Started {
                at: start,
                sojourn: start - s.arrival,
                waiting_before,
            });
        }
        if s.depart > until {
            return None;
        }
        self.scheduled.pop_front();
        self.last_depart = s.depart;
        self.front_started = false;
        Some(Released::Departed(s.bytes as u64))
    }

    /// Bytes waiting (accepted, not started) as of the last release.
    pub fn waiting_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    /// Packets waiting as of the last release.
    pub fn waiting_packets(&self) -> usize {
        self.scheduled.len() - self.front_started as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduled_packet_takes_24_bytes() {
        assert_eq!(std::mem::size_of::<Scheduled>(), 24);
    }

    const MBPS_12: Rate = Rate(12_000_000); // 1500 B take 1 ms

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// Service starts (time, waiting bytes before) and departures (bytes) due by `t`.
    fn release(l: &mut FastLink, t: Time) -> (Vec<(Time, u64)>, Vec<u64>) {
        let mut s = Vec::new();
        let mut d = Vec::new();
        while let Some(r) = l.release(t) {
            match r {
                Released::Started {
                    at, waiting_before, ..
                } => s.push((at, waiting_before)),
                Released::Departed(b) => d.push(b),
            }
        }
        (s, d)
    }

    #[test]
    fn back_to_back_packets_queue_and_leave_one_transmission_apart() {
        let limits = Limits {
            bytes: None,
            packets: Some(2),
        };
        let mut l = FastLink::new(MBPS_12, limits).unwrap();
        assert_eq!(l.admit(ms(0), 1500), Some((ms(1), Duration::ZERO)));
        release(&mut l, ms(0));
        // Two wait behind the one in service; the fourth does not fit.
        assert_eq!(l.admit(ms(0), 1500), Some((ms(2), Duration(1_000_000))));
        assert_eq!(l.admit(ms(0), 1500), Some((ms(3), Duration(2_000_000))));
        assert_eq!(l.admit(ms(0), 1500), None);
        assert_eq!((l.waiting_packets(), l.waiting_bytes()), (2, 3000));
        // At 1 ms the first has left and the second started: room for one more.
        let (s, d) = release(&mut l, ms(1));
        assert_eq!(d, vec![1500]);
        assert_eq!(s, vec![(ms(1), 3000)]);
        assert_eq!(l.admit(ms(1), 1500), Some((ms(4), Duration(2_000_000))));
        assert_eq!(l.admit(ms(1), 1500), None);
    }

    #[test]
    fn an_idle_link_starts_at_arrival() {
        let limits = Limits {
            bytes: Some(3000),
            packets: None,
        };
        let mut l = FastLink::new(MBPS_12, limits).unwrap();
        assert_eq!(l.admit(ms(0), 1500), Some((ms(1), Duration::ZERO)));
        let (s, d) = release(&mut l, ms(5));
        assert_eq!((s.len(), d), (1, vec![1500]));
        assert_eq!(l.admit(ms(5), 750), Some((Time(5_500_000), Duration::ZERO)));
        assert!(FastLink::new(Rate(0), limits).is_none());
    }
}
