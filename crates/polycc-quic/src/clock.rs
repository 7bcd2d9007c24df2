//! s2n-quic's timestamps as polycc times.
//!
//! s2n-quic hands its congestion controller opaque [`Timestamp`]s (microseconds since its
//! clock's epoch, readable only through `unsafe` accessors meant for time sources). polycc
//! controllers take [`Time`] in nanoseconds from an origin of the caller's choosing. The adapter
//! takes the first timestamp it sees as its origin and measures every later one from it with
//! the safe `saturating_duration_since`, so no `unsafe` is needed.

use polycc::units::{Duration, Time};
use s2n_quic::provider::congestion_controller::Timestamp;

/// Where the first timestamp lands on the controller's clock. A controller is built at
/// [`Time::ZERO`] (`CcContext::now`); putting its first event a millisecond later keeps every
/// interval a controller measures from its creation non-empty.
pub const FIRST_EVENT: Time = Time(1_000_000);

/// Maps one connection's s2n-quic timestamps to polycc times and back.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    epoch: Option<Timestamp>,
}

impl Clock {
    /// A clock whose origin is set by the first [`Clock::to_time`].
    pub fn new() -> Self {
        Clock::default()
    }

    /// The polycc time of `ts`. Timestamps before the first one seen (s2n-quic never passes
    /// one) saturate to [`FIRST_EVENT`].
    pub fn to_time(&mut self, ts: Timestamp) -> Time {
        let epoch = *self.epoch.get_or_insert(ts);
        if ts <= epoch {
            // s2n rounds an empty difference up to 1 µs (`Timestamp` is never zero).
            return FIRST_EVENT;
        }
        FIRST_EVENT + from_std(ts.saturating_duration_since(epoch))
    }

    /// The timestamp of polycc time `t`, or `None` before the first event (no origin yet).
    pub fn to_timestamp(&self, t: Time) -> Option<Timestamp> {
        let since = t.saturating_since(FIRST_EVENT);
        self.epoch
            .map(|e| e + core::time::Duration::from_nanos(since.as_nanos()))
    }
}

/// A std duration as a polycc duration, saturating at `u64::MAX` nanoseconds (584 years).
pub fn from_std(d: core::time::Duration) -> Duration {
    Duration(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
