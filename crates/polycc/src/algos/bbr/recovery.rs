//! Loss recovery as BBR sees it: TCP's congestion-avoidance state rebuilt from QUIC-style events,
//! and the window saved on entering recovery or PROBE_RTT (restored when they end).

use crate::signals::{AckEvent, LossEvent};
use crate::units::{Bytes, Time};

/// TCP's congestion-avoidance state as BBR sees it (`icsk_ca_state`), rebuilt from QUIC-style
/// events: a recovery epoch starts with the first loss of a packet sent after the previous epoch
/// began, and ends with the first ACK of a packet sent after it began (RFC 9002 §7.3.2); RFC 9002
/// §7.6 persistent congestion plays the part of TCP's retransmission timeout (`TCP_CA_Loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// No recovery (`TCP_CA_Open`).
    Open,
    /// A recovery epoch after a loss (`TCP_CA_Recovery`): packet conservation for its first
    /// round, the saved window restored at its end.
    Recovery,
    /// After persistent congestion, in place of TCP's retransmission timeout (`TCP_CA_Loss`).
    Loss,
}

/// What a loss event meant for the recovery state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossOutcome {
    /// A new recovery epoch (or a timeout) began with this loss.
    pub new_epoch: bool,
    /// The loss event declared persistent congestion (RFC 9002 §7.6).
    pub persistent: bool,
}

/// The recovery state and the window to restore when it ends (Linux `icsk_ca_state`,
/// `bbr->prior_cwnd`).
#[derive(Clone, Debug)]
pub struct Recovery {
    /// Where the flow is now.
    pub state: CaState,
    /// Packets sent at or before this time belong to the current (or last) epoch.
    start: Option<Time>,
    /// Linux `prior_cwnd`: the last known good window, restored when recovery or PROBE_RTT ends.
    pub prior_cwnd: Bytes,
}

impl Recovery {
    /// Open, with `prior_cwnd` as the last known good window.
    pub fn new(prior_cwnd: Bytes) -> Self {
        Recovery {
            state: CaState::Open,
            start: None,
            prior_cwnd,
        }
    }

    /// Linux `bbr_save_cwnd`: a window cut by recovery or PROBE_RTT is not remembered as good.
    #[inline]
    pub fn save_cwnd(&mut self, cwnd: Bytes, in_probe_rtt: bool) {
        if self.state == CaState::Open && !in_probe_rtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Classifies a loss and saves the window when an epoch begins (Linux calls `ssthresh`, and so
    /// `bbr_save_cwnd`, when it enters recovery or the loss state).
    pub fn on_loss(
        &mut self,
        now: Time,
        loss: &LossEvent,
        cwnd: Bytes,
        in_probe_rtt: bool,
    ) -> LossOutcome {
        let new_epoch = self.start.is_none_or(|r| loss.largest_lost_sent_time > r);
        if new_epoch || loss.persistent_congestion {
            self.save_cwnd(cwnd, in_probe_rtt);
            self.start = Some(now);
            self.state = if loss.persistent_congestion {
                CaState::Loss
            } else {
                CaState::Recovery
            };
        }
        LossOutcome {
            new_epoch,
            persistent: loss.persistent_congestion,
        }
    }

    /// Returns the state left when this ACK ends recovery or the loss state.
    #[inline]
    pub fn on_ack(&mut self, ack: &AckEvent) -> Option<CaState> {
        let ended = self.state != CaState::Open
            && self.start.is_none_or(|r| ack.largest_acked_sent_time > r);
        if ended {
            let was = self.state;
            self.state = CaState::Open;
            return Some(was);
        }
        None
    }
}
