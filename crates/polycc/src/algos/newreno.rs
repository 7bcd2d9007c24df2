//! NewReno as RFC 9002 §7 (QUIC) with RFC 6582's one-reduction-per-recovery rule: slow start,
//! byte-counting congestion avoidance, halving on loss, persistent congestion to the minimum.

use crate::cc::{Calibration, CcContext, CongestionControl, Telemetry, MIN_WINDOW_PACKETS};
use crate::registry::{check_range, parse_params, CcError, Params, Registry};
use crate::signals::{AckEvent, LossEvent};
use crate::units::{Bytes, Time};
use serde::Deserialize;

pub const SUMMARY: &str = "NewReno (RFC 9002 §7, RFC 6582): AIMD with slow start";

/// RFC 9002 §7.3.2 kLossReductionFactor.
pub const LOSS_REDUCTION_FACTOR: f64 = 0.5;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewRenoParams {
    #[serde(default = "default_beta")]
    beta: f64,
}

fn default_beta() -> f64 {
    LOSS_REDUCTION_FACTOR
}

pub fn build(
    p: &Params,
    ctx: &CcContext,
    _: &Registry,
) -> Result<Box<dyn CongestionControl>, CcError> {
    let params: NewRenoParams = parse_params("newreno", p)?;
    check_range("newreno", "beta", params.beta, 0.05, 0.95)?;
    Ok(Box::new(NewReno::new(ctx, params.beta)))
}

#[derive(Clone, Debug)]
pub struct NewReno {
    mss: Bytes,
    cwnd: Bytes,
    ssthresh: Bytes,
    beta: f64,
    /// Packets sent before this time belong to the current recovery epoch (RFC 9002 §7.3.2).
    recovery_start: Option<Time>,
    in_recovery: bool,
    /// Acked bytes not yet turned into window growth in congestion avoidance.
    ca_credit: Bytes,
    clamp: Option<Bytes>,
}

impl NewReno {
    pub fn new(ctx: &CcContext, beta: f64) -> Self {
        NewReno {
            mss: ctx.mss,
            cwnd: ctx.initial_cwnd,
            ssthresh: Bytes::MAX,
            beta,
            recovery_start: None,
            in_recovery: false,
            ca_credit: 0,
            clamp: None,
        }
    }

    fn min_window(&self) -> Bytes {
        MIN_WINDOW_PACKETS * self.mss
    }

    fn apply_clamp(&mut self) {
        if let Some(c) = self.clamp {
            self.cwnd = self.cwnd.min(c.max(self.min_window()));
        }
        self.cwnd = self.cwnd.max(self.min_window());
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &str {
        "newreno"
    }

    fn on_ack(&mut self, _now: Time, ack: &AckEvent) {
        // RFC 9002 §7.3.2: recovery is judged by send time only: an ACK of a packet sent before
        // the recovery start neither grows the window nor ends the epoch, so losses of such
        // packets detected later do not reduce it again.
        self.in_recovery = self
            .recovery_start
            .is_some_and(|r| ack.largest_acked_sent_time <= r);
        if self.in_recovery {
            return;
        }
        if ack.app_limited {
            return; // RFC 9002 §7.8: no growth while application-limited
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += ack.acked_bytes;
        } else {
            self.ca_credit += ack.acked_bytes;
            if self.ca_credit >= self.cwnd {
                self.ca_credit -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
        self.apply_clamp();
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        let new_epoch = self
            .recovery_start
            .is_none_or(|r| loss.largest_lost_sent_time > r);
        if new_epoch {
            self.recovery_start = Some(now);
            self.in_recovery = true;
            self.ssthresh = ((self.cwnd as f64 * self.beta) as Bytes).max(self.min_window());
            self.cwnd = self.ssthresh;
            self.ca_credit = 0;
        }
        if loss.persistent_congestion {
            // RFC 9002 §7.6.2: collapse to the minimum window and leave recovery.
            self.cwnd = self.min_window();
            self.recovery_start = None;
            self.in_recovery = false;
        }
        self.apply_clamp();
    }

    fn cwnd(&self) -> Bytes {
        self.cwnd
    }

    fn ssthresh(&self) -> Option<Bytes> {
        Some(self.ssthresh)
    }

    fn telemetry(&self) -> Telemetry {
        let mut t = Telemetry::new(if self.in_recovery {
            "recovery"
        } else if self.cwnd < self.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        });
        t.push(
            "ssthresh_bytes",
            if self.ssthresh == Bytes::MAX {
                f64::NAN
            } else {
                self.ssthresh as f64
            },
        );
        t
    }

    fn calibrate(&mut self, _now: Time, c: &Calibration) {
        if let Some(clamp) = c.cwnd_clamp {
            self.clamp = clamp;
        }
        if let Some(s) = c.ssthresh {
            self.ssthresh = s.max(self.min_window());
        }
        if let Some(w) = c.cwnd {
            self.cwnd = w;
        }
        self.apply_clamp();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{persistent_congestion, Flow};
    use crate::units::Duration;

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
    fn persistent_congestion_collapses_to_the_minimum() {
        let mut cc = newreno();
        cc.on_loss(Time::ZERO, &persistent_congestion(0, Time::ZERO, MSS));
        assert_eq!(cc.cwnd(), 2 * MSS);
    }
}
