//! Trendline estimator and overuse detector (WebRTC `trendline_estimator.cc`, the default since
//! the draft's Kalman filter was retired): the least-squares slope of the smoothed accumulated
//! one-way delay variation over the last 20 group deltas, compared with an adaptive threshold
//! (draft-ietf-rmcat-gcc-02 §5.4 for the threshold, with the code's gains).

use crate::units::Time;
use std::collections::VecDeque;

/// WebRTC `kDefaultTrendlineWindowSize`.
pub const WINDOW: usize = 20;
/// WebRTC `kDefaultTrendlineSmoothingCoeff`.
pub const SMOOTHING: f64 = 0.9;
/// WebRTC `kDefaultTrendlineThresholdGain`.
pub const THRESHOLD_GAIN: f64 = 4.0;
/// The trend is scaled by min(deltas seen, 60) (WebRTC `kMinNumDeltas`).
pub const MAX_DELTAS_GAIN: f64 = 60.0;
/// Deltas counted at most (WebRTC `kDeltaCounterMax`).
pub const MAX_DELTAS: u32 = 1000;
/// WebRTC `kOverUsingTimeThreshold`: the trend must stay above the threshold this long, ms.
pub const OVERUSE_TIME_MS: f64 = 10.0;
/// Adaptive threshold gains, per ms (WebRTC `k_up_`, `k_down_`).
pub const K_UP: f64 = 0.0087;
pub const K_DOWN: f64 = 0.039;
/// Threshold bounds and initial value (draft §5.4; WebRTC the same).
pub const THRESHOLD_MIN: f64 = 6.0;
pub const THRESHOLD_MAX: f64 = 600.0;
pub const THRESHOLD_INIT: f64 = 12.5;
/// Outliers this far above the threshold do not move it (WebRTC `kMaxAdaptOffsetMs`).
pub const MAX_ADAPT_OFFSET: f64 = 15.0;
/// The threshold adapts over at most 100 ms per update (WebRTC `kMaxTimeDeltaMs`).
pub const MAX_ADAPT_DT_MS: f64 = 100.0;

/// The detector's verdict on the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    Normal,
    Overusing,
    Underusing,
}

#[derive(Clone, Debug)]
pub struct Trendline {
    num_deltas: u32,
    first_arrival: Option<Time>,
    accumulated_ms: f64,
    smoothed_ms: f64,
    /// (arrival ms since the first, smoothed accumulated delay ms).
    window: VecDeque<(f64, f64)>,
    trend: f64,
    prev_trend: f64,
    modified_trend: f64,
    threshold: f64,
    last_threshold_update: Option<Time>,
    /// ms spent above the threshold; negative when not overusing.
    time_over_ms: f64,
    overuse_count: u32,
    usage: Usage,
}

impl Default for Trendline {
    fn default() -> Self {
        Trendline {
            num_deltas: 0,
            first_arrival: None,
            accumulated_ms: 0.0,
            smoothed_ms: 0.0,
            window: VecDeque::with_capacity(WINDOW + 1),
            trend: 0.0,
            prev_trend: 0.0,
            modified_trend: 0.0,
            threshold: THRESHOLD_INIT,
            last_threshold_update: None,
            time_over_ms: -1.0,
            overuse_count: 0,
            usage: Usage::Normal,
        }
    }
}

