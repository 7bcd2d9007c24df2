//! TCP Hybla as Linux `net/ipv4/tcp_hybla.c` (Caini & Firrincieli, "TCP Hybla: a TCP
//! enhancement for heterogeneous networks", Int. J. Satellite Communications and Networking,
//! 2004).
//!
//! Hybla makes a long-RTT flow grow, per unit of time, as a flow with the reference RTT `RTT0`
//! would. With the normalised RTT `rho = max(RTT_min / RTT0, 1)`, each segment acknowledged adds
//! `2^rho − 1` segments in slow start and `rho² / cwnd` segments in congestion avoidance; loss
//! handling is Reno's (halving, one reduction per recovery epoch).
//!
//! Simplifications and differences from Linux, all documented here:
//! - rho is continuous and `2^rho` exact; Linux keeps rho in steps of 1/8 and takes `2^(k/8)`
//!   from an 8-entry table, so its increments are up to one 1/8-step of rho smaller.
//! - Growth is per segment acknowledged (`acked_bytes / mss`); Linux adds one increment per
//!   ACK whatever it covers. The two agree when every segment is acknowledged.
//! - As in Linux, rho comes from the smallest *smoothed* RTT seen, and the slow-start exponent
//!   is capped at 16 (`min(rho, 16)`); slow start never overshoots ssthresh.
//! - In slow start the window is bounded by twice the bytes in flight before the ACK (when the
//!   transport reports them). Linux applies that rule (`tcp_is_cwnd_limited`) as a gate, so
//!   one ACK on a 600 ms path (rho = 24) still adds 2^16 − 1 segments (~95 MB) and only the
//!   receive window holds the sender back. The simulator's default receive window (64 MiB,
//!   polycc-sim's `DEFAULT_RWND`, when a flow sets no `rwnd`) is far above any path's BDP, so
//!   with a gate alone tens of megabytes would burst into the queue. As a bound the rule lets
//!   the window at most double per ACK, so slow start proceeds as fast as the sender can fill
//!   the window (pacing at 2·cwnd/srtt grows it e-fold every srtt/4), still far faster than
//!   Reno's doubling per RTT.
//! - Linux sets the initial window to `rho` segments (`hybla_init`, from the handshake RTT).
//!   Here the transport's initial window is kept (the RTT is not known when the controller is
//!   built). Linux's clamp of 65535 segments is kept (`max_cwnd_segments`).

use crate::algos::reno;
use crate::algos::reno::{
    reno_family_methods, reno_window_in, ByteCarry, RenoFamily, RenoWindow, RENO_BETA,
};
use crate::cc::{CcContext, CongestionControl, HandoverState, Telemetry, MIN_WINDOW_PACKETS};
use crate::estimators::rtt::RttSnapshot;
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::AckEvent;
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

/// Registry and scenario name.
pub const NAME: &str = "hybla";
/// One-line description shown in the registry listing.
pub const SUMMARY: &str =
    "TCP Hybla (Linux tcp_hybla.c): long-RTT flows grow like a 25 ms reference flow";

/// tcp_hybla.c module parameter `rtt0`: the reference RTT, 25 ms.
pub const RTT0: Duration = Duration::from_millis(25);
/// tcp_hybla.c: slow start adds at most `2^16 − 1` segments per ACK (`min(rho, 16U)`).
pub const MAX_SLOW_START_EXPONENT: f64 = 16.0;
/// tcp_hybla.c hybla_init: `snd_cwnd_clamp = 65535` segments.
pub const MAX_CWND_SEGMENTS: u64 = 65_535;
/// Linux tcp_is_cwnd_limited: in slow start the window may grow only while it is below twice
/// the packets in flight. Applied here as a bound on the window (see the module notes).
pub const SLOW_START_FLIGHT_FACTOR: u64 = 2;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct HyblaParams {
    /// Reference RTT in milliseconds (Linux's `rtt0`).
    #[serde(default = "default_rtt0_ms")]
    rtt0_ms: f64,
    /// Upper bound on the window in segments (Linux's `snd_cwnd_clamp` from `hybla_init`).
    #[serde(default = "default_max_cwnd_segments")]
    max_cwnd_segments: u64,
}

fn default_max_cwnd_segments() -> u64 {
    MAX_CWND_SEGMENTS
}

fn default_rtt0_ms() -> f64 {
    RTT0.as_millis_f64()
}

impl ParamTable for HyblaParams {
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "rtt0_ms",
            Kind::Number,
            "reference RTT: a flow grows per unit of time as a flow with this RTT would, ms",
            "Linux tcp_hybla.c module parameter rtt0",
        )
        .range(0.1, 10_000.0),
        // No window below RFC 9002's minimum; 1e12 only catches typos.
        ParamSpec::new(
            "max_cwnd_segments",
            Kind::Integer,
            "upper bound on the window, segments",
            "Linux tcp_hybla.c hybla_init snd_cwnd_clamp",
        )
        .range(MIN_WINDOW_PACKETS as f64, 1e12),
    ];
}

