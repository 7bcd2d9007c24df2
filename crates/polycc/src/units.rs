//! Unit types shared by every CCA and by the simulator.
//!
//! Time is integer nanoseconds so that simulations are exactly reproducible; rates are integer
//! bits per second. Byte counts are plain `u64` under the [`Bytes`] alias.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// A byte count.
pub type Bytes = u64;

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in time, in nanoseconds since an arbitrary origin chosen by the caller.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Time(pub u64);

/// A non-negative span of time in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Duration(pub u64);

/// A data rate in bits per second.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Rate(pub u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);
    /// The latest representable instant; callers use it for "never".
    pub const MAX: Time = Time(u64::MAX);

    /// The instant `s` seconds after the origin, rounded to the nearest nanosecond.
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * NANOS_PER_SEC as f64).round() as u64)
    }
    /// Nanoseconds since the origin.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the origin (lossy above 2^53 ns, about 104 days).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// The empty span.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span; stands for "infinite" (e.g. the time to send at rate zero).
    pub const MAX: Duration = Duration(u64::MAX);

    /// `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Duration {
        Duration(n)
    }
    /// `us` microseconds.
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * NANOS_PER_SEC)
    }
    /// `s` seconds, rounded to the nearest nanosecond; a negative `s` gives zero.
    pub fn from_secs_f64(s: f64) -> Duration {
        Duration((s.max(0.0) * NANOS_PER_SEC as f64).round() as u64)
    }
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// The span in milliseconds, with the sub-millisecond part kept as a fraction.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// The span scaled by `k`, rounded to the nearest nanosecond; a negative `k` gives zero.
    pub fn mul_f64(self, k: f64) -> Duration {
        Duration((self.0 as f64 * k.max(0.0)).round() as u64)
    }
    /// Whether the span is empty.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Rate {
    /// No rate: nothing sent, or no estimate yet.
    pub const ZERO: Rate = Rate(0);

    /// `bps` bits per second.
    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    /// `mbps` megabits (10^6 bits) per second.
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps * 1_000_000)
    }
    /// `bps` bits per second, rounded to the nearest integer; a negative value gives zero and a
    /// non-finite one (infinity, NaN) saturates to `u64::MAX`.
    pub fn from_bps_f64(bps: f64) -> Rate {
        // Round half up by truncation (the value is non-negative): no libm call per packet.
        Rate(if bps.is_finite() {
            (bps.max(0.0) + 0.5) as u64
        } else {
            u64::MAX
        })
    }
    /// The rate in bits per second.
    pub const fn as_bps(self) -> u64 {
        self.0
    }
    /// The rate in megabits (10^6 bits) per second.
    pub fn as_mbps_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// The rate in bytes per second.
    pub fn as_bytes_per_sec_f64(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// The rate at which `bytes` were delivered over `interval`; zero for an empty interval.
    pub fn from_bytes_over(bytes: Bytes, interval: Duration) -> Rate {
        if interval.0 == 0 {
            return Rate::ZERO;
        }
        // 64-bit arithmetic when it cannot overflow (every packet-sized quantity): these run on
        // every packet, and a 128-bit division costs several times more.
        match bytes.checked_mul(8 * NANOS_PER_SEC) {
            Some(num) => Rate(num / interval.0),
            None => Rate(
                ((bytes as u128 * 8 * NANOS_PER_SEC as u128) / interval.0 as u128)
                    .min(u64::MAX as u128) as u64,
            ),
        }
    }
    /// Bytes sent at this rate over `d` (rounded down).
    pub fn bytes_in(self, d: Duration) -> Bytes {
        match self.0.checked_mul(d.0) {
            Some(num) => num / (8 * NANOS_PER_SEC),
            None => ((self.0 as u128 * d.0 as u128) / (8 * NANOS_PER_SEC as u128))
                .min(u64::MAX as u128) as u64,
        }
    }
    /// Time to serialise `bytes` at this rate (rounded up); `Duration::MAX` at rate zero.
    pub fn time_to_send(self, bytes: Bytes) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        match bytes.checked_mul(8 * NANOS_PER_SEC) {
            Some(num) => Duration(num.div_ceil(self.0)),
            None => {
                let num = bytes as u128 * 8 * NANOS_PER_SEC as u128;
                Duration(num.div_ceil(self.0 as u128).min(u64::MAX as u128) as u64)
            }
        }
    }
    /// The rate scaled by `k` (a pacing or probing gain), rounded as [`Rate::from_bps_f64`] does.
    pub fn mul_f64(self, k: f64) -> Rate {
        Rate::from_bps_f64(self.0 as f64 * k)
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Sub<Time> for Time {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero rather than wrapping.
    fn sub(self, rhs: Time) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.saturating_sub(d.0))
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_sub(d.0);
    }
}

impl std::ops::Mul<u64> for Duration {
    /// Saturating multiplication by an integer factor.
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns % NANOS_PER_SEC == 0 {
            write!(f, "{}s", ns / NANOS_PER_SEC)
        } else if ns % 1_000_000 == 0 {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns % 1_000 == 0 {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1_000_000_000 && b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b >= 1_000_000 && b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else if b >= 1_000 && b % 1_000 == 0 {
            write!(f, "{}Kbps", b / 1_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_time_round_trip() {
        let r = Rate::from_mbps(100);
        // 1500 B at 100 Mbit/s is 120 us.
        assert_eq!(r.time_to_send(1500), Duration::from_micros(120));
        assert_eq!(r.bytes_in(Duration::from_millis(30)), 375_000);
        assert_eq!(Rate::from_bytes_over(375_000, Duration::from_millis(30)), r);
        assert_eq!(Rate::ZERO.time_to_send(1), Duration::MAX);
        assert_eq!(Time(5) - Time(9), Duration::ZERO);
        // Past 64 bits the 128-bit path gives the exact answer.
        let big = Rate::from_bytes_over(u64::MAX / 4, Duration::from_secs(1_000_000));
        assert_eq!(big.0, ((u64::MAX / 4) as u128 * 8 / 1_000_000) as u64);
        assert_eq!(
            Rate::from_mbps(100_000).bytes_in(Duration::from_secs(1000)),
            12_500_000_000_000
        );
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        assert_eq!(Duration::from_millis(30).to_string(), "30ms");
        assert_eq!(Duration::from_secs(60).to_string(), "60s");
        assert_eq!(Duration::from_micros(1500).to_string(), "1500us");
        assert_eq!(Rate::from_mbps(12).to_string(), "12Mbps");
        assert_eq!(Rate(1_500_000).to_string(), "1500Kbps");
    }
}
