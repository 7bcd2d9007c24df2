//! RTT estimation as RFC 9002 §5: latest, minimum, smoothed RTT and its variation.

use crate::units::{Duration, Time};

/// RFC 9002 §6.2.2: the initial RTT before any sample.
pub const INITIAL_RTT: Duration = Duration::from_millis(333);
/// RFC 9002 §6.1.2: timer granularity.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// A copy of the estimator's state, handed to CCAs with every ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttSnapshot {
    /// The most recent sample (`latest_rtt`).
    pub latest: Duration,
    /// Exponentially weighted mean of the samples (`smoothed_rtt`).
    pub smoothed: Duration,
    /// Mean deviation of the samples (`rttvar`).
    pub var: Duration,
    /// Smallest sample since the first or since [`RttEstimator::reset_min`] (`min_rtt`),
    /// without ack-delay adjustment.
    pub min: Duration,
    /// False until the first sample: the values are then RFC 9002's initial defaults.
    pub has_sample: bool,
}

impl Default for RttSnapshot {
    fn default() -> Self {
        RttEstimator::new().snapshot()
    }
}

/// `sample` less the receiver's reported `ack_delay` when that keeps it at or above `min_rtt`,
/// else `sample` as measured (RFC 9002 §5.3: a receiver's hold is no path delay, but a delay
/// that would take the sample below the smallest ever seen is not trusted).
pub fn without_ack_delay(sample: Duration, min_rtt: Duration, ack_delay: Duration) -> Duration {
    if sample >= min_rtt + ack_delay {
        sample - ack_delay
    } else {
        sample
    }
}

/// One path's RTT estimator (RFC 9002 §5), fed one sample per ACK that newly acknowledges the
/// largest packet number.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    latest: Duration,
    smoothed: Duration,
    var: Duration,
    min: Duration,
    has_sample: bool,
    min_time: Time,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    /// An estimator before any sample: every value is [`INITIAL_RTT`], `var` half of it
    /// (RFC 9002 §5.3).
    pub fn new() -> Self {
        RttEstimator {
            latest: INITIAL_RTT,
            smoothed: INITIAL_RTT,
            var: Duration(INITIAL_RTT.0 / 2),
            min: INITIAL_RTT,
            has_sample: false,
            min_time: Time::ZERO,
        }
    }

    /// Absorbs one RTT sample taken at `now`. `ack_delay` is the receiver's reported delay, already
    /// capped at max_ack_delay by the caller; it is subtracted only when that keeps the sample
    /// above min_rtt (RFC 9002 §5.3).
    pub fn update(&mut self, now: Time, latest: Duration, ack_delay: Duration) {
        let latest = latest.max(Duration(1));
        self.latest = latest;
        if !self.has_sample {
            self.has_sample = true;
            self.min = latest;
            self.min_time = now;
            self.smoothed = latest;
            self.var = Duration(latest.0 / 2);
            return;
        }
        if latest < self.min {
            self.min = latest;
            self.min_time = now;
        }
        let adjusted = without_ack_delay(latest, self.min, ack_delay);
        let dev = self.smoothed.0.abs_diff(adjusted.0);
        // rttvar = 3/4 rttvar + 1/4 |srtt - adjusted|; srtt = 7/8 srtt + 1/8 adjusted.
        self.var = Duration((3 * self.var.0 + dev) / 4);
        self.smoothed = Duration((7 * self.smoothed.0 + adjusted.0) / 8);
    }

    /// RFC 9002 §5.2 lets min_rtt be re-established after persistent congestion.
    pub fn reset_min(&mut self) {
        self.min = self.latest;
    }

    /// Probe timeout without backoff (RFC 9002 §6.2.1).
    pub fn pto(&self, max_ack_delay: Duration) -> Duration {
        self.smoothed + (self.var * 4).max(GRANULARITY) + max_ack_delay
    }

    /// The most recent sample (`latest_rtt`).
    pub fn latest(&self) -> Duration {
        self.latest
    }
    /// The smoothed RTT (`smoothed_rtt`).
    pub fn smoothed(&self) -> Duration {
        self.smoothed
    }
    /// The RTT variation (`rttvar`).
    pub fn var(&self) -> Duration {
        self.var
    }
    /// The minimum RTT (`min_rtt`).
    pub fn min(&self) -> Duration {
        self.min
    }
    /// False until the first sample; the values are then the initial defaults.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// The current values, as handed to controllers in [`crate::AckEvent::rtt`].
    pub fn snapshot(&self) -> RttSnapshot {
        RttSnapshot {
            latest: self.latest,
            smoothed: self.smoothed,
            var: self.var,
            min: self.min,
            has_sample: self.has_sample,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_then_smoothing() {
        let mut e = RttEstimator::new();
        assert_eq!(e.smoothed(), INITIAL_RTT);
        e.update(Time(0), Duration::from_millis(100), Duration::ZERO);
        assert_eq!(e.smoothed(), Duration::from_millis(100));
        assert_eq!(e.var(), Duration::from_millis(50));
        e.update(Time(1), Duration::from_millis(180), Duration::ZERO);
        // srtt = 7/8*100 + 1/8*180 = 110 ms; rttvar = 3/4*50 + 1/4*80 = 57.5 ms.
        assert_eq!(e.smoothed(), Duration::from_millis(110));
        assert_eq!(e.var(), Duration::from_micros(57_500));
        assert_eq!(e.min(), Duration::from_millis(100));
    }

    #[test]
    fn ack_delay_is_subtracted_only_above_min_rtt() {
        let mut e = RttEstimator::new();
        e.update(Time(0), Duration::from_millis(100), Duration::ZERO);
        // 120 - 25 = 95 < min 100: delay not subtracted, srtt moves towards 120.
        e.update(
            Time(1),
            Duration::from_millis(120),
            Duration::from_millis(25),
        );
        assert_eq!(e.smoothed(), Duration::from_micros(102_500));
        // 140 - 25 = 115 >= 100: subtracted.
        e.update(
            Time(2),
            Duration::from_millis(140),
            Duration::from_millis(25),
        );
        assert_eq!(e.smoothed().0, (7 * 102_500_000 + 115_000_000) / 8);
    }
}