/// Builds Hybla from scenario parameters (`rtt0_ms`, `max_cwnd_segments`), checking them
/// against the declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: HyblaParams = params::parse(NAME, p)?;
    Ok(Box::new(Hybla::with_max_cwnd(
        ctx,
        Duration::from_secs_f64(params.rtt0_ms / 1e3),
        params.max_cwnd_segments,
    )))
}

/// Registers this module's controllers.
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<HyblaParams>(), build);
}

/// Hybla for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct Hybla {
    rtt0: Duration,
    /// Bounded by `max_cwnd_segments`.
    reno: RenoWindow,
    carry: ByteCarry,
    /// `minrtt_us`: the smallest smoothed RTT seen; rho is recomputed when it falls.
    min_srtt: Option<Duration>,
    /// Normalised RTT, at least 1.
    rho: f64,
    rtt: RttSnapshot,
}

impl Hybla {
    /// Hybla in slow start from the context's initial window, normalising RTTs by `rtt0`
    /// (Linux's default is [`RTT0`]), with Linux's clamp of [`MAX_CWND_SEGMENTS`].
    pub fn new(ctx: &CcContext, rtt0: Duration) -> Self {
        Self::with_max_cwnd(ctx, rtt0, MAX_CWND_SEGMENTS)
    }

    /// Like [`Hybla::new`] with the window bounded by `max_cwnd_segments` instead of 65535.
    pub fn with_max_cwnd(ctx: &CcContext, rtt0: Duration, max_cwnd_segments: u64) -> Self {
        let reno = RenoWindow::new(ctx);
        let max_cwnd = max_cwnd_segments
            .max(MIN_WINDOW_PACKETS)
            .saturating_mul(reno.mss);
        Hybla {
            rtt0: rtt0.max(Duration(1)),
            reno: reno.with_max_cwnd(max_cwnd),
            carry: ByteCarry::default(),
            min_srtt: None,
            rho: 1.0,
            rtt: RttSnapshot::default(),
        }
    }

    /// The normalised RTT in use.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// hybla_recalc_param, run when the smoothed RTT reaches a new minimum.
    fn observe_srtt(&mut self, srtt: Duration) {
        if self.min_srtt.is_none_or(|m| srtt < m) {
            self.min_srtt = Some(srtt);
            self.rho = (srtt.as_nanos() as f64 / self.rtt0.as_nanos() as f64).max(1.0);
        }
    }

    /// INC = 2^rho − 1 segments per segment acknowledged, not past ssthresh, and not past twice
    /// what was in flight (see the module notes).
    fn slow_start(&mut self, ack: &AckEvent, segments: f64) {
        let mss = self.reno.mss as f64;
        let inc = self.rho.min(MAX_SLOW_START_EXPONENT).exp2() - 1.0;
        let before = self.reno.cwnd;
        self.carry.grow(&mut self.reno.cwnd, inc * segments * mss);
        let mut cap = self.reno.ssthresh;
        if ack.prior_in_flight > 0 {
            let flight_cap = ack.prior_in_flight.saturating_mul(SLOW_START_FLIGHT_FACTOR);
            cap = cap.min(flight_cap.max(before));
        }
        if self.reno.cwnd >= cap {
            self.reno.cwnd = cap;
            self.carry.reset();
        }
    }
}

impl RenoFamily for Hybla {
    reno_window_in!(reno);

    fn reset_growth(&mut self) {
        self.carry.reset();
    }

    /// Reno's halving (tcp_reno_ssthresh).
    fn on_congestion_event(&mut self, _now: Time) {
        self.reno.reduce(RENO_BETA);
    }

    fn handover_rtt(&self) -> RttSnapshot {
        self.rtt
    }

    fn on_adopt(&mut self, _now: Time, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
            // The predecessor's minimum RTT is a lower bound on the smoothed RTT to come.
            self.observe_srtt(from.rtt.min.max(Duration(1)));
        }
    }
}

impl CongestionControl for Hybla {
    reno_family_methods!();

