//! PCC Proteus (Meng et al., SIGCOMM'20) as in PCC-Uspace master (dossier §7.3): Vivace's rate
//! control (`vivace.rs`) with the scavenger and hybrid utilities (`utility.rs`), the scavenger's
//! two-pair decision rule, and the latency noise tolerance of `pcc_utility_manager.cpp` built
//! here:
//!
//! 1. Regression-error gate: an MI's RTT gradient and RTT deviation count only when the RTT
//!    regression's RMS error (over the mean RTT) is below |gradient|; otherwise both are
//!    tolerable noise (zeroed).
//! 2. Trending gradient: the mean RTTs of the last 6 MIs are regressed on time; the trend is
//!    compared with an EWMA (α 0.1) of earlier trends and of their deviation. A trend outside
//!    avg ± 2·dev makes the RTT deviation intolerable, and the inflation too when the trend is
//!    positive. When |trend| falls below 1/100 of the smallest trend magnitude since the last
//!    reset, the baseline restarts from it (our reading of master's min-trend reset, `kBeta`).
//! 3. Trending deviation: an EWMA (α 0.1) baseline of the MIs' RTT deviations and of its
//!    spread; a deviation above avg + 4·spread and above 1000 µs is intolerable. When an EWMA of
//!    the share of flagged MIs exceeds 0.95, the baseline restarts (the path changed).
//! 4. Majority rule: 3 pairs for a primary, 2 for a scavenger (see `vivace.rs`).
//! 5. The ACK-burst filter and MI extension of `monitor.rs`.
//!
//! The trend baselines flag nothing until they have seen [`TREND_HISTORY`] MIs since their last
//! (re)start: with a zero spread every change would look abnormal.

use crate::algos::pcc::monitor::MiStats;
use std::collections::VecDeque;

/// dossier §7.3 `kRttHistoryLen`.
pub const TREND_HISTORY: usize = 6;
/// dossier §7.3 `kAlpha`: EWMA gain of the trend and deviation baselines.
pub const TREND_ALPHA: f64 = 0.1;
/// dossier §7.3 `kInflationToleranceGain{High,Low}`.
pub const TREND_TOLERANCE_GAIN: f64 = 2.0;
/// dossier §7.3 `kBeta`: the min-trend baseline resets below min_trend / this.
pub const MIN_TREND_RESET_DIVISOR: f64 = 100.0;
/// dossier §7.3: an RTT deviation this many spreads above its baseline is abnormal...
pub const DEV_TOLERANCE_GAIN: f64 = 4.0;
/// ... when it is also above this floor, µs (dossier §7.3).
pub const DEV_FLOOR_US: f64 = 1000.0;
/// dossier §7.3 `kTrendingResetIntervalRatio`.
pub const DEV_RESET_RATIO: f64 = 0.95;

/// An EWMA mean and mean absolute deviation with a sample count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Baseline {
    avg: f64,
    dev: f64,
    n: usize,
}

impl Baseline {
    fn update(&mut self, x: f64) {
        if self.n == 0 {
            self.avg = x;
            self.dev = 0.0;
        } else {
            self.dev = (1.0 - TREND_ALPHA) * self.dev + TREND_ALPHA * (x - self.avg).abs();
            self.avg = (1.0 - TREND_ALPHA) * self.avg + TREND_ALPHA * x;
        }
        self.n += 1;
    }
    fn warm(&self) -> bool {
        self.n >= TREND_HISTORY
    }
    fn reset(&mut self, x: f64) {
        *self = Baseline::default();
        self.update(x);
    }
}

/// What the noise filter concluded about one MI.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NoiseVerdict {
    pub gate_tolerable: bool,
    pub trend: Option<f64>,
    pub trend_abnormal: bool,
    pub dev_abnormal: bool,
    pub inflation_tolerable: bool,
    pub deviation_tolerable: bool,
}

