//! The window LEDBAT and LEDBAT++ share: bytes in a float so that per-ACK fractions accumulate,
//! bounded by the flight of the last round trip plus ALLOWED_INCREASE (RFC 6817 §2.4.2), halved
//! at most once per RTT on loss (§2.4.2), clamped from outside and never below the minimum
//! window. Each controller computes its own growth; this file holds the bounds on it.

use super::ALLOWED_INCREASE;
use crate::algos::recent_flight::RecentFlight;
use crate::cc::{Calibration, MIN_WINDOW_PACKETS};
use crate::signals::{AckEvent, LossEvent, SentPacket};
use crate::units::{Bytes, Time};

/// Largest packet a transport can send (an IP datagram without jumbograms): bounds the packet size
/// learnt from sent packets.
const MAX_PACKET_BYTES: Bytes = 65_535;

#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// Packet size windows are counted in: the context's MSS, raised to the largest packet sent.
    /// A transport that counts headers in flight (the simulator sends MSS + header bytes) would
    /// otherwise fit only one packet into a "two-packet" window.
    pub(crate) mss: Bytes,
    /// Window in bytes, fractional so that sub-byte increments accumulate.
    pub(crate) cwnd: f64,
    /// Largest flight of the last round trip: what ALLOWED_INCREASE is counted above.
    flight: RecentFlight,
    /// Packets sent at or before this time belong to the last reduction's RTT: their losses do not
    /// halve the window again (the RFC's "at most once per RTT", judged by send time).
    recovery_start: Option<Time>,
    clamp: Option<Bytes>,
}

impl Window {
    pub(crate) fn new(mss: Bytes, cwnd: f64) -> Self {
        Window {
            mss,
            cwnd,
            flight: RecentFlight::default(),
            recovery_start: None,
            clamp: None,
        }
    }

    pub(crate) fn bytes(&self) -> Bytes {
        self.cwnd as Bytes
    }

    pub(crate) fn on_sent(&mut self, sent: &SentPacket) {
        self.flight.on_sent(sent.pn, sent.in_flight);
        self.mss = self.mss.max(sent.bytes.min(MAX_PACKET_BYTES));
    }

    pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
        self.flight.on_ack(ack.largest_acked, ack.prior_in_flight);
    }

    pub(crate) fn min(&self) -> f64 {
        (MIN_WINDOW_PACKETS * self.mss) as f64
    }

    /// The clamp, then the minimum window.
    pub(crate) fn bound(&mut self) {
        if let Some(c) = self.clamp {
            self.cwnd = self.cwnd.min(c as f64);
        }
        self.cwnd = self.cwnd.max(self.min());
    }

    /// RFC 6817 §2.4.2: never more than ALLOWED_INCREASE packets above the flight size.
    pub(crate) fn cap_at_flight(&mut self) {
        let max_allowed = self.flight.max() as f64 + ALLOWED_INCREASE * self.mss as f64;
        self.cwnd = self.cwnd.min(max_allowed);
    }

    /// RFC 6817 §2.4.2 loss response: `cwnd = max(cwnd/2, MIN_CWND)` (never a raise), at most
    /// once per RTT. Returns whether this loss began a new reduction.
    pub(crate) fn halve_once_per_rtt(&mut self, now: Time, loss: &LossEvent) -> bool {
        let new_epoch = self
            .recovery_start
            .is_none_or(|r| loss.largest_lost_sent_time > r);
        if new_epoch {
            self.recovery_start = Some(now);
            self.cwnd = self.cwnd.min((self.cwnd / 2.0).max(self.min()));
        }
        new_epoch
    }

    /// Takes a calibration's clamp and window (not bounded yet); returns whether it set the
    /// window. Neither controller paces, so a rate is left to the transport.
    pub(crate) fn calibrate(&mut self, c: &Calibration) -> bool {
        if let Some(clamp) = c.cwnd_clamp {
            self.clamp = clamp.bound();
        }
        if let Some(w) = c.cwnd {
            self.cwnd = w as f64;
        }
        c.cwnd.is_some()
    }
}
