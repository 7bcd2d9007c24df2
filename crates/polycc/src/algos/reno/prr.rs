//! Proportional rate reduction (RFC 6937), as Linux runs it in recovery for every controller
//! without its own `cong_control` (`net/ipv4/tcp_input.c` `tcp_init_cwnd_reduction`,
//! `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`).
//!
//! Without it the Reno family drops the window to ssthresh at once (RFC 9002 §7.3.2): nothing is
//! sent until the data in flight falls below ssthresh, and from then on every byte acknowledged
//! *or declared lost* is replaced at once. After a slow-start overshoot, where every other packet
//! of the last round was dropped, each ACK both acknowledges a packet and declares one lost, so the
//! sender refills at twice the bottleneck's rate, overflows the queue again and halves a second
//! time. PRR sends in proportion to what is *delivered*: ssthresh/prior_cwnd of it while more
//! than ssthresh is in flight (the reduction spread over a round trip), and no more than was
//! delivered (plus one segment) below it ("slow start" back up to ssthresh, the reduction bound).
//!
//! The window is what Linux writes on each ACK of the recovery: `pipe + sndcnt`, `pipe` being
//! the bytes in flight after the ACK and its losses. Deviation: Linux adds its extra segment
//! below ssthresh only when the ACK advanced `snd_una` and declared nothing lost; the controller
//! sees no cumulative ACK point, so here the condition is the second half alone.

use crate::units::Bytes;

/// One reduction's accounting (`tcp_sock` `prior_cwnd`, `prr_delivered`, `prr_out`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Prr {
    /// The window when the reduction began.
    prior_cwnd: Bytes,
    /// Bytes delivered (acknowledged or selectively acknowledged) since then.
    delivered: Bytes,
    /// Bytes sent since then.
    out: Bytes,
    /// A loss was declared since the last ACK (Linux `newly_lost`): no extra segment.
    newly_lost: bool,
}

impl Prr {
    /// `tcp_init_cwnd_reduction`: a reduction from `prior_cwnd` begins, with `pipe` bytes in
    /// flight once the losses that began it are taken out. Returns the window until the next
    /// ACK: `pipe` plus the one segment `tcp_cwnd_reduction` always lets out first ("force a
    /// fast retransmit upon entering fast recovery").
    pub(crate) fn begin(prior_cwnd: Bytes, pipe: Bytes, mss: Bytes) -> (Self, Bytes) {
        let prr = Prr {
            prior_cwnd: prior_cwnd.max(1),
            delivered: 0,
            out: 0,
            newly_lost: true,
        };
        (prr, pipe.saturating_add(mss))
    }

    /// `tp->prr_out += ...` in `tcp_event_data_sent`/`tcp_retransmit_skb`.
    pub(crate) fn on_sent(&mut self, bytes: Bytes) {
        self.out = self.out.saturating_add(bytes);
    }

    /// More losses during the reduction.
    pub(crate) fn on_loss(&mut self) {
        self.newly_lost = true;
    }

    /// `tcp_cwnd_reduction` on an ACK that delivered `delivered` bytes, leaving `pipe` in
    /// flight: the window for this ACK, or `None` when it delivered nothing (the window stays).
    pub(crate) fn on_ack(
        &mut self,
        delivered: Bytes,
        pipe: Bytes,
        ssthresh: Bytes,
        mss: Bytes,
    ) -> Option<Bytes> {
        let newly_lost = std::mem::take(&mut self.newly_lost);
        if delivered == 0 {
            return None;
        }
        self.delivered = self.delivered.saturating_add(delivered);
        let sndcnt = if pipe > ssthresh {
            // Proportional part: ceil(ssthresh · prr_delivered / prior_cwnd) − prr_out.
            let due = (ssthresh as u128 * self.delivered as u128).div_ceil(self.prior_cwnd as u128);
            (due.min(Bytes::MAX as u128) as Bytes).saturating_sub(self.out)
        } else {
            // Reduction bound: what was delivered and not yet sent back, at least this ACK's,
            // one segment more on a clean ACK, never past ssthresh.
            let mut n = self.delivered.saturating_sub(self.out).max(delivered);
            if !newly_lost {
                n = n.saturating_add(mss);
            }
            n.min(ssthresh - pipe)
        };
        let sndcnt = if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
        Some(pipe.saturating_add(sndcnt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;

    #[test]
    fn above_ssthresh_it_sends_ssthresh_over_prior_cwnd_of_what_is_delivered() {
        // A single loss from 100 packets, ssthresh 70 (CUBIC's β): 99 in flight.
        let (mut p, w) = Prr::begin(100 * MSS, 99 * MSS, MSS);
        assert_eq!(w, 100 * MSS, "the fast retransmit goes out at once");
        p.on_sent(MSS);
        // Ten ACKs of one packet each: 7 packets may go out in all (ceil(70·10/100) = 7),
        // one of which was the retransmission.
        let mut sent = MSS;
        let mut pipe = 100 * MSS;
        for _ in 0..10 {
            pipe -= MSS;
            let w = p.on_ack(MSS, pipe, 70 * MSS, MSS).expect("delivered");
            let n = w - pipe;
            p.on_sent(n);
            pipe += n;
            sent += n;
        }
        assert_eq!(sent, 7 * MSS);
        // Over the round trip (99 delivered): 70 sent, ending at ssthresh.
        for _ in 10..99 {
            pipe -= MSS;
            let w = p.on_ack(MSS, pipe, 70 * MSS, MSS).expect("delivered");
            let n = w - pipe;
            p.on_sent(n);
            pipe += n;
            sent += n;
        }
        assert_eq!(sent, 70 * MSS);
        assert_eq!(pipe, 70 * MSS);
    }

    #[test]
    fn below_ssthresh_an_ack_that_also_declares_a_loss_replaces_only_what_was_delivered() {
        // The overshoot: half of 200 packets lost, ssthresh 100, pipe 60 after the losses.
        let (mut p, _) = Prr::begin(200 * MSS, 60 * MSS, MSS);
        p.on_sent(MSS);
        // An ACK of one packet that also declares one lost: one packet out, not two.
        p.on_loss();
        assert_eq!(p.on_ack(MSS, 60 * MSS, 100 * MSS, MSS), Some(61 * MSS));
        p.on_sent(MSS);
        // A clean ACK of one packet: one more than delivered (slow start towards ssthresh).
        assert_eq!(p.on_ack(MSS, 60 * MSS, 100 * MSS, MSS), Some(62 * MSS));
        // Never past ssthresh.
        assert_eq!(
            p.on_ack(50 * MSS, 99 * MSS, 100 * MSS, MSS),
            Some(100 * MSS)
        );
        // An ACK that delivers nothing leaves the window.
        assert_eq!(p.on_ack(0, 10 * MSS, 100 * MSS, MSS), None);
    }
}