impl Trendline {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }
    pub fn trend(&self) -> f64 {
        self.trend
    }
    pub fn modified_trend(&self) -> f64 {
        self.modified_trend
    }
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Feeds one group delta; returns the updated verdict.
    pub fn update(&mut self, recv_delta_ms: f64, send_delta_ms: f64, arrival: Time) -> Usage {
        self.num_deltas = (self.num_deltas + 1).min(MAX_DELTAS);
        let first = *self.first_arrival.get_or_insert(arrival);
        self.accumulated_ms += recv_delta_ms - send_delta_ms;
        self.smoothed_ms = SMOOTHING * self.smoothed_ms + (1.0 - SMOOTHING) * self.accumulated_ms;
        let x = arrival.saturating_since(first).as_millis_f64();
        self.window.push_back((x, self.smoothed_ms));
        if self.window.len() > WINDOW {
            self.window.pop_front();
        }
        if self.window.len() == WINDOW {
            if let Some(slope) = slope(&self.window) {
                self.trend = slope;
            }
        }
        self.detect(send_delta_ms, arrival);
        self.usage
    }

    fn detect(&mut self, send_delta_ms: f64, now: Time) {
        if self.num_deltas < 2 {
            self.usage = Usage::Normal;
            return;
        }
        let modified =
            f64::from(self.num_deltas).min(MAX_DELTAS_GAIN) * self.trend * THRESHOLD_GAIN;
        self.modified_trend = modified;
        if modified > self.threshold {
            if self.time_over_ms < 0.0 {
                // The first sample over the threshold counts half its interval.
                self.time_over_ms = send_delta_ms / 2.0;
            } else {
                self.time_over_ms += send_delta_ms;
            }
            self.overuse_count += 1;
            if self.time_over_ms > OVERUSE_TIME_MS
                && self.overuse_count > 1
                && self.trend >= self.prev_trend
            {
                self.time_over_ms = 0.0;
                self.overuse_count = 0;
                self.usage = Usage::Overusing;
            }
        } else if modified < -self.threshold {
            self.time_over_ms = -1.0;
            self.overuse_count = 0;
            self.usage = Usage::Underusing;
        } else {
            self.time_over_ms = -1.0;
            self.overuse_count = 0;
            self.usage = Usage::Normal;
        }
        self.prev_trend = self.trend;
        self.adapt_threshold(modified, now);
    }

    /// γ += k·(|m| − γ)·Δt, k = K_DOWN below the threshold and K_UP above (draft §5.4): the
    /// threshold follows the trend's magnitude, so a competing loss-based flow that keeps the
    /// queue moving does not starve the delay-based controller.
    fn adapt_threshold(&mut self, modified: f64, now: Time) {
        let last = *self.last_threshold_update.get_or_insert(now);
        let m = modified.abs();
        if m > self.threshold + MAX_ADAPT_OFFSET {
            self.last_threshold_update = Some(now);
            return;
        }
        let k = if m < self.threshold { K_DOWN } else { K_UP };
        let dt = now
            .saturating_since(last)
            .as_millis_f64()
            .min(MAX_ADAPT_DT_MS);
        self.threshold =
            (self.threshold + k * (m - self.threshold) * dt).clamp(THRESHOLD_MIN, THRESHOLD_MAX);
        self.last_threshold_update = Some(now);
    }
}

/// Least-squares slope of y over x; `None` when x does not vary.
fn slope(points: &VecDeque<(f64, f64)>) -> Option<f64> {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (mut num, mut den) = (0.0, 0.0);
    for &(x, y) in points {
        num += (x - mx) * (y - my);
        den += (x - mx) * (x - mx);
    }
    (den > 0.0).then(|| num / den)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn slope_of_a_line() {
        let pts: VecDeque<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 * i as f64 + 1.0)).collect();
        assert!((slope(&pts).unwrap() - 3.0).abs() < 1e-12);
        let flat: VecDeque<(f64, f64)> = (0..5).map(|_| (2.0, 1.0)).collect();
        assert_eq!(slope(&flat), None);
    }

    #[test]
    fn constant_delay_is_normal_and_growing_delay_is_overuse() {
        let mut t = Trendline::new();
        // Groups every 10 ms with no queueing change: the trend is 0, usage normal.
        for i in 1..=40 {
            assert_eq!(t.update(10.0, 10.0, at(10 * i)), Usage::Normal);
        }
        assert!(t.trend().abs() < 1e-9);
        // Each group now arrives 1 ms later than sent (queue growing 0.1 ms per ms).
        let mut first_overuse = None;
        for i in 41..=80 {
            if t.update(11.0, 10.0, at(10 * i)) == Usage::Overusing && first_overuse.is_none() {
                first_overuse = Some(i);
            }
        }
        let i = first_overuse.expect("a steadily growing queue must be detected");
        // The smoothed delay lags (0.9 smoothing) and the 20-point slope must pass
        // threshold / (60 · 4) ≈ 0.05 ms/ms: detection within a few groups, not at once.
        assert!((42..=55).contains(&i), "overuse at group {i}");
        assert!(t.trend() > 0.05 && t.trend() < 0.11, "trend {}", t.trend());
    }

    #[test]
    fn draining_queue_is_underuse() {
        let mut t = Trendline::new();
        for i in 1..=30 {
            t.update(12.0, 10.0, at(10 * i));
        }
        let mut seen = false;
        for i in 31..=80 {
            seen |= t.update(7.0, 10.0, at(10 * i)) == Usage::Underusing;
        }
        assert!(seen);
    }

    #[test]
    fn threshold_moves_towards_the_trend_within_bounds() {
        let mut t = Trendline::new();
        // Below the threshold: γ decays with K_DOWN towards |m| (here 0) but not below 6.
        t.adapt_threshold(0.0, at(0));
        t.adapt_threshold(0.0, at(100));
        assert!((t.threshold() - f64::max(12.5 - 0.039 * 12.5 * 100.0, 6.0)).abs() < 1e-9);
        // Slightly above: γ rises with K_UP; Δt is capped at 100 ms.
        let g = t.threshold();
        t.adapt_threshold(g + 10.0, at(1100));
        assert!((t.threshold() - (g + 0.0087 * 10.0 * 100.0)).abs() < 1e-9);
        // An outlier far above does not move it.
        let g = t.threshold();
        t.adapt_threshold(g + 100.0, at(1200));
        assert_eq!(t.threshold(), g);
    }
}
