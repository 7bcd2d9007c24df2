//! One direction of a link at run time: its queue discipline, its service process and counters.

use super::delay_histogram::DelayHistogram;
use super::packet::Packet;
use crate::queue::Queue;
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
}

/// Sojourn histogram: 1 µs .. 1 hour at 3 significant digits.
impl LinkDir {
    pub fn new(m: &LinkDirModel) -> Self {
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
        }
    }

    /// Accumulates the queue-occupancy integral up to `now`; call before the queue changes.
    pub fn touch(&mut self, now: Time) {
        let dt = (now - self.last_change).0 as u128;
        self.bin.queue_area += dt * self.queue.bytes() as u128;
        self.last_change = now;
    }

    pub fn record_sojourn(&mut self, d: Duration) {
        let us = (d.0 / 1000).max(1);
        self.sojourn_hist.record(us);
        self.sojourn_ns_sum += d.0 as u128;
        self.sojourn_count += 1;
        self.bin.sojourn_ns_sum += d.0 as u128;
        self.bin.sojourn_count += 1;
    }

    pub fn data_bytes_queued(&self) -> u64 {
        self.data_queued
    }

    pub fn take_bin(&mut self, now: Time) -> LinkBin {
        self.touch(now);
        std::mem::take(&mut self.bin)
    }
}
