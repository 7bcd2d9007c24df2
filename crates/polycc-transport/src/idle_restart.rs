//! Restart after idle ([`crate::LossRules::idle_restart`]): a TCP sender that has been silent for
//! longer than its retransmission timeout no longer trusts its window, as Linux does it
//! (`tcp_slow_start_after_idle_check`, `tcp_cwnd_restart`; RFC 5681 §4.1, RFC 2861).

use crate::loss_rules::Timeouts;
use crate::sender::Sender;
use polycc::units::Time;
use polycc::Calibration;

impl<P: Copy> Sender<P> {
    /// Called as a packet leaves with nothing in flight: if the sender sent nothing for more
    /// than an RTO, the window is halved once per RTO of the silence, to no less than the
    /// restart window, and the threshold kept at no less than 3/4 of the old window, so slow
    /// start climbs back towards it.
    pub(crate) fn restart_after_idle(&mut self, now: Time) {
        let (Some(packets), Timeouts::Tcp { min_rto }) =
            (self.rules.idle_restart, self.rules.timeouts)
        else {
            return;
        };
        // Nothing was sent yet, or no RTT is known: there is no RTO to compare with.
        if self.ledger.end() == 0 || self.first_rtt_sample.is_none() {
            return;
        }
        let rto = self.tcp_rto(min_rto, 0);
        let mut idle = now - self.last_ack_eliciting;
        if idle <= rto {
            return;
        }
        let cwnd = self.cc.cwnd();
        let restart = (packets * self.config.max_datagram).min(cwnd);
        let mut w = cwnd;
        while idle > rto && w > restart {
            idle -= rto;
            w /= 2;
        }
        // Only a threshold below 3/4 of the window is written: an unset (infinite) one stays,
        // and so does HyStart, waiting for the first exit from slow start.
        let floor = cwnd / 2 + cwnd / 4;
        self.cc.calibrate(
            now,
            &Calibration {
                cwnd: Some(w.max(restart)),
                ssthresh: self.cc.ssthresh().filter(|s| *s < floor).map(|_| floor),
                ..Calibration::default()
            },
        );
    }
}
