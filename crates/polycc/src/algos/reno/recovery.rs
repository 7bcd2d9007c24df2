//! The recovery period of RFC 9002 §7.3.2 (RFC 6582's one reduction per window of data), and
//! TCP's reading of it for retransmissions ([`RecoveryPeriod::spanning_retransmissions`]).

use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::Time;

/// One reduction per congestion event: losses of packets sent before the period began belong to
/// the event already answered, and ACKs of such packets do not grow the window.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecoveryPeriod {
    /// RFC 9002's congestion_recovery_start_time: packets sent at or before it belong to the last
    /// period. Kept after the period ends, so a late loss of such a packet is not a new event.
    start: Option<Time>,
    /// The telemetry's "recovery": from a reduction until an ACK ends it (see
    /// [`RecoveryPeriod::follow`] and [`RecoveryPeriod::end`] for the two readings).
    active: bool,
    /// `Some` when the period spans its retransmissions (TCP's recovery): the packet numbers of
    /// the retransmissions sent since it began, in increasing order. `None`: RFC 9002's rule.
    retransmissions: Option<Vec<u64>>,
}

impl RecoveryPeriod {
    /// TCP's recovery period: it lasts until the data outstanding when it began is acknowledged
    /// (RFC 6675 §5's RecoveryPoint; Linux stays in `TCP_CA_Recovery` until `snd_una` reaches
    /// `high_seq`, `tcp_input.c` `tcp_try_undo_recovery`/`tcp_fastretrans_alert`). A
    /// retransmission carries such data, so its loss, however late it is found, belongs to the
    /// event already answered. RFC 9002 gives a retransmission a new packet number sent after the
    /// period began, which makes its loss a new event: after a slow-start overshoot, where the
    /// first retransmissions meet a still-full queue, that halves the window a second time.
    pub(crate) fn spanning_retransmissions() -> Self {
        RecoveryPeriod {
            retransmissions: Some(Vec::new()),
            ..RecoveryPeriod::default()
        }
    }

    /// A packet left: a retransmission sent since the period began is recorded when the period
    /// spans them.
    pub(crate) fn on_sent(&mut self, sent: &SentPacket) {
        if let (Some(v), Some(_)) = (self.retransmissions.as_mut(), self.start) {
            if sent.is_retransmission {
                v.push(sent.pn);
            }
        }
    }

    /// The packet `pn` is a retransmission of this period (only when it spans them).
    fn holds(&self, pn: u64) -> bool {
        self.retransmissions
            .as_ref()
            .is_some_and(|v| v.binary_search(&pn).is_ok())
    }

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
    /// When the period spans its retransmissions, the loss of one of them is not.
    pub(crate) fn is_new_event(&self, loss: &LossEvent) -> bool {
        self.start.is_none_or(|r| loss.largest_lost_sent_time > r)
            && !self.holds(loss.largest_lost_pn)
    }

    pub(crate) fn begin(&mut self, now: Time) {
        self.start = Some(now);
        self.active = true;
        if let Some(v) = self.retransmissions.as_mut() {
            v.clear();
        }
    }

    /// Persistent congestion (RFC 9002 §7.6.2) leaves recovery and forgets its start.
    pub(crate) fn reset(&mut self) {
        let spans = self.retransmissions.is_some();
        *self = if spans {
            RecoveryPeriod::spanning_retransmissions()
        } else {
            RecoveryPeriod::default()
        };
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

    fn retransmission(pn: u64) -> SentPacket {
        SentPacket {
            pn,
            bytes: 1000,
            is_retransmission: true,
            ..SentPacket::default()
        }
    }

    #[test]
    fn a_lost_retransmission_is_a_new_event_unless_the_period_spans_them() {
        for (mut r, new_event) in [
            (RecoveryPeriod::default(), true),
            (RecoveryPeriod::spanning_retransmissions(), false),
        ] {
            r.on_sent(&retransmission(3)); // before any period: not recorded
            r.begin(at(10));
            r.on_sent(&retransmission(20));
            r.on_sent(&SentPacket {
                pn: 21,
                bytes: 1000,
                ..SentPacket::default()
            });
            // The retransmission, sent at 12 ms, is found lost at 100 ms.
            assert_eq!(r.is_new_event(&loss(20, at(12), 1000, 1000)), new_event);
            // New data sent during the period still starts a new event when lost.
            assert!(r.is_new_event(&loss(21, at(12), 1000, 1000)));
            // The next period forgets the last one's retransmissions.
            r.begin(at(200));
            assert!(r.is_new_event(&loss(20, at(201), 1000, 1000)));
            r.reset();
            assert_eq!(r.retransmissions.is_some(), !new_event);
        }
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
