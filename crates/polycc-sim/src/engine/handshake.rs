//! TCP's handshake before a connection's data, for flows whose hosts open connections as Linux
//! does (`HostModel::handshake`): the sender's SYN crosses the data route, the receiver answers
//! at once with a SYN-ACK over the ACK route, and the data starts when the SYN-ACK arrives. The
//! round trip is the connection's first RTT sample, taken through whatever queue the path holds
//! then (a flow joining a full buffer starts from that RTT, as the kernel's does). A SYN or
//! SYN-ACK lost is retransmitted after the initial timeout, doubling each time.
//!
//! Not modelled: the sender's third packet (the pure ACK of the SYN-ACK, 52 bytes, which the
//! receiver needs only to move the connection to ESTABLISHED, and which the first data segment
//! would carry anyway), TCP Fast Open, and a connection given up after `tcp_syn_retries`: the
//! flow then stays idle, where the kernel's `connect` would fail.

use super::sender::Transfer;
use polycc::units::{Duration, Time};
use polycc::CongestionControl;

/// Bytes of a SYN or SYN-ACK on the wire: IPv4 (20) and TCP (20) headers and Linux's 20 bytes
/// of options (MSS 4, SACK permitted 2, timestamps 10, window scale 3, one NOP), as
/// `tcp_syn_options` / `tcp_synack_options` write them.
pub const SYN_WIRE_BYTES: u32 = 60;
/// The timeout before the first SYN retransmission (RFC 6298 §2.1, Linux `TCP_TIMEOUT_INIT`).
pub const SYN_TIMEOUT: Duration = Duration::from_secs(1);
/// Retransmissions of a SYN before the connection is given up (Linux's `tcp_syn_retries`
/// default).
pub const SYN_RETRIES: u32 = 6;

/// What starts once the handshake is done: the transfer, on a fresh controller when the
/// connection is a new one after the flow's first.
pub struct Pending {
    pub transfer: Transfer,
    pub cc: Option<Box<dyn CongestionControl>>,
}

/// A connection waiting for its SYN-ACK.
pub struct Handshake {
    /// SYNs sent before the one in flight (0 for the first).
    pub retries: u32,
    /// When the SYN in flight is retransmitted.
    pub deadline: Time,
    pub pending: Pending,
}

impl Handshake {
    /// The handshake of a connection whose first SYN leaves at `now`.
    pub fn new(now: Time, pending: Pending) -> Self {
        Handshake {
            retries: 0,
            deadline: now + SYN_TIMEOUT,
            pending,
        }
    }

    /// The SYN in flight timed out at `now`: whether to send another (the deadline then moves
    /// on by the doubled timeout).
    pub fn retransmit(&mut self, now: Time) -> bool {
        if self.retries >= SYN_RETRIES {
            return false;
        }
        self.retries += 1;
        self.deadline = now + Duration(SYN_TIMEOUT.0 << self.retries);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syn_timeout_doubles_and_ends_after_the_retries() {
        let t0 = Time::ZERO;
        let pending = Pending {
            transfer: Transfer {
                first: 0,
                end: 1,
                last_payload: 1,
            },
            cc: None,
        };
        let mut h = Handshake::new(t0, pending);
        assert_eq!(h.deadline, t0 + Duration::from_secs(1));
        let mut waits = vec![];
        let mut now = h.deadline;
        while h.retransmit(now) {
            waits.push((h.deadline - now).as_secs_f64());
            now = h.deadline;
        }
        // Linux: 1, 2, 4, ... 64 s; connect gives up 127 s after the first SYN.
        assert_eq!(waits, [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]);
        assert_eq!(now, t0 + Duration::from_secs(127));
    }
}
