//! Round-trip counting as Linux `bbr_update_bw` does it: by packet number (`algos/round.rs`,
//! Linux's `next_rtt_delivered`), advancing only on ACKs that carry a valid delivery-rate sample.

use crate::algos::round::RoundTracker;
use crate::signals::RateSample;

/// BBR's round counter: a round ends when a packet sent after the previous round ended is
/// acknowledged by an ACK with a valid rate sample.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    tracker: RoundTracker,
    /// Rounds ended so far (Linux `rtt_cnt`): the max-bandwidth filter's clock.
    pub count: u64,
    /// The last ACK ended a round (Linux `round_start`).
    pub start: bool,
    /// A hand-over started a round that ends with the first packet sent after it.
    awaiting_send: bool,
}

impl Rounds {
    /// Notes a sent packet's number: the round in progress ends once one sent later is acked.
    pub fn on_sent(&mut self, pn: u64) {
        self.tracker.on_sent(pn);
        if self.awaiting_send {
            self.awaiting_send = false;
            self.tracker.end_at(pn);
        }
    }

    /// Taking a flow over: the first round ends once the first packet sent from now on is
    /// acknowledged, as Linux's `bbr_init` sets `next_rtt_delivered` to the delivered count on a
    /// switch. Without it the packets in flight, all sent before, ended a round each as they were
    /// acknowledged (the tracker knows no number above theirs until this instance sends), so
    /// STARTUP saw three rounds without growth within a few ACKs and took the predecessor's rate
    /// for the pipe's (`auto` handing CUBIC's 1 Mbit/s of a 10-Mbit/s, 600-ms lossy path to BBR
    /// v1: PROBE_BW within 0.1 s, 1.2 Mbit/s 8 s later; SUITE.md).
    pub fn restart_at_next_send(&mut self) {
        self.tracker.end_at(u64::MAX);
        self.awaiting_send = true;
    }

    /// Whether this ACK ends a round (only one with a valid rate sample can).
    pub fn on_ack(&mut self, sample: Option<&RateSample>, largest_acked: u64) -> bool {
        self.start = false;
        if sample.is_some() && self.tracker.on_ack(largest_acked) {
            self.count += 1;
            self.start = true;
        }
        self.start
    }

    /// Starts a round now: it ends once a packet sent from now on is acknowledged.
    pub fn restart(&mut self) {
        self.tracker.start();
    }
}
