//! The hand-over of a flow from one controller to another, shared by every policy that changes
//! which controller drives a flow (Janus' stage switch, PolyCC's pilot change).
//!
//! A controller's own [`CongestionControl::handover_state`] knows its window, threshold, rates and
//! whatever RTT state it keeps; a policy also sees every event of the transport, so it fills in
//! the transport's RTT estimate and bytes in flight, which a window-only CCA does not track. This
//! is what Linux `tcp_set_congestion_control` keeps on the socket when the algorithm changes.

use crate::cc::{CongestionControl, HandoverState};
use crate::estimators::rtt::RttSnapshot;
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Time};

/// What the transport last told a policy about its flow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowView {
    /// The transport's RTT estimator state after the last ACK that carried a sample.
    pub rtt: RttSnapshot,
    /// Bytes in flight after the last event.
    pub in_flight: Bytes,
}

impl FlowView {
    /// Records the bytes in flight after a packet left.
    pub fn on_sent(&mut self, sent: &SentPacket) {
        self.in_flight = sent.in_flight;
    }
    /// Records the bytes in flight after an ACK, and its RTT state when it carried a sample.
    pub fn on_ack(&mut self, ack: &AckEvent) {
        self.in_flight = ack.in_flight;
        if ack.rtt.has_sample {
            self.rtt = ack.rtt;
        }
    }
    /// Records the bytes in flight after losses were declared.
    pub fn on_loss(&mut self, loss: &LossEvent) {
        self.in_flight = loss.in_flight;
    }
    /// The policy itself takes a flow over (policies compose).
    pub fn adopt(&mut self, from: &HandoverState) {
        if from.rtt.has_sample {
            self.rtt = from.rtt;
        }
        self.in_flight = from.in_flight;
    }

    /// `from`'s hand-over state completed with the transport's RTT state and bytes in flight.
    pub fn state_of(&self, from: &dyn CongestionControl) -> HandoverState {
        let mut s = from.handover_state();
        if self.rtt.has_sample {
            s.rtt = self.rtt;
        }
        s.in_flight = self.in_flight;
        s
    }
}

/// Values a policy imposes on the successor instead of the predecessor's (Janus' buffer clearing
/// window, its aggressive-stage threshold).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Window in bytes the successor starts from instead of the predecessor's.
    pub cwnd: Option<Bytes>,
    /// Slow-start threshold in bytes the successor takes instead of the predecessor's.
    pub ssthresh: Option<Bytes>,
    /// The successor starts without a threshold (in slow start, as a new flow), whatever the
    /// predecessor's; `ssthresh`, if given, wins.
    pub slow_start: bool,
}

/// The state a successor adopts: `from`'s as seen through `view`, with `overrides` applied.
pub fn successor_state(
    view: &FlowView,
    from: &dyn CongestionControl,
    overrides: Overrides,
) -> HandoverState {
    let mut state = view.state_of(from);
    if let Some(c) = overrides.cwnd {
        state.cwnd = c;
    }
    if overrides.slow_start {
        state.ssthresh = None;
    }
    if overrides.ssthresh.is_some() {
        state.ssthresh = overrides.ssthresh;
    }
    state
}

/// Hands the flow from `from` to `to`: `to` adopts [`successor_state`]. Returns the state handed
/// over (for telemetry and tests).
pub fn hand_over(
    now: Time,
    view: &FlowView,
    from: &dyn CongestionControl,
    to: &mut dyn CongestionControl,
    overrides: Overrides,
) -> HandoverState {
    let state = successor_state(view, from, overrides);
    to.adopt(now, &state);
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcContext;
    use crate::registry::{CcSpec, Registry};
    use crate::units::Duration;

    const MSS: Bytes = 1000;

    fn build(name: &str) -> Box<dyn CongestionControl> {
        Registry::standard()
            .build(&CcSpec::named(name), &CcContext::new(MSS))
            .expect("standard CCA builds")
    }

    fn snapshot(ms: u64) -> RttSnapshot {
        RttSnapshot {
            latest: Duration::from_millis(ms),
            smoothed: Duration::from_millis(ms),
            var: Duration::from_millis(1),
            min: Duration::from_millis(ms),
            has_sample: true,
        }
    }

    #[test]
    fn the_view_fills_in_rtt_and_in_flight_a_window_only_cca_does_not_keep() {
        let mut view = FlowView::default();
        view.on_sent(&SentPacket {
            in_flight: 7 * MSS,
            ..SentPacket::default()
        });
        // An ACK without a sample keeps the previous RTT state (none yet) but updates in flight.
        view.on_ack(&AckEvent {
            in_flight: 6 * MSS,
            ..AckEvent::default()
        });
        assert!(!view.rtt.has_sample);
        view.on_ack(&AckEvent {
            in_flight: 5 * MSS,
            rtt: snapshot(40),
            ..AckEvent::default()
        });
        let cubic = build("cubic");
        let s = view.state_of(cubic.as_ref());
        assert_eq!(s.cwnd, 10 * MSS); // RFC 9002 initial window, 10 datagrams of 1000 B
        assert_eq!(s.rtt.smoothed, Duration::from_millis(40));
        assert_eq!(s.in_flight, 5 * MSS);
        view.on_loss(&LossEvent {
            in_flight: 3 * MSS,
            ..LossEvent::default()
        });
        assert_eq!(view.state_of(cubic.as_ref()).in_flight, 3 * MSS);
    }

    #[test]
    fn the_successor_starts_from_the_predecessors_window_or_the_override() {
        let mut view = FlowView::default();
        view.adopt(&HandoverState {
            rtt: snapshot(50),
            in_flight: 12 * MSS,
            ..HandoverState::default()
        });
        let mut from = build("cubic");
        from.calibrate(
            Time::ZERO,
            &crate::cc::Calibration {
                cwnd: Some(40 * MSS),
                ssthresh: Some(30 * MSS),
                ..Default::default()
            },
        );
        let mut to = build("newreno");
        let s = hand_over(
            Time::ZERO,
            &view,
            from.as_ref(),
            to.as_mut(),
            Overrides::default(),
        );
        assert_eq!(
            (s.cwnd, s.ssthresh, s.in_flight),
            (40 * MSS, Some(30 * MSS), 12 * MSS)
        );
        assert_eq!(to.cwnd(), 40 * MSS);
        assert_eq!(to.ssthresh(), Some(30 * MSS));

        let mut to = build("newreno");
        hand_over(
            Time::ZERO,
            &view,
            from.as_ref(),
            to.as_mut(),
            Overrides {
                cwnd: Some(20 * MSS),
                ssthresh: Some(25 * MSS),
                ..Overrides::default()
            },
        );
        assert_eq!((to.cwnd(), to.ssthresh()), (20 * MSS, Some(25 * MSS)));

        // Slow start: the predecessor's threshold (30 MSS, below the window) is dropped.
        let mut to = build("newreno");
        let s = hand_over(
            Time::ZERO,
            &view,
            from.as_ref(),
            to.as_mut(),
            Overrides {
                cwnd: Some(50 * MSS),
                slow_start: true,
                ..Overrides::default()
            },
        );
        assert_eq!(s.ssthresh, None);
        assert_eq!(to.cwnd(), 50 * MSS);
        assert!(to.in_slow_start(), "ssthresh {:?}", to.ssthresh());
    }
}
