//! Round-trip counting by packet number, shared by the CCAs that act once per round (HyStart++,
//! Vegas).
//!
//! A round that starts now ends when a packet sent after this moment is acknowledged: TCP's
//! `beg_snd_nxt` / `windowEnd = SND.NXT` (RFC 9406 §4.2), expressed with QUIC-style packet numbers
//! that increase with every send, retransmissions included.

/// Tracks where the current round ends.
#[derive(Clone, Debug, Default)]
pub(crate) struct RoundTracker {
    /// Largest packet number seen sent or acknowledged. Acked numbers count too so that a
    /// transport that never calls `on_sent` still gets rounds of at least one ACK.
    largest_pn: Option<u64>,
    /// The round ends when a packet number at or above this one is acknowledged; `None` before
    /// the first round has started.
    end_pn: Option<u64>,
}

impl RoundTracker {
    pub(crate) fn on_sent(&mut self, pn: u64) {
        self.largest_pn = Some(self.largest_pn.map_or(pn, |p| p.max(pn)));
    }

    /// Starts a round now: it ends once a packet sent from now on is acknowledged.
    pub(crate) fn start(&mut self) {
        self.end_pn = Some(self.largest_pn.map_or(0, |p| p.saturating_add(1)));
    }

    /// Ends the current round once packet number `pn` or a later one is acknowledged.
    pub(crate) fn end_at(&mut self, pn: u64) {
        self.end_pn = Some(pn);
    }

    /// Feeds the largest packet number an ACK newly acknowledges. Returns true when that ends the
    /// current round, in which case the next round has already been started; the very first ACK
    /// starts the first round and also returns true.
    pub(crate) fn on_ack(&mut self, largest_acked: u64) -> bool {
        self.on_sent(largest_acked);
        match self.end_pn {
            Some(end) if largest_acked < end => false,
            _ => {
                self.start();
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_ends_when_a_packet_sent_after_its_start_is_acked() {
        let mut r = RoundTracker::default();
        for pn in 0..10 {
            r.on_sent(pn);
        }
        // The first ACK opens the first round, which ends at pn 10 (the next one sent).
        assert!(r.on_ack(0));
        for pn in 1..10 {
            assert!(!r.on_ack(pn), "pn {pn} was sent before the round began");
        }
        for pn in 10..20 {
            r.on_sent(pn);
        }
        assert!(r.on_ack(10));
        // The round begun by pn 10's ACK ends at pn 20.
        assert!(!r.on_ack(19));
        r.on_sent(20);
        assert!(r.on_ack(20));
    }

    #[test]
    fn without_sends_every_new_ack_ends_a_round() {
        let mut r = RoundTracker::default();
        assert!(r.on_ack(5));
        assert!(!r.on_ack(5));
        assert!(r.on_ack(6));
    }
}
