//! The loss, calibration and hand-over sequences of the Reno family, with the hooks where each
//! controller adds its own state.

use super::RenoWindow;
use crate::cc::{Calibration, HandoverState};
use crate::estimators::rtt::RttSnapshot;
use crate::signals::LossEvent;
use crate::units::{Bytes, Rate, Time};

/// A Reno-family controller: a [`RenoWindow`] plus the state of its own increase and decrease
/// rules. The provided methods are the shared sequences; [`reno_window_in`] writes the accessors
/// and [`reno_family_methods`] wires the sequences into a `CongestionControl` impl.
pub(crate) trait RenoFamily {
    fn reno(&self) -> &RenoWindow;
    fn reno_mut(&mut self) -> &mut RenoWindow;

    /// Restarts the growth carried between ACKs ([`AiCredit`](super::AiCredit) or
    /// [`ByteCarry`](super::ByteCarry)): at a congestion event, at persistent congestion and when
    /// a policy writes the window, which leave the window it was earned at behind.
    fn reset_growth(&mut self);
    /// A new congestion event, the recovery period already begun: set ssthresh and the window
    /// (most call [`RenoWindow::reduce`] with their factor).
    fn on_congestion_event(&mut self, now: Time);
    /// Persistent congestion, before the window collapses to the minimum (it still holds the
    /// window of before).
    fn on_persistent_congestion(&mut self, _now: Time) {}
    /// A policy wrote the window.
    fn on_cwnd_written(&mut self) {}
    /// A policy wrote the threshold.
    fn on_ssthresh_written(&mut self) {}
    /// After a predecessor's window and threshold were taken over: what else to inherit.
    fn on_adopt(&mut self, _now: Time, _from: &HandoverState) {}
    /// The transport's RTT state, for a controller that keeps it to hand over.
    fn handover_rtt(&self) -> RttSnapshot {
        RttSnapshot::default()
    }
    /// A bandwidth estimate to hand over, for a controller that makes one.
    fn handover_bandwidth(&self) -> Option<Rate> {
        None
    }

    /// One reduction per congestion event (RFC 9002 §7.3.2), then the persistent-congestion
    /// collapse (§7.6.2), then the bounds.
    fn reno_on_loss(&mut self, now: Time, loss: &LossEvent) {
        if self.reno().recovery.is_new_event(loss) {
            let prior_cwnd = self.reno().cwnd;
            self.reno_mut().recovery.begin(now);
            self.on_congestion_event(now);
            self.reset_growth();
            self.reno_mut().prr_begin(prior_cwnd, loss.in_flight);
        } else {
            self.reno_mut().prr_on_loss();
        }
        if loss.persistent_congestion {
            self.on_persistent_congestion(now);
            self.reset_growth();
            self.reno_mut().collapse();
        }
        self.reno_mut().apply_clamp();
    }

    /// Clamp first, so that the window written next is bounded by the new clamp.
    fn reno_calibrate(&mut self, c: &Calibration) {
        if let Some(clamp) = c.cwnd_clamp {
            self.reno_mut().clamp = clamp.bound();
        }
        if let Some(s) = c.ssthresh {
            let w = self.reno_mut();
            w.ssthresh = s.max(w.min_window());
            self.on_ssthresh_written();
        }
        if let Some(cwnd) = c.cwnd {
            self.reno_mut().cwnd = cwnd;
            self.reset_growth();
            self.on_cwnd_written();
        }
        self.reno_mut().apply_clamp();
    }

    /// `reno_calibrate` with only the window, without building a calibration (PolyCC's
    /// write-back calls it on every ACK).
    fn reno_calibrate_cwnd(&mut self, cwnd: Bytes) -> Bytes {
        self.reno_mut().cwnd = cwnd;
        self.reset_growth();
        self.on_cwnd_written();
        let w = self.reno_mut();
        w.apply_clamp();
        w.cwnd
    }

    /// Window and threshold, and what the hooks add; a Reno-family controller sets no pacing rate.
    fn reno_handover_state(&self) -> HandoverState {
        let w = self.reno();
        HandoverState {
            cwnd: w.cwnd,
            ssthresh: Some(w.ssthresh),
            bandwidth_estimate: self.handover_bandwidth(),
            rtt: self.handover_rtt(),
            ..HandoverState::default()
        }
    }

    /// Takes the predecessor's window and threshold, as Linux `tcp_set_congestion_control`
    /// keeps the socket's.
    fn reno_adopt(&mut self, now: Time, from: &HandoverState) {
        self.reno_calibrate(&Calibration {
            cwnd: Some(from.cwnd),
            ssthresh: from.ssthresh,
            ..Calibration::default()
        });
        self.on_adopt(now, from);
    }
}

/// [`RenoFamily`]'s two accessors, for a controller that keeps its [`RenoWindow`] in `$field`.
/// Use inside the `impl RenoFamily` block.
macro_rules! reno_window_in {
    ($field:ident) => {
        fn reno(&self) -> &$crate::algos::reno::RenoWindow {
            &self.$field
        }

        fn reno_mut(&mut self) -> &mut $crate::algos::reno::RenoWindow {
            &mut self.$field
        }
    };
}
pub(crate) use reno_window_in;

/// The `CongestionControl` methods a [`RenoFamily`] controller takes as they are, as Linux's Reno
/// family points its `tcp_congestion_ops` at the shared `tcp_reno_*` functions. Use inside the
/// impl block; the controller writes the rest (name, ACK handling, telemetry).
macro_rules! reno_family_methods {
    () => {
        fn on_loss(&mut self, now: $crate::units::Time, loss: &$crate::signals::LossEvent) {
            $crate::algos::reno::RenoFamily::reno_on_loss(self, now, loss);
        }

        fn cwnd(&self) -> $crate::units::Bytes {
            $crate::algos::reno::RenoFamily::reno(self).cwnd
        }

        fn ssthresh(&self) -> Option<$crate::units::Bytes> {
            Some($crate::algos::reno::RenoFamily::reno(self).ssthresh)
        }

        fn calibrate(&mut self, _now: $crate::units::Time, c: &$crate::cc::Calibration) {
            $crate::algos::reno::RenoFamily::reno_calibrate(self, c);
        }

        fn calibrate_cwnd(
            &mut self,
            _now: $crate::units::Time,
            cwnd: $crate::units::Bytes,
        ) -> $crate::units::Bytes {
            $crate::algos::reno::RenoFamily::reno_calibrate_cwnd(self, cwnd)
        }

        fn handover_state(&self) -> $crate::cc::HandoverState {
            $crate::algos::reno::RenoFamily::reno_handover_state(self)
        }

        fn adopt(&mut self, now: $crate::units::Time, from: &$crate::cc::HandoverState) {
            $crate::algos::reno::RenoFamily::reno_adopt(self, now, from);
        }
    };
}
pub(crate) use reno_family_methods;
