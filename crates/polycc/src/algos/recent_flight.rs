//! The largest flight size of the last round trip: the "flightsize in the previous RTT" that
//! RFC 6817 §2.5 bounds LEDBAT's window growth by (ALLOWED_INCREASE).
//!
//! Reading the flight size off one ACK instead (bytes in flight just before it) is right only
//! for a sender that refills its window the moment an ACK opens it. A paced sender releases
//! packets on a timer, so between two sends the flight dips below the window, and more so when
//! delay jitter bunches ACKs together: capping at that dip ratchets the window down with every
//! burst of ACKs (paced LEDBAT alone on a 50 Mbit/s, 30 ms path with 5 ms of jitter fell to
//! 4.7 Mbit/s). The largest flight seen over the current and the previous round is what the
//! window actually carried, and still keeps an application-limited sender from growing a window
//! it does not use (the RFC's purpose), like Linux's `tcp_is_cwnd_limited` window of a round.

use crate::algos::round::RoundTracker;
use crate::units::Bytes;

#[derive(Clone, Debug, Default)]
pub(crate) struct RecentFlight {
    rounds: RoundTracker,
    this_round: Bytes,
    last_round: Bytes,
}

impl RecentFlight {
    /// A packet left; `in_flight` counts it.
    pub(crate) fn on_sent(&mut self, pn: u64, in_flight: Bytes) {
        self.rounds.on_sent(pn);
        self.this_round = self.this_round.max(in_flight);
    }

    /// An ACK arrived with `prior_in_flight` bytes outstanding before it (which also covers a
    /// transport that never reports sends).
    pub(crate) fn on_ack(&mut self, largest_acked: u64, prior_in_flight: Bytes) {
        self.this_round = self.this_round.max(prior_in_flight);
        if self.rounds.on_ack(largest_acked) {
            self.last_round = std::mem::take(&mut self.this_round);
            // The flight this ACK saw belongs to the new round too.
            self.this_round = prior_in_flight;
        }
    }

    /// Largest flight over the current and the previous round.
    pub(crate) fn max(&self) -> Bytes {
        self.this_round.max(self.last_round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_peak_of_the_last_round_through_a_dip() {
        let mut f = RecentFlight::default();
        for pn in 0..10 {
            f.on_sent(pn, (pn + 1) * 1000);
        }
        f.on_ack(0, 10_000);
        // A burst of ACKs drains the flight to 2 000 bytes before the pacer sends again.
        for pn in 1..9 {
            f.on_ack(pn, 10_000 - pn * 1000);
        }
        assert_eq!(f.max(), 10_000);
        // Two rounds of a sender that now keeps only 3 000 bytes out: the old peak ages out.
        for round in 0..2u64 {
            let base = 10 + round * 3;
            for pn in base..base + 3 {
                f.on_sent(pn, 3000);
            }
            for pn in base..base + 3 {
                f.on_ack(pn, 3000);
            }
        }
        assert_eq!(f.max(), 3000);
    }
}