/// Proteus' latency noise tolerance; see the module documentation.
#[derive(Clone, Debug, Default)]
pub(crate) struct NoiseTolerance {
    /// (MI mid-time s, mean RTT µs) of the last MIs.
    history: VecDeque<(f64, f64)>,
    trend: Baseline,
    min_trend: f64,
    dev: Baseline,
    flagged_ratio: f64,
    last: NoiseVerdict,
}

impl NoiseTolerance {
    pub fn new() -> Self {
        NoiseTolerance {
            min_trend: f64::INFINITY,
            ..NoiseTolerance::default()
        }
    }

    pub fn last_verdict(&self) -> NoiseVerdict {
        self.last
    }

    /// Judges an MI (every completed MI feeds the baselines) and returns its RTT gradient and
    /// RTT deviation (µs) with tolerable values zeroed.
    pub fn filter(&mut self, s: &MiStats) -> (f64, f64) {
        let mut v = NoiseVerdict {
            gate_tolerable: s.rtt_gradient_error >= s.rtt_gradient.abs(),
            ..NoiseVerdict::default()
        };
        v.inflation_tolerable = v.gate_tolerable;
        v.deviation_tolerable = v.gate_tolerable;

        if s.mean_rtt_us.is_finite() {
            let mid = (s.start.0 as f64 + s.duration.0 as f64 / 2.0) / 1e9;
            self.history.push_back((mid, s.mean_rtt_us));
            while self.history.len() > TREND_HISTORY {
                self.history.pop_front();
            }
        }
        if self.history.len() == TREND_HISTORY {
            let trend = trend_slope(&self.history);
            v.trend = Some(trend);
            if self.trend.warm() {
                let band = TREND_TOLERANCE_GAIN * self.trend.dev;
                v.trend_abnormal = (trend - self.trend.avg).abs() > band;
            }
            if trend.abs() < self.min_trend / MIN_TREND_RESET_DIVISOR {
                self.trend.reset(trend);
                self.min_trend = trend.abs();
            } else {
                self.trend.update(trend);
                self.min_trend = self.min_trend.min(trend.abs());
            }
            if v.trend_abnormal {
                if trend > 0.0 {
                    v.inflation_tolerable = false;
                }
                v.deviation_tolerable = false;
            }
        }

        if s.reliable_samples >= 2 {
            let d = s.rtt_dev_us;
            if self.dev.warm() {
                v.dev_abnormal =
                    d > self.dev.avg + DEV_TOLERANCE_GAIN * self.dev.dev && d > DEV_FLOOR_US;
            }
            self.flagged_ratio = (1.0 - TREND_ALPHA) * self.flagged_ratio
                + TREND_ALPHA * if v.dev_abnormal { 1.0 } else { 0.0 };
            if self.flagged_ratio > DEV_RESET_RATIO {
                self.dev.reset(d);
                self.flagged_ratio = 0.0;
            } else {
                self.dev.update(d);
            }
            if v.dev_abnormal {
                v.deviation_tolerable = false;
            }
        }
        self.last = v;
        (
            if v.inflation_tolerable {
                0.0
            } else {
                s.rtt_gradient
            },
            if v.deviation_tolerable {
                0.0
            } else {
                s.rtt_dev_us
            },
        )
    }
}

