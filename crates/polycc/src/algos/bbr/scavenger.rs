//! BBR-S: BBR v1 made a scavenger by reacting to RTT deviation (Meng et al., "PCC Proteus",
//! SIGCOMM'20 §7.1, Fig. 14). Whenever the smoothed RTT deviation exceeds 20 ms, the sender is
//! forced into PROBE_RTT — its 4-packet window — for at least 40 ms. A competing primary that
//! builds a queue makes the RTT swing, so BBR-S keeps stepping aside; two BBR-S flows alone keep
//! the RTT steady and share as BBR does.
//!
//! "Smoothed RTT deviation" is the kernel's `mdev` (RFC 6298 RTTVAR: 3/4 · rttvar + 1/4 ·
//! |srtt − sample|), which is RFC 9002's `rttvar` that the transport hands every controller. The
//! 40 ms is the minimum hold once in flight has fallen to the PROBE_RTT window; as in Linux the
//! phase also lasts at least one round, and a deviation still above the threshold on leaving
//! forces the next one. The paper calls its thresholds illustrative (footnote 7), so both are
//! parameters.

use super::model::default_seed;
use super::v1::{BbrV1, BbrV1Config, CWND_GAIN, HIGH_GAIN};
use crate::cc::{CcContext, CongestionControl};
use crate::estimators::rtt::RttSnapshot;
use crate::registry::{check_range, parse_params, CcError, Params, Registry};
use crate::units::Duration;
use serde::Deserialize;

pub const NAME: &str = "bbr-s";
pub const SUMMARY: &str =
    "BBR-S (Proteus SIGCOMM'20 §7.1): BBR v1 forced into PROBE_RTT for >= 40 ms while the smoothed RTT deviation exceeds 20 ms";

/// Proteus §7.1: the RTT-deviation threshold above which BBR-S yields.
pub const RTT_DEV_THRESHOLD: Duration = Duration::from_millis(20);
/// Proteus §7.1: the shortest forced PROBE_RTT.
pub const FORCED_PROBE_RTT: Duration = Duration::from_millis(40);

/// When and for how long BBR-S yields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScavengerRule {
    /// Yield while the smoothed RTT deviation is above this.
    pub threshold: Duration,
    /// Minimum PROBE_RTT hold once in flight is down to the PROBE_RTT window.
    pub hold: Duration,
}

impl Default for ScavengerRule {
    fn default() -> Self {
        ScavengerRule {
            threshold: RTT_DEV_THRESHOLD,
            hold: FORCED_PROBE_RTT,
        }
    }
}

impl ScavengerRule {
    /// True when the RTT state says to step aside (never before the first RTT sample, whose
    /// RFC 9002 default deviation is not a measurement).
    pub fn should_yield(&self, rtt: &RttSnapshot) -> bool {
        rtt.has_sample && rtt.var > self.threshold
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BbrSParams {
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default = "default_threshold_ms")]
    rtt_dev_threshold_ms: f64,
    #[serde(default = "default_hold_ms")]
    probe_rtt_ms: f64,
}

fn default_threshold_ms() -> f64 {
    RTT_DEV_THRESHOLD.as_millis_f64()
}
fn default_hold_ms() -> f64 {
    FORCED_PROBE_RTT.as_millis_f64()
}

pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: BbrSParams = parse_params(NAME, p)?;
    check_range(
        NAME,
        "rtt_dev_threshold_ms",
        params.rtt_dev_threshold_ms,
        0.1,
        10_000.0,
    )?;
    check_range(NAME, "probe_rtt_ms", params.probe_rtt_ms, 1.0, 10_000.0)?;
    Ok(Box::new(BbrV1::new(
        ctx,
        BbrV1Config {
            seed: params.seed.unwrap_or_else(|| default_seed(ctx, 1)),
            cwnd_gain: CWND_GAIN,
            startup_gain: HIGH_GAIN,
            send_quantum_packets: None,
            scavenger: Some(ScavengerRule {
                threshold: Duration::from_secs_f64(params.rtt_dev_threshold_ms / 1e3),
                hold: Duration::from_secs_f64(params.probe_rtt_ms / 1e3),
            }),
        },
    )))
}
