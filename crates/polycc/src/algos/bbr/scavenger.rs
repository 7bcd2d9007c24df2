//! BBR-S: BBR v1 made a scavenger by reacting to RTT deviation (Meng et al., "PCC Proteus",
//! SIGCOMM'20 §7.1, Fig. 14). Whenever the smoothed RTT deviation exceeds 20 ms, the sender is
//! forced into PROBE_RTT — its 4-packet window — for at least 40 ms. A competing primary that
//! builds a queue makes the RTT swing, so BBR-S keeps stepping aside; two BBR-S flows alone keep
//! the RTT steady and share as BBR does.
//!
//! "Smoothed RTT deviation" is the kernel's `mdev_us`, the field the paper's modified kernel
//! BBR can read (its `rttvar_us` is floored at the 200 ms minimum RTO, above any 20 ms
//! threshold even for a flow alone, which the paper's BBR-S sharing fairly with itself rules
//! out). `LinuxMdev` computes it from the per-ACK RTT samples exactly as Linux's
//! `tcp_rtt_estimator` does, each ACK's sample being the RTT of the earliest packet it newly
//! acknowledges (the kernel's `seq_rtt_us`, so a delayed ACK's wait shows in it): it is 4× the
//! mean deviation (RFC 6298's RTTVAR, which the transport's RTT snapshot carries, is 1×), starts
//! at 2× the first sample, and a sample below the smoothed RTT moves it only an eighth as much.
//! On the kernel's own TCP (the eBPF shim, `AckEvent::kernel_mdev`) BBR-S reads the socket's
//! `mdev_us` itself, as the paper's in-kernel BBR-S could: the shim's per-ACK sample is the
//! latest packet's RTT (`rate_sample.rtt_us`), not the one the kernel's estimator takes.
//! The 40 ms is the minimum hold once in flight has fallen to the PROBE_RTT window; as in Linux
//! the phase also lasts at least one round, and a deviation still above the threshold on leaving
//! forces the next one. The paper calls its thresholds illustrative (footnote 7), so both are
//! parameters.
//!
//! BBR-S is its kernel's BBR plus the rule, and Fig. 14's BBR that kernel's BBR: the two differ
//! by the rule alone. polycc runs the competitor as the Linux kernel's BBR (`stack = "linux"`),
//! which has had the ACK-aggregation allowance (`extra_acked`) since 4.19, so BBR-S has it too
//! by default ([`EXTRA_ACKED`]). Without it BBR v1's window of 2 BDPs limits BBR-S against the
//! kernel's BBR whether or not the rule fires: it kept 37 % of the link, about as much with its
//! rule turned off, and keeps 49 % with the allowance (simulator, 50 Mbit/s, 30 ms, 375 KB,
//! 3 seeds; the real kernel alike: REPRODUCTION.md "BBR-S on kernel TCP").

use super::prng::{default_seed, SEED_PARAM};
use super::v1::{BbrV1, BbrV1Config, CWND_GAIN, HIGH_GAIN};
use crate::cc::{CcContext, CongestionControl};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::units::Duration;
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "bbr-s";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "BBR-S (Proteus SIGCOMM'20 §7.1): BBR v1 forced into PROBE_RTT for >= 40 ms while the smoothed RTT deviation exceeds 20 ms";

/// Proteus §7.1: the RTT-deviation threshold above which BBR-S yields.
pub const RTT_DEV_THRESHOLD: Duration = Duration::from_millis(20);
/// Proteus §7.1: the shortest forced PROBE_RTT.
pub const FORCED_PROBE_RTT: Duration = Duration::from_millis(40);
/// The ACK-aggregation allowance by default, as the kernel's BBR (`tcp_bbr.c` since 4.19) that
/// BBR-S modifies and competes with.
pub const EXTRA_ACKED: bool = true;

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
    /// True when the deviation says to step aside (never before the first RTT sample).
    pub(crate) fn should_yield(&self, dev: &LinuxMdev) -> bool {
        dev.mdev().is_some_and(|m| m > self.threshold)
    }
}

/// Linux `tcp_rtt_estimator` (net/ipv4/tcp_input.c): the smoothed RTT (kept ×8) and the
/// smoothed mean deviation `mdev_us` (kept ×4), in µs, updated with every RTT sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinuxMdev {
    /// 8 × the smoothed RTT, µs; 0 before the first sample.
    srtt8_us: i64,
    mdev_us: i64,
    /// The kernel's own `mdev_us`, where the transport is the kernel's TCP
    /// ([`crate::AckEvent::kernel_mdev`]): it replaces the estimate, since the shim's per-ACK
    /// sample is the latest packet's RTT, not the earliest's that the kernel's estimator takes.
    kernel: Option<Duration>,
}

