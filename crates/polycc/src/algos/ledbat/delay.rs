//! RFC 6817 §2.4.2 delay estimation, shared by LEDBAT and LEDBAT++: the base delay (the minimum
//! of each of the last [`BASE_HISTORY`] minutes) and the current delay (the minimum of the last
//! [`CURRENT_FILTER`] samples); the queueing delay is their difference.

use crate::cc::Telemetry;
use crate::units::{Duration, Time};

/// RFC 6817 §2.5: BASE_HISTORY SHOULD be 10 (one-minute minima).
pub const BASE_HISTORY: usize = 10;
/// RFC 6817 §2.4.2: base-delay buckets roll over every minute.
pub const BASE_BUCKET: Duration = Duration::from_secs(60);
/// RFC 6817 §2.4.2 CURRENT_FILTER: the RFC leaves the sample count to the implementation; ns-3
/// `TcpLedbat` NoiseFilterLen uses 4, as here.
pub const CURRENT_FILTER: usize = 4;

/// RFC 6817 §2.4.2 base-delay history: the minimum delay of each of the last
/// [`BASE_HISTORY`] minutes. Delays are signed nanoseconds because a one-way delay between
/// unsynchronised clocks can be negative.
#[derive(Clone, Debug)]
pub(crate) struct BaseHistory {
    minima: [i64; BASE_HISTORY],
    /// Index of the current (newest) bucket.
    head: usize,
    len: usize,
    last_rollover: Time,
}

impl Default for BaseHistory {
    fn default() -> Self {
        BaseHistory {
            minima: [i64::MAX; BASE_HISTORY],
            head: 0,
            len: 0,
            last_rollover: Time::ZERO,
        }
    }
}

impl BaseHistory {
    pub(crate) fn update(&mut self, now: Time, delay: i64) {
        if self.len == 0 {
            self.minima[0] = delay;
            self.head = 0;
            self.len = 1;
            self.last_rollover = now;
        } else if now.saturating_since(self.last_rollover) >= BASE_BUCKET {
            // A new minute: start a new bucket, dropping the oldest when the history is full.
            self.head = (self.head + 1) % BASE_HISTORY;
            self.minima[self.head] = delay;
            self.len = (self.len + 1).min(BASE_HISTORY);
            self.last_rollover = now;
        } else {
            self.minima[self.head] = self.minima[self.head].min(delay);
        }
    }

    /// The base delay: the minimum over the history.
    pub(crate) fn get(&self) -> Option<i64> {
        (self.len > 0).then(|| {
            (0..self.len)
                .map(|i| self.minima[(self.head + BASE_HISTORY - i) % BASE_HISTORY])
                .min()
                .unwrap_or(i64::MAX)
        })
    }

    /// Lowers the current bucket to `delay` if that is smaller (a hand-over's min RTT).
    pub(crate) fn seed(&mut self, now: Time, delay: i64) {
        self.update(now, delay);
    }
}

/// RFC 6817 §2.4.2 current delays: the last [`CURRENT_FILTER`] samples, filtered by MIN.
#[derive(Clone, Debug, Default)]
pub(crate) struct CurrentFilter {
    samples: [i64; CURRENT_FILTER],
    next: usize,
    len: usize,
}

impl CurrentFilter {
    pub(crate) fn update(&mut self, delay: i64) {
        self.samples[self.next] = delay;
        self.next = (self.next + 1) % CURRENT_FILTER;
        self.len = (self.len + 1).min(CURRENT_FILTER);
    }

    pub(crate) fn get(&self) -> Option<i64> {
        self.samples[..self.len].iter().copied().min()
    }
}

/// Base history and current filter together: the queueing-delay estimate of LEDBAT and
/// LEDBAT++.
#[derive(Clone, Debug, Default)]
pub(crate) struct DelayEstimator {
    pub(crate) base: BaseHistory,
    pub(crate) current: CurrentFilter,
}

impl DelayEstimator {
    pub(crate) fn update(&mut self, now: Time, delay: i64) {
        self.base.update(now, delay);
        self.current.update(delay);
    }

    /// An RTT sample as the delay (LEDBAT++'s signal, LEDBAT's without receiver feedback).
    pub(crate) fn update_rtt(&mut self, now: Time, rtt: Duration) {
        self.update(now, signed_ns(rtt));
    }

    /// Lowers the base to a hand-over's min RTT (the RTT signal's base).
    pub(crate) fn seed_base_rtt(&mut self, now: Time, min_rtt: Duration) {
        self.base.seed(now, signed_ns(min_rtt));
    }

    /// FILTER(current_delays) − MIN(base_delays), never negative.
    pub(crate) fn queuing_delay(&self) -> Option<Duration> {
        let (cur, base) = (self.current.get()?, self.base.get()?);
        Some(Duration(cur.saturating_sub(base).max(0) as u64))
    }

    /// The base, current and queueing delays, ms (NaN before a sample).
    pub(crate) fn push_telemetry(&self, t: &mut Telemetry) {
        let ms = |v: Option<i64>| v.map_or(f64::NAN, |v| v as f64 / 1e6);
        t.push("base_delay_ms", ms(self.base.get()));
        t.push("current_delay_ms", ms(self.current.get()));
        t.push(
            "queuing_delay_ms",
            self.queuing_delay().map_or(f64::NAN, |d| d.as_millis_f64()),
        );
    }
}

/// Signed nanoseconds of a duration (saturating).
fn signed_ns(d: Duration) -> i64 {
    d.0.min(i64::MAX as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_history_keeps_ten_minute_minima() {
        let mut b = BaseHistory::default();
        let t = |s: u64| Time::ZERO + Duration::from_secs(s);
        b.update(t(0), 50);
        b.update(t(30), 40); // same minute
        assert_eq!(b.get(), Some(40));
        b.update(t(60), 70); // a new bucket
        assert_eq!(b.get(), Some(40));
        // Nine more minutes of 70: the bucket holding 40 is pushed out of the 10-minute history.
        for m in 2..=10 {
            b.update(t(60 * m), 70);
        }
        assert_eq!(b.get(), Some(70));
    }

    #[test]
    fn current_filter_is_the_minimum_of_the_last_four() {
        let mut f = CurrentFilter::default();
        assert_eq!(f.get(), None);
        for d in [10, 5, 20, 30] {
            f.update(d);
        }
        assert_eq!(f.get(), Some(5));
        f.update(40); // 10 leaves
        assert_eq!(f.get(), Some(5));
        f.update(50); // 5 leaves
        assert_eq!(f.get(), Some(20));
    }
}
