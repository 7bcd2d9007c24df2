//! Janus' two-stage switching engine (Zhou et al., IEEE TMC 2018, §4.3, Fig. 5): the aggressive
//! CCA while the target rate is unmet, the conservative one once it is met.

/// §4.3 (1), §7.2: protection margin gamma = 0.2. A conservative flow turns aggressive only when
/// P_avg < (1 − gamma)·R, so throughput noise around R does not make it oscillate. Algorithm 1
/// reuses it as the target-rate step.
pub const GAMMA: f64 = 0.2;

/// Which of Janus' two CCAs runs the flow (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The conservative CCA (default Vegas) runs.
    Conservative,
    /// The aggressive CCA (default CUBIC) runs.
    Aggressive,
}

impl Stage {
    /// The stage's name in telemetry.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Conservative => "conservative",
            Stage::Aggressive => "aggressive",
        }
    }
}

/// The stage transition rule.
#[derive(Clone, Copy, Debug)]
pub struct Switching {
    /// The protection margin gamma ([`GAMMA`]).
    pub gamma: f64,
    /// Whether the flow has been in a conservative stage since it got its target. Before that,
    /// P_avg is still rising from zero, so the sample throughput decides (§4.3 (2)).
    pub been_conservative: bool,
}

impl Switching {
    /// A rule with margin `gamma` for a flow that has not yet been conservative.
    pub fn new(gamma: f64) -> Self {
        Switching {
            gamma,
            been_conservative: false,
        }
    }

    /// The stage to move to after a measurement window, if it differs from `stage`.
    /// `target_bps` is the (adjusted) target rate R'.
    pub fn decide(
        &self,
        stage: Stage,
        p_smp_bps: f64,
        p_avg_bps: f64,
        target_bps: f64,
    ) -> Option<Stage> {
        match stage {
            Stage::Aggressive => {
                let p = if self.been_conservative {
                    p_avg_bps
                } else {
                    p_smp_bps
                };
                (p >= target_bps).then_some(Stage::Conservative)
            }
            Stage::Conservative => {
                (p_avg_bps < (1.0 - self.gamma) * target_bps).then_some(Stage::Aggressive)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: f64 = 10e6;

    #[test]
    fn a_new_flow_leaves_the_aggressive_stage_on_the_sample_throughput() {
        let s = Switching::new(GAMMA);
        // P_avg is still ramping (1.2 Mbit/s) but the last window delivered 10.1 Mbit/s.
        assert_eq!(
            s.decide(Stage::Aggressive, 10.1e6, 1.2e6, R),
            Some(Stage::Conservative)
        );
        assert_eq!(s.decide(Stage::Aggressive, 9.9e6, 20e6, R), None);
    }

    #[test]
    fn afterwards_the_average_decides_with_the_gamma_margin() {
        let s = Switching {
            been_conservative: true,
            ..Switching::new(GAMMA)
        };
        assert_eq!(s.decide(Stage::Aggressive, 20e6, 9.99e6, R), None);
        assert_eq!(
            s.decide(Stage::Aggressive, 0.0, 10e6, R),
            Some(Stage::Conservative)
        );
        // Conservative holds down to (1 − 0.2)·10 = 8 Mbit/s, whatever the sample says.
        assert_eq!(s.decide(Stage::Conservative, 1e6, 8.0e6, R), None);
        assert_eq!(
            s.decide(Stage::Conservative, 20e6, 7.99e6, R),
            Some(Stage::Aggressive)
        );
    }
}
