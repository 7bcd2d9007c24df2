//! The min-RTT filter and the PROBE_RTT clock.

use crate::units::{Duration, Time};

/// Linux `bbr_min_rtt_win_sec`: window of the min-RTT filter.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);

/// Min-RTT filter with the PROBE_RTT clock, as google/bbr v3 `bbr_update_min_rtt`: a short
/// filter (`probe_rtt_win`) whose expiry schedules PROBE_RTT, feeding the long `min_rtt` filter
/// (10 s). With both windows equal (BBR v1) this is exactly v1's single 10-s filter whose expiry
/// triggers PROBE_RTT.
#[derive(Clone, Debug)]
pub(crate) struct MinRttFilter {
    /// The estimate (Linux `bbr->min_rtt_us`): the long filter's minimum; `None` before the first
    /// sample.
    pub min_rtt: Option<Duration>,
    min_stamp: Time,
    probe_min: Option<Duration>,
    probe_stamp: Time,
    min_win: Duration,
    probe_win: Duration,
}

impl MinRttFilter {
    /// No estimate yet: `min_win` is the long filter's window (Linux `bbr_min_rtt_win_sec`),
    /// `probe_win` the PROBE_RTT interval (v3's `bbr_probe_rtt_win_ms`; at most `min_win`); both
    /// clocks start at `now`.
    pub fn new(now: Time, min_win: Duration, probe_win: Duration) -> Self {
        MinRttFilter {
            min_rtt: None,
            min_stamp: now,
            probe_min: None,
            probe_stamp: now,
            min_win,
            probe_win: probe_win.min(min_win),
        }
    }

    /// Takes the ACK's RTT sample; returns whether the PROBE_RTT window had expired (judged before
    /// the sample was applied, as Linux does).
    #[inline]
    pub fn update(&mut self, now: Time, sample: Option<Duration>) -> bool {
        let probe_expired = now > self.probe_stamp + self.probe_win;
        if let Some(s) = sample {
            if self.probe_min.is_none_or(|m| s < m) || probe_expired {
                self.probe_min = Some(s);
                self.probe_stamp = now;
            }
        }
        let min_expired = now > self.min_stamp + self.min_win;
        if let Some(p) = self.probe_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_expired {
                self.min_rtt = Some(p);
                self.min_stamp = self.probe_stamp;
            }
        }
        probe_expired
    }

    /// PROBE_RTT done: the next one is a full window away.
    pub fn probe_done(&mut self, now: Time) {
        self.probe_stamp = now;
        if self.probe_win >= self.min_win {
            self.min_stamp = now;
        }
    }

    /// The estimate in ms for telemetry, NaN before the first sample.
    pub fn min_rtt_ms(&self) -> f64 {
        self.min_rtt.map_or(f64::NAN, |d| d.as_millis_f64())
    }

    /// Seeds the estimate (hand-over from another controller).
    pub fn seed(&mut self, now: Time, rtt: Duration) {
        let rtt = rtt.max(Duration(1));
        self.min_rtt = Some(rtt);
        self.probe_min = Some(rtt);
        self.min_stamp = now;
        self.probe_stamp = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_rtt_filter_expires_and_schedules_probe_rtt() {
        let ms = Duration::from_millis;
        let mut f = MinRttFilter::new(Time::ZERO, MIN_RTT_WINDOW, Duration::from_secs(5));
        assert!(!f.update(Time::ZERO, Some(ms(40))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        // Larger samples within the windows leave the minimum alone.
        assert!(!f.update(Time::ZERO + Duration::from_secs(4), Some(ms(60))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        // 5 s on: the PROBE_RTT window expired; the probe minimum takes the new sample, but the
        // 10-s minimum is kept.
        assert!(f.update(Time::ZERO + ms(5001), Some(ms(60))));
        assert_eq!(f.min_rtt, Some(ms(40)));
        f.probe_done(Time::ZERO + ms(5300));
        assert!(!f.update(Time::ZERO + ms(9000), Some(ms(60))));
        // 10 s on the 10-s filter expires: the probe minimum (60 ms) replaces it.
        assert!(!f.update(Time::ZERO + ms(10_001), Some(ms(61))));
        assert_eq!(f.min_rtt, Some(ms(60)));
    }
}
