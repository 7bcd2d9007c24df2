//! NewReno as RFC 9002 §7 (QUIC) with RFC 6582's one-reduction-per-recovery rule: slow start,
//! byte-counting congestion avoidance, halving on loss, persistent congestion to the minimum.

use crate::algos::reno::{
    reno_family_methods, reno_window_in, AiCredit, RecoveryPeriod, RenoFamily, RenoWindow,
    RENO_BETA,
};
use crate::cc::{CcContext, CongestionControl, Telemetry};
use crate::params::{self, Kind, ParamSpec, ParamTable, Schema};
use crate::registry::{CcError, Params, Registry};
use crate::signals::{AckEvent, SentPacket};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// One-line description shown in the registry listing.
pub const SUMMARY: &str = "NewReno (RFC 9002 §7, RFC 6582): AIMD with slow start";

/// RFC 9002 §7.3.2 kLossReductionFactor.
pub const LOSS_REDUCTION_FACTOR: f64 = RENO_BETA;

/// Registry and scenario name.
pub const NAME: &str = "newreno";

/// Registers NewReno under [`NAME`].
pub fn register(r: &mut Registry) {
    r.register_with_params(NAME, SUMMARY, Schema::of::<NewRenoParams>(), build);
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct NewRenoParams {
    #[serde(default = "default_beta")]
    beta: f64,
    #[serde(default)]
    recovery_spans_retransmissions: bool,
    #[serde(default)]
    prr: bool,
}

fn default_beta() -> f64 {
    LOSS_REDUCTION_FACTOR
}

impl ParamTable for NewRenoParams {
    // A reduction of nothing or of everything is no congestion response (as CUBIC's beta).
    const PARAMS: &'static [ParamSpec] = &[
        ParamSpec::new(
            "beta",
            Kind::Number,
            "fraction of the window kept on a congestion event",
            "RFC 9002 §7.3.2 kLossReductionFactor",
        )
        .range(0.05, 0.95),
        super::reno::RECOVERY_SPANS_RETRANSMISSIONS,
        super::reno::PRR,
    ];
}

/// Builds NewReno from scenario parameters (`beta`, the fraction of the window kept on a
/// congestion event; `recovery_spans_retransmissions`, TCP's recovery period), checking them
/// against the declared schema.
pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: NewRenoParams = params::parse(NAME, p)?;
    let mut cc = NewReno::new(ctx, params.beta);
    if params.recovery_spans_retransmissions {
        cc.reno.recovery = RecoveryPeriod::spanning_retransmissions();
    }
    if params.prr {
        cc.reno = cc.reno.with_prr();
    }
    Ok(Box::new(cc))
}

/// NewReno for one flow (the model is in the module docs).
#[derive(Clone, Debug)]
pub struct NewReno {
    reno: RenoWindow,
    beta: f64,
    /// Congestion-avoidance growth: one MSS per window of acked bytes.
    ca_credit: AiCredit,
}

impl NewReno {
    /// NewReno in slow start from the context's initial window; `beta` is the fraction of the
    /// window kept on a congestion event ([`LOSS_REDUCTION_FACTOR`] by default).
    pub fn new(ctx: &CcContext, beta: f64) -> Self {
        NewReno {
            reno: RenoWindow::new(ctx),
            beta,
            ca_credit: AiCredit::default(),
        }
    }
}

impl RenoFamily for NewReno {
    reno_window_in!(reno);

    // NewReno restarts its credit at a congestion event only (below). Unlike the rest of the
    // family it keeps the credit through the persistent-congestion collapse and through a written
    // window: it always has, and restarting it there could change the results of runs that write
    // NewReno's window (Janus hand-overs, PolyCC pools).
    fn reset_growth(&mut self) {}

    fn on_congestion_event(&mut self, _now: Time) {
        self.reno.reduce(self.beta);
        self.ca_credit.reset();
    }
}

impl CongestionControl for NewReno {
    reno_family_methods!();

    fn name(&self) -> &str {
        "newreno"
    }

    fn on_sent(&mut self, _now: Time, sent: &SentPacket) {
        self.reno.recovery.on_sent(sent);
        self.reno.prr_on_sent(sent.bytes);
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        // RFC 9002 §7.3.2: recovery is judged by send time only: an ACK of a packet sent before
        // the recovery start neither grows the window nor ends the epoch, so losses of such
        // packets detected later do not reduce it again.
        let was_in_recovery = self.reno.recovery.is_active();
        if self.reno.recovery.follow(ack) {
            self.reno.prr_on_ack(ack.acked_bytes, ack.in_flight);
            self.reno.apply_clamp();
            return;
        }
        if was_in_recovery {
            self.reno.prr_end();
        }
        if ack.app_limited {
            return; // RFC 9002 §7.8: no growth while application-limited
        }
        if self.reno.in_slow_start() {
            self.reno.slow_start_uncapped(ack.acked_bytes);
        } else {
            self.ca_credit.on_ack(&mut self.reno, ack.acked_bytes);
        }
        self.reno.apply_clamp();
    }

    fn telemetry(&self) -> Telemetry {
        self.reno.telemetry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{persistent_congestion, Flow};
    use crate::units::{Bytes, Duration};

    const MSS: Bytes = 1200;

    fn newreno() -> NewReno {
        NewReno::new(&CcContext::new(MSS), LOSS_REDUCTION_FACTOR)
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = newreno();
        assert_eq!(cc.cwnd(), 10 * MSS);
        flow.run_rtts(&mut cc, 3);
        assert_eq!(cc.cwnd(), 80 * MSS);
    }

    #[test]
    fn halves_once_per_epoch_then_adds_one_mss_per_rtt() {
        let mut flow = Flow::new(MSS, Duration::from_millis(40));
        let mut cc = newreno();
        flow.run_rtts(&mut cc, 3);
        assert!(flow.lose_oldest(&mut cc));
        assert!(flow.lose_oldest(&mut cc));
        assert_eq!(cc.cwnd(), 40 * MSS);
        assert_eq!(cc.telemetry().state, "recovery");
        // Recovery ends one RTT later; from then on, one MSS per window of ACKs.
        flow.run_rtts(&mut cc, 2);
        let before = cc.cwnd();
        flow.run_rtts(&mut cc, 10);
        let grown = (cc.cwnd() - before) / MSS;
        assert!((9..=10).contains(&grown), "grew {grown} MSS in 10 RTTs");
    }

    #[test]
    fn acks_of_two_packets_add_one_mss_per_window_as_linux_reno() {
        // Linux `tcp_reno_cong_avoid` counts packets acknowledged (`tcp_cong_avoid_ai`), not
        // ACKs: a receiver that acknowledges every second segment (the Linux stack's) still
        // gets one MSS per window. Window 10 MSS: five ACKs of two packets add one.
        use crate::algos::test_support::{ack, start_in_ca};
        let mut cc = newreno();
        let t = Time::ZERO + Duration::from_secs(1);
        start_in_ca(&mut cc, t, 10 * MSS);
        let rtt = Duration::from_millis(40);
        let snap = crate::estimators::rtt::RttSnapshot::default();
        for k in 0..5 {
            let mut a = ack(2 * k + 1, t, 2 * MSS, MSS, rtt, snap);
            a.acked_packets = 2;
            cc.on_ack(t + rtt, &a);
        }
        assert_eq!(cc.cwnd(), 11 * MSS);
    }

    #[test]
    fn persistent_congestion_collapses_to_the_minimum() {
        let mut cc = newreno();
        cc.on_loss(Time::ZERO, &persistent_congestion(0, Time::ZERO, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
    }
}
