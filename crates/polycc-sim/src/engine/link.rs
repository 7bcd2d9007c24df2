//! One direction of a link at run time: its queue discipline, its service process and counters.

use super::delay_histogram::DelayHistogram;
use super::fast_link::{FastLink, Released};
use super::packet::Packet;
use crate::queue::{Limits, Queue};
use crate::scenario::spec::{Capacity, QueueKind};
use crate::scenario::LinkDirModel;
use crate::service::Server;
use polycc::units::{Duration, Time};

/// Per-bin counters of a link direction.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkBin {
    pub tx_bytes: u64,
    pub drops: u64,
    pub sojourn_ns_sum: u128,
    pub sojourn_count: u64,
    /// Integral of queued bytes over time (byte·ns).
    pub queue_area: u128,
}

pub struct LinkDir {
    pub queue: Queue<Packet>,
    pub server: Server,
    pub in_service: Option<Packet>,
    pub tx_bytes: u64,
    pub drops: u64,
    pub sojourn_hist: DelayHistogram,
    pub sojourn_ns_sum: u128,
    pub sojourn_count: u64,
    pub bin: LinkBin,
    /// Data (not ACK) bytes in the queue, for the byte-conservation check.
    pub data_queued: u64,
    last_change: Time,
    /// Set when the direction qualifies for event-free service (see `fast_link`); `queue` and
    /// `in_service` then stay empty.
    pub fast: Option<FastLink>,
}

impl LinkDir {
    /// `event_free`: the caller allows event-free service (the direction's delay lines are fed
    /// by it alone, with fixed delay and no jitter); used when the capacity is constant and the
    /// queue drop-tail.
    pub fn new(m: &LinkDirModel, event_free: bool) -> Self {
        let fast = match (&m.capacity, m.queue.kind) {
            (Capacity::Constant(r), QueueKind::Droptail) if event_free => FastLink::new(
                *r,
                Limits {
                    bytes: m.queue_limit_bytes,
                    packets: m.queue_limit_packets,
                },
            ),
            _ => None,
        };
        LinkDir {
            queue: Queue::new(m),
            server: Server::new(m.capacity.clone()),
            in_service: None,
            tx_bytes: 0,
            drops: 0,
            sojourn_hist: DelayHistogram::new(),
            sojourn_ns_sum: 0,
            sojourn_count: 0,
            bin: LinkBin::default(),
            data_queued: 0,
            last_change: Time::ZERO,
            fast,
        }
    }

    /// Bytes waiting in the queue (not the one in service).
    fn queued_bytes(&self) -> u64 {
        match &self.fast {
            Some(f) => f.waiting_bytes(),
            None => self.queue.bytes(),
        }
    }

    pub fn queued_packets(&self) -> usize {
        match &self.fast {
            Some(f) => f.waiting_packets(),
            None => self.queue.packets(),
        }
    }

    /// Accumulates the queue-occupancy integral up to `now`; call before the queue changes.
    pub fn touch(&mut self, now: Time) {
        self.release(now);
        self.integrate_to(now);
    }

    fn integrate_to(&mut self, now: Time) {
        let dt = (now - self.last_change).0 as u128;
        self.bin.queue_area += dt * self.queued_bytes() as u128;
        self.last_change = now;
    }

    /// Event-free service: accounts, in time order, the service starts and departures due by
    /// `now`, as the general path's events would have.
    fn release(&mut self, now: Time) {
        while let Some(r) = self.fast.as_mut().and_then(|f| f.release(now)) {
            match r {
                Released::Started {
                    at,
                    sojourn,
                    waiting_before,
                } => {
                    let dt = (at - self.last_change).0 as u128;
                    self.bin.queue_area += dt * waiting_before as u128;
                    self.last_change = at;
                    self.record_sojourn(sojourn);
                }
                Released::Departed(b) => {
                    self.tx_bytes += b;
                    self.bin.tx_bytes += b;
                }
            }
        }
    }

    /// Event-free service of a packet arriving at `now`: its departure time and sojourn, or
    /// `None` when it is dropped. Only for a direction with `fast` set.
    #[inline]
    pub fn admit_fast(&mut self, now: Time, bytes: u32) -> Option<(Time, Duration)> {
        self.touch(now);
        let admitted = self.fast.as_mut()?.admit(now, bytes);
        if admitted.is_some_and(|(_, sojourn)| sojourn.is_zero()) {
            // It found the link idle and starts at once.
            self.release(now);
        }
        admitted
    }

    pub fn record_sojourn(&mut self, d: Duration) {
        let us = (d.0 / 1000).max(1);
        self.sojourn_hist.record_now(us);
        self.sojourn_ns_sum += d.0 as u128;
        self.sojourn_count += 1;
        self.bin.sojourn_ns_sum += d.0 as u128;
        self.bin.sojourn_count += 1;
    }

    pub fn data_bytes_queued(&self) -> u64 {
        self.data_queued
    }

    /// The counters of the bin ending at `now` (exclusive: what happens at `now` belongs to the
    /// next bin, as the run itself covers [0, end)).
    pub fn take_bin(&mut self, now: Time) -> LinkBin {
        self.release(Time(now.0.saturating_sub(1)));
        self.integrate_to(now);
        std::mem::take(&mut self.bin)
    }
}
