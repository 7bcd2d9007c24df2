//! The recovery period of RFC 9002 §7.3.2 (RFC 6582's one reduction per window of data).

use crate::signals::{AckEvent, LossEvent};
use crate::units::Time;

/// One reduction per congestion event: losses of packets sent before the period began belong to
/// the event already answered, and ACKs of such packets do not grow the window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RecoveryPeriod {
    /// RFC 9002's congestion_recovery_start_time: packets sent at or before it belong to the last
    /// period. Kept after the period ends, so a late loss of such a packet is not a new event.
    start: Option<Time>,
    /// The telemetry's "recovery": from a reduction until an ACK ends it (see
    /// [`RecoveryPeriod::follow`] and [`RecoveryPeriod::end`] for the two readings).
    active: bool,
}

impl RecoveryPeriod {
    pub(crate) fn is_active(&self) -> bool {
        self.active
    }

    /// RFC 9002 InCongestionRecovery: `sent` is at or before the start of the last period.
    pub(crate) fn covers(&self, sent: Time) -> bool {
        self.start.is_some_and(|r| sent <= r)
    }

    /// Judges the period by this ACK alone: active exactly while ACKs are of packets sent before
    /// it began (a reordered old ACK re-enters it). Returns whether it is active.
    pub(crate) fn follow(&mut self, ack: &AckEvent) -> bool {
        self.active = self.covers(ack.largest_acked_sent_time);
        self.active
    }

    /// Ends the period for good, for controllers that call it over at the first ACK of a packet
    /// sent after it began (old ACKs are then ignored, not counted as recovery). Returns whether
    /// it was active, so the caller can restart what it paused.
    pub(crate) fn end(&mut self) -> bool {
        std::mem::take(&mut self.active)
    }

    /// A loss of a packet sent after the last period began is a new congestion event.
    pub(crate) fn is_new_event(&self, loss: &LossEvent) -> bool {
        self.start.is_none_or(|r| loss.largest_lost_sent_time > r)
    }

    pub(crate) fn begin(&mut self, now: Time) {
        self.start = Some(now);
        self.active = true;
    }

    /// Persistent congestion (RFC 9002 §7.6.2) leaves recovery and forgets its start.
    pub(crate) fn reset(&mut self) {
        *self = RecoveryPeriod::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::test_support::{ack, loss};
    use crate::estimators::rtt::RttSnapshot;
    use crate::units::Duration;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    fn ack_of_packet_sent_at(ms: u64) -> AckEvent {
        ack(
            0,
            at(ms),
            1000,
            1000,
            Duration::from_millis(1),
            RttSnapshot::default(),
        )
    }

    #[test]
    fn one_event_per_period() {
        let mut r = RecoveryPeriod::default();
        assert!(r.is_new_event(&loss(0, at(5), 1000, 1000)));
        r.begin(at(10));
        assert!(!r.is_new_event(&loss(0, at(10), 1000, 1000)));
        assert!(r.is_new_event(&loss(0, at(11), 1000, 1000)));
        r.reset();
        assert!(r.is_new_event(&loss(0, at(5), 1000, 1000)));
    }

    #[test]
    fn follow_reenters_on_an_old_ack_and_end_does_not() {
        let mut r = RecoveryPeriod::default();
        r.begin(at(10));
        assert!(r.follow(&ack_of_packet_sent_at(9)));
        assert!(!r.follow(&ack_of_packet_sent_at(11)));
        assert!(r.follow(&ack_of_packet_sent_at(9)), "a reordered old ACK");
        // The other reading: once ended, an old ACK is ignored by the caller (`covers`) and
        // the period stays over.
        assert!(r.end());
        assert!(r.covers(at(9)) && !r.is_active());
        assert!(!r.end());
    }
}