/// Least-squares slope of mean RTT (µs) over time (s), made dimensionless (÷ 10^6).
fn trend_slope(h: &VecDeque<(f64, f64)>) -> f64 {
    let n = h.len() as f64;
    let mx = h.iter().map(|p| p.0).sum::<f64>() / n;
    let my = h.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = h.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = h.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx > 0.0 {
        sxy / sxx / 1e6
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Duration, Time};

    /// An MI starting at `i`·10 ms with the given statistics.
    fn mi(i: u64, mean_rtt_us: f64, g: f64, err: f64, dev: f64) -> MiStats {
        MiStats {
            start: Time(i * 10_000_000),
            duration: Duration::from_millis(10),
            mean_rtt_us,
            rtt_gradient: g,
            rtt_gradient_error: err,
            rtt_dev_us: dev,
            reliable_samples: 10,
            samples: 10,
            ..MiStats::default()
        }
    }

    #[test]
    fn regression_error_gate() {
        let mut n = NoiseTolerance::new();
        // |g| = 0.01 above the error 0.005: both penalties stand.
        assert_eq!(
            n.filter(&mi(0, 30_000.0, 0.01, 0.005, 300.0)),
            (0.01, 300.0)
        );
        // |g| = 0.004 within the error: both are noise.
        assert_eq!(n.filter(&mi(1, 30_000.0, -0.004, 0.005, 300.0)), (0.0, 0.0));
        assert!(n.last_verdict().gate_tolerable);
    }

    #[test]
    fn trending_gradient_flags_a_rising_trend_despite_the_gate() {
        let mut n = NoiseTolerance::new();
        // Flat mean RTTs with tiny wiggles, every MI within the gate. The baseline spread starts
        // at 0 and needs a few dozen MIs to reach the wiggles' size; after that nothing is
        // flagged.
        for i in 0..40 {
            let wiggle = if i % 2 == 0 { 5.0 } else { -5.0 };
            let out = n.filter(&mi(i, 30_000.0 + wiggle, 0.0, 0.001, 50.0));
            if i >= 30 {
                assert_eq!(out, (0.0, 0.0), "MI {i}");
                assert!(!n.last_verdict().trend_abnormal, "MI {i}");
            }
        }
        // Now the mean RTT climbs 1 ms per 10 ms MI: the 6-MI trend (0.1) is far outside
        // avg ± 2·dev, so the gradient and deviation count even though the gate says noise.
        let mut flagged = false;
        for i in 40..46 {
            let rtt = 30_000.0 + (i - 39) as f64 * 1000.0;
            let (g, dev) = n.filter(&mi(i, rtt, 0.002, 0.01, 400.0));
            let v = n.last_verdict();
            if v.trend_abnormal {
                flagged = true;
                assert!(v.trend.is_some_and(|t| t > 0.0));
                assert_eq!((g, dev), (0.002, 400.0));
            }
        }
        assert!(flagged);
    }

    #[test]
    fn trending_deviation_flags_a_jump_above_a_millisecond() {
        let mut n = NoiseTolerance::new();
        for i in 0..10 {
            let d = if i % 2 == 0 { 90.0 } else { 110.0 };
            n.filter(&mi(i, 30_000.0, 0.0, 0.001, d));
        }
        // 800 µs is far above avg + 4·spread (≈ 100 + 4·10) but below 1000 µs: tolerated.
        n.filter(&mi(10, 30_000.0, 0.0, 0.001, 800.0));
        assert!(!n.last_verdict().dev_abnormal);
        // 3000 µs is above both: the deviation penalty stands although the gate says noise.
        let (g, dev) = n.filter(&mi(11, 30_000.0, 0.0, 0.001, 3000.0));
        assert!(n.last_verdict().dev_abnormal);
        assert_eq!((g, dev), (0.0, 3000.0));
    }

    #[test]
    fn a_persistent_deviation_change_resets_the_baseline() {
        let mut n = NoiseTolerance::new();
        for i in 0..10 {
            n.filter(&mi(i, 30_000.0, 0.0, 0.001, 100.0 + (i % 2) as f64 * 10.0));
        }
        // A new path with 5 ms deviation: flagged at first; the flagged share's EWMA passes
        // 0.95 only after many MIs (1 − 0.9^n > 0.95 needs n ≥ 29), then the baseline restarts.
        let mut first_clear = None;
        for i in 10..60 {
            n.filter(&mi(i, 30_000.0, 0.0, 0.001, 5000.0));
            if first_clear.is_none() && !n.last_verdict().dev_abnormal {
                first_clear = Some(i);
            }
        }
        let first = first_clear.expect("baseline adapts");
        assert!(first > 10, "first clear at {first}");
    }
}
