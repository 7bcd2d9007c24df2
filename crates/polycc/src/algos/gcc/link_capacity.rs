//! The AIMD controller's estimate of the link capacity (WebRTC `link_capacity_estimator.cc`): an
//! EWMA of the acknowledged rate measured at overuse, with a normalised variance that bounds the
//! range in which the rate is "near capacity" (additive increase) rather than far below it
//! (multiplicative increase).

/// EWMA gain for samples taken at overuse (WebRTC `OnOveruseDetected`: 0.05).
pub const ALPHA_OVERUSE: f64 = 0.05;
/// Normalised-variance bounds (WebRTC: 0.4 .. 2.5), also the initial value.
pub const VAR_MIN: f64 = 0.4;
pub const VAR_MAX: f64 = 2.5;
/// The bounds are estimate ± 3 standard deviations.
pub const BOUND_SIGMAS: f64 = 3.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkCapacity {
    estimate_kbps: Option<f64>,
    var: f64,
}

impl Default for LinkCapacity {
    fn default() -> Self {
        LinkCapacity {
            estimate_kbps: None,
            var: VAR_MIN,
        }
    }
}

impl LinkCapacity {
    pub fn estimate_kbps(&self) -> Option<f64> {
        self.estimate_kbps
    }

    fn deviation_kbps(&self, est: f64) -> f64 {
        (self.var * est).sqrt()
    }

    pub fn upper_kbps(&self) -> Option<f64> {
        self.estimate_kbps
            .map(|e| e + BOUND_SIGMAS * self.deviation_kbps(e))
    }

    pub fn lower_kbps(&self) -> Option<f64> {
        self.estimate_kbps
            .map(|e| (e - BOUND_SIGMAS * self.deviation_kbps(e)).max(0.0))
    }

    pub fn update(&mut self, sample_kbps: f64, alpha: f64) {
        let est = match self.estimate_kbps {
            None => sample_kbps,
            Some(e) => (1.0 - alpha) * e + alpha * sample_kbps,
        };
        let norm = est.max(1.0);
        let err = est - sample_kbps;
        self.var = ((1.0 - alpha) * self.var + alpha * err * err / norm).clamp(VAR_MIN, VAR_MAX);
        self.estimate_kbps = Some(est);
    }

    pub fn reset(&mut self) {
        self.estimate_kbps = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ewma_and_bounds() {
        let mut l = LinkCapacity::default();
        assert_eq!(l.upper_kbps(), None);
        l.update(1000.0, ALPHA_OVERUSE);
        assert_eq!(l.estimate_kbps(), Some(1000.0));
        // var stays at its floor 0.4: bounds 1000 ± 3·sqrt(400) = 1000 ± 60.
        assert!((l.upper_kbps().unwrap() - 1060.0).abs() < 1e-9);
        assert!((l.lower_kbps().unwrap() - 940.0).abs() < 1e-9);
        l.update(2000.0, ALPHA_OVERUSE);
        assert!((l.estimate_kbps().unwrap() - 1050.0).abs() < 1e-9);
        // err² / est = 950² / 1050 ≈ 859.5, so var = 0.95·0.4 + 0.05·859.5 → clamped to 2.5.
        assert!((l.upper_kbps().unwrap() - (1050.0 + 3.0 * (2.5f64 * 1050.0).sqrt())).abs() < 1e-9);
        l.reset();
        assert_eq!(l.estimate_kbps(), None);
    }
}
