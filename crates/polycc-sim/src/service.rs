//! The service process of a link direction: when a packet that starts transmission at `now`
//! finishes, for constant, scheduled (steps and ramps) and trace-driven capacity.

use crate::scenario::spec::Capacity;
use polycc::units::{Rate, Time};

pub struct Server {
    capacity: Capacity,
}

impl Server {
    pub fn new(capacity: Capacity) -> Self {
        Server { capacity }
    }

    /// Finish time of a packet of `bytes` whose transmission starts at `now` (the link is idle
    /// from `now`). `Time::MAX` when the capacity never allows it.
    pub fn serve(&mut self, now: Time, bytes: u64) -> Time {
        match &self.capacity {
            Capacity::Constant(r) => now + r.time_to_send(bytes),
            // PLACEHOLDER until schedules and traces are written: the first rate.
            Capacity::Schedule(p) => now + p[0].1.time_to_send(bytes),
            Capacity::Trace { .. } => now + Rate::from_mbps(12).time_to_send(bytes),
        }
    }

    /// Bytes the capacity offers in [from, to).
    pub fn offered_bytes(&self, from: Time, to: Time) -> u64 {
        match &self.capacity {
            Capacity::Constant(r) => r.bytes_in(to - from),
            Capacity::Schedule(p) => p[0].1.bytes_in(to - from),
            Capacity::Trace { .. } => Rate::from_mbps(12).bytes_in(to - from),
        }
    }
}