impl LinuxMdev {
    /// Takes the kernel's own `mdev_us` after an ACK, in place of the estimate.
    pub fn on_kernel(&mut self, mdev: Duration) {
        self.kernel = Some(mdev);
    }

    /// Folds in one RTT sample (the earliest newly acknowledged packet's), in whole µs as the
    /// kernel keeps it.
    pub fn on_sample(&mut self, rtt: Duration) {
        let mut m = (rtt.as_nanos() / 1000).max(1) as i64;
        if self.srtt8_us == 0 {
            // "make sure rto = 3*rtt"
            self.srtt8_us = m << 3;
            self.mdev_us = m << 1;
            return;
        }
        m -= self.srtt8_us >> 3; // the error
        self.srtt8_us = (self.srtt8_us + m).max(1); // srtt = 7/8 srtt + 1/8 sample
        if m < 0 {
            // A sample below the estimate: an eighth of the usual weight, so that a falling
            // RTT does not read as a large deviation.
            m = -m - (self.mdev_us >> 2);
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= self.mdev_us >> 2;
        }
        self.mdev_us += m; // mdev = 3/4 mdev + 1/4 |error|, in units of 4×
    }

    /// `mdev_us` (the kernel's, where it was given), None before the first sample.
    pub fn mdev(&self) -> Option<Duration> {
        self.kernel.or_else(|| {
            (self.srtt8_us != 0).then(|| Duration::from_micros(self.mdev_us.max(0) as u64))
        })
    }
}

/// Registers BBR-S under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<BbrSParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct BbrSParams {
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default = "default_threshold_ms")]
    rtt_dev_threshold_ms: f64,
    #[serde(default = "default_hold_ms")]
    probe_rtt_ms: f64,
    #[serde(default = "default_extra_acked")]
    extra_acked: bool,
}

fn default_extra_acked() -> bool {
    EXTRA_ACKED
}

fn default_threshold_ms() -> f64 {
    RTT_DEV_THRESHOLD.as_millis_f64()
}
fn default_hold_ms() -> f64 {
    FORCED_PROBE_RTT.as_millis_f64()
}

impl ParamTable for BbrSParams {
    // The paper calls both thresholds illustrative (footnote 7): any positive value up to 10 s.
    const PARAMS: &'static [ParamSpec] = &[
        SEED_PARAM,
        ParamSpec::new(
            "rtt_dev_threshold_ms",
            Kind::Number,
            "smoothed RTT deviation (Linux mdev_us) above which BBR-S yields, ms",
            "Proteus SIGCOMM'20 §7.1",
        )
        .range(0.1, 10_000.0),
        ParamSpec::new(
            "probe_rtt_ms",
            Kind::Number,
            "shortest forced PROBE_RTT once in flight is down to its window, ms",
            "Proteus SIGCOMM'20 §7.1",
        )
        .range(1.0, 10_000.0),
        ParamSpec::new(
            "extra_acked",
            Kind::Bool,
            "BBR's ACK-aggregation allowance, on as in the kernel's BBR that BBR-S modifies",
            "Linux tcp_bbr.c bbr_update_ack_aggregation (4.19)",
        ),
    ];
}

/// Builds BBR-S from scenario parameters (`seed`, `rtt_dev_threshold_ms`, `probe_rtt_ms`,
/// `extra_acked`), checking them against the declared schema: BBR v1 at Linux's gains with a
/// [`ScavengerRule`].
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: BbrSParams = params::parse(NAME, p)?;
    Ok(Box::new(BbrV1::new(
        ctx,
        BbrV1Config {
            seed: params.seed.unwrap_or_else(|| default_seed(ctx, 1)),
            cwnd_gain: CWND_GAIN,
            startup_gain: HIGH_GAIN,
            send_quantum_packets: None,
            extra_acked: params.extra_acked,
            scavenger: Some(ScavengerRule {
                threshold: Duration::from_secs_f64(params.rtt_dev_threshold_ms / 1e3),
                hold: Duration::from_secs_f64(params.probe_rtt_ms / 1e3),
            }),
        },
    )))
}