    fn name(&self) -> &str {
        NAME
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        if ack.rtt.has_sample {
            self.rtt = ack.rtt;
            self.observe_srtt(ack.rtt.smoothed.max(Duration(1)));
        }
        if self.reno.recovery.follow(ack) || ack.app_limited {
            return;
        }
        let mss = self.reno.mss as f64;
        let segments = ack.acked_bytes as f64 / mss;
        if self.reno.in_slow_start() {
            self.slow_start(ack, segments);
        } else {
            // INC = rho² / cwnd segments per segment acknowledged.
            let cwnd_seg = self.reno.cwnd as f64 / mss;
            let inc = self.rho * self.rho / cwnd_seg * segments * mss;
            self.carry.grow(&mut self.reno.cwnd, inc);
        }
        self.reno.apply_clamp();
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = self.reno.telemetry();
        t.push("rho", self.rho);
        t.push("min_srtt_ms", reno::millis_or_nan(self.min_srtt));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{assert_params, persistent_congestion, start_in_ca, Flow};
    use crate::cc::Calibration;
    use crate::units::Bytes;

    const MSS: Bytes = 1000;

    fn hybla() -> Hybla {
        Hybla::new(&CcContext::new(MSS), RTT0)
    }

    #[test]
    fn rho_is_min_srtt_over_rtt0_at_least_one() {
        let mut flow = Flow::new(MSS, Duration::from_millis(200));
        let mut cc = hybla();
        flow.run_rtts(&mut cc, 1);
        assert_eq!(cc.rho(), 8.0);
        let mut flow = Flow::new(MSS, Duration::from_millis(10));
        let mut cc = hybla();
        flow.run_rtts(&mut cc, 1);
        assert_eq!(cc.rho(), 1.0);
        // A longer RTT later does not raise rho (it follows the minimum smoothed RTT).
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = hybla();
        flow.run_rtts(&mut cc, 2);
        assert_eq!(cc.rho(), 2.0);
        flow.rtt = Duration::from_millis(100);
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.rho(), 2.0);
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_segment() {
        // rho = 2 (50 ms): each ACKed segment adds 3, so the window quadruples per RTT.
        let mut flow = Flow::new(MSS, Duration::from_millis(50));
        let mut cc = hybla();
        flow.run_rtts(&mut cc, 1);
        assert_eq!(cc.cwnd(), 40 * MSS);
        flow.run_rtts(&mut cc, 1);
        assert_eq!(cc.cwnd(), 160 * MSS);
        // rho = 1 (25 ms and below) is Reno's doubling.
        let mut flow = Flow::new(MSS, Duration::from_millis(20));
        let mut cc = hybla();
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.cwnd(), 80 * MSS);
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = hybla();
        cc.calibrate(
            flow.now,
            &Calibration {
                ssthresh: Some(100 * MSS),
                ..Calibration::default()
            },
        );
        // rho = 4: 15 segments per ACK. The first ACK is bounded by twice the 10 packets in
        // flight (20, not 25); then +15 per ACK, the last one stopping at ssthresh (100, not 110).
        flow.fill(&mut cc);
        for (i, pkts) in [20, 35, 50, 65, 80, 95, 100].into_iter().enumerate() {
            assert!(flow.ack_next(&mut cc));
            assert_eq!(cc.cwnd(), pkts * MSS, "ACK {}", i + 1);
        }
        assert!(!cc.in_slow_start());
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_per_rtt() {
        // rho = 4 (100 ms): 16 segments per RTT, against Reno's one.
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = hybla();
        start_in_ca(&mut cc, flow.now, 100 * MSS);
        flow.run_rtts(&mut cc, 2);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 5);
        let grown = (cc.cwnd() - before) as f64 / MSS as f64;
        // rho²/cwnd per ACK with cwnd growing within the round: 5·16 minus a little.
        assert!(
            (75.0..=80.0).contains(&grown),
            "grew {grown} segments in 5 RTTs"
        );
    }

    #[test]
    fn loss_halves_once_per_epoch_and_persistent_congestion_collapses() {
        let mut flow = Flow::new(MSS, Duration::from_millis(100));
        let mut cc = hybla();
        start_in_ca(&mut cc, flow.now, 100 * MSS);
        flow.fill(&mut cc);
        assert!(flow.lose_oldest(&mut cc));
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), 50 * MSS);
        assert_eq!(cc.telemetry().state, "recovery");
        // No growth until a packet sent after the reduction is acknowledged.
        flow.run_rtts(&mut cc, 1);
        assert_eq!(cc.cwnd(), 50 * MSS);
        flow.run_rtts(&mut cc, 1);
        assert!(cc.cwnd() > 50 * MSS);
        let w = cc.cwnd();
        cc.on_loss(flow.now, &persistent_congestion(10_000, flow.now, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
        // Back in slow start with rho = 4, three ACKs take 2 packets back to ssthresh (half of
        // the 64 packets before): 17, 32, then capped at ssthresh.
        let ssthresh = cc.ssthresh().expect("ssthresh");
        assert_eq!(ssthresh, w / 2);
        assert!((32 * MSS..33 * MSS).contains(&ssthresh), "{ssthresh}");
        for _ in 0..3 {
            assert!(flow.ack_next(&mut cc));
        }
        assert_eq!(cc.cwnd(), ssthresh);
    }

    #[test]
    fn adopt_takes_rho_from_the_predecessor_min_rtt() {
        let mut cc = hybla();
        cc.adopt(
            Time::ZERO,
            &HandoverState {
                cwnd: 30 * MSS,
                ssthresh: Some(30 * MSS),
                rtt: RttSnapshot {
                    latest: Duration::from_millis(650),
                    smoothed: Duration::from_millis(640),
                    var: Duration::from_millis(10),
                    min: Duration::from_millis(600),
                    has_sample: true,
                },
                ..HandoverState::default()
            },
        );
        assert_eq!(cc.rho(), 24.0);
        assert_eq!(cc.cwnd(), 30 * MSS);
    }

    #[test]
    fn params_are_validated() {
        use serde_json::json;
        assert_params(
            json!({"name": NAME, "rtt0_ms": 50}),
            &[
                json!({"name": NAME, "rtt0_ms": 0}),
                json!({"name": NAME, "max_cwnd_segments": 1}),
                json!({"name": NAME, "rtt0": 25}),
            ],
        );
    }
}
