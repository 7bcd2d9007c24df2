//! The sending half of a reliable transport as a sans-IO state machine, driving one polycc
//! congestion controller ([`polycc::CongestionControl`]: any CCA or policy).
//!
//! A [`Sender`] keeps the sent-packet ledger and does what RFC 9002 asks of a sender: RTT
//! estimation (§5), loss detection by packet and time threshold (§6.1) with RACK's reordering
//! window once a loss proved spurious (RFC 8985 §6.2), the probe timeout (§6.2), persistent
//! congestion (§7.6), delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation, Linux
//! `tcp_rate.c`), application-limited marks and pacing. It has no clock, socket or random source:
//! every call takes `now`, and the caller sends, receives and sets its one timer. The polycc
//! simulator drives every flow through it; real transports (QUIC, TCP shims) do the same, so a
//! controller sees the same events in both.
//!
//! # Embedding
//!
//! ```
//! use polycc::{CcContext, CcSpec, Registry, Time, Duration};
//! use polycc_transport::{AckInfo, Config, Outgoing, PacketEvent, SendPermit, Sender};
//!
//! const DATAGRAM: u64 = 1200;
//! let cc = Registry::standard()
//!     .build(&CcSpec::named("cubic"), &CcContext::new(DATAGRAM))
//!     .expect("cubic is registered");
//! let config = Config {
//!     max_datagram: DATAGRAM,
//!     max_ack_delay: Duration::from_millis(25),
//!     pacing_fallback: true,
//!     rwnd: u64::MAX,
//! };
//! // The payload tag is the caller's: here the stream offset each packet carries.
//! let mut sender: Sender<u64> = Sender::new(cc, config);
//! let t0 = Time::ZERO + Duration::from_millis(1);
//!
//! // Send while the window and pacing allow (the initial window: 10 packets here).
//! let mut offset = 0;
//! while sender.poll_send(t0, DATAGRAM) == SendPermit::Now {
//!     let pn = sender.next_pn();
//!     let p = Outgoing { pn, bytes: DATAGRAM, ack_eliciting: true, retransmission: false, payload: offset };
//!     sender.on_packet_sent(t0, p).expect("packet numbers increase");
//!     offset += DATAGRAM;
//! }
//! assert_eq!(sender.in_flight(), 10 * DATAGRAM);
//!
//! // An ACK frame for packets 0..=9 arrives 40 ms later.
//! let t1 = t0 + Duration::from_millis(40);
//! let mut acked = Vec::new();
//! let info = AckInfo { largest: 9, ..AckInfo::default() };
//! let out = sender
//!     .on_ack_received(t1, &[0..=9], info, &mut |ev| {
//!         if let PacketEvent::Acked { payload, .. } = ev {
//!             acked.push(payload); // release the stream data it carried
//!         }
//!     })
//!     .expect("a valid ACK");
//! assert_eq!((out.acked_packets, acked.len()), (10, 10));
//! assert_eq!(out.rtt_sample, Some(Duration::from_millis(40)));
//! // Slow start: the window grew by what was acknowledged.
//! assert_eq!(sender.controller().cwnd(), 20 * DATAGRAM);
//!
//! // Arm the connection's timer for `next_timeout()`; when it fires, call `on_timeout`, and
//! // resend the payload of every `PacketEvent::Lost` in a new packet.
//! assert!(sender.next_timeout().is_none()); // nothing in flight, no controller timer
//! ```
//!
//! # The event-order contract
//!
//! A controller can rely on this order; every transport that drives polycc controllers keeps it
//! (the simulator does, through this crate), and `tests/event_order.rs` checks it with scripted
//! ACK frames.
//!
//! 1. **Sent.** [`on_sent`](polycc::CongestionControl::on_sent) once per ack-eliciting packet,
//!    after the packet is counted in flight (`SentPacket::in_flight` includes it). The pacing
//!    rate that spaces the packet after it is read just before this call.
//! 2. **One ACK**, in this order:
//!    1. [`on_packet_acked`](polycc::CongestionControl::on_packet_acked) for each newly
//!       acknowledged packet, in the order of the ACK's ranges (only for controllers that ask
//!       for packet detail);
//!    2. [`on_feedback`](polycc::CongestionControl::on_feedback) with the receiver's arrival
//!       times, when the ACK carries some and the controller asks for them;
//!    3. the losses this ACK reveals: [`on_packet_lost`](polycc::CongestionControl::on_packet_lost)
//!       per packet (with detail), then **one** [`on_loss`](polycc::CongestionControl::on_loss)
//!       for the pass; **losses come just before the ACK that declared them**, so a controller
//!       deciding on a window reduction still has the state from before this ACK's growth;
//!    4. **one** [`on_ack`](polycc::CongestionControl::on_ack), whose `in_flight` already
//!       excludes the packets just declared lost (`prior_in_flight` is before the ACK).
//!
//!    The RTT estimator and the delivery-rate sample are updated before any of these calls
//!    (from the largest acknowledged packet, RFC 9002 §5.1). An ACK that newly acknowledges
//!    nothing makes no call.
//! 3. **Losses by timer.** When the time threshold expires without an ACK, the same loss calls
//!    as in 2.3 come alone, with no `on_ack` after them.
//! 4. **Persistent congestion** is a flag of the [`LossEvent`](polycc::LossEvent) that declares
//!    it; the RTT estimator's minimum is reset first (RFC 9002 §5.2).
//! 5. **Probe timeouts** are not shown to the controller: the sender may send
//!    [`PTO_PROBES`] packets beyond the window, and the PTO backs off until an ACK.
//! 6. **Spurious losses** (a packet acknowledged after it was declared lost) are not shown to
//!    the controller (there is no undo); they switch loss detection to RACK's time rule.
//! 7. **Timers.** [`on_timer`](polycc::CongestionControl::on_timer) is called at or after
//!    [`next_timer`](polycc::CongestionControl::next_timer), never from inside another event.
//!
//! # What is the caller's
//!
//! Stream data and what to resend (a [`PacketEvent::Lost`] hands back the tag of what a lost
//! packet carried), the receive side, the choice of packet numbers (increasing; skipped ones
//! are remembered, and an ACK of one is rejected), ACK frequency, and one timer.

#![warn(missing_docs)]

mod ack;
mod idle_restart;
mod ledger;
mod loss;
mod loss_rules;
mod pacer;
pub mod reordering;
mod sender;

pub use ack::{AckError, AckInfo, AckOutcome, EcnCounts, PacketEvent};
pub use loss::{
    LossOutcome, Timeout, LOST_RECORD_PTOS, PERSISTENT_CONGESTION_THRESHOLD, PTO_PROBES,
};
pub use loss_rules::{
    LossRules, Timeouts, TCP_INIT_CWND, TCP_RTO_MAX, TCP_RTO_MIN, TCP_TIMEOUT_MIN,
};
pub use pacer::{tso_autosize, Pacer, PacingClock, MIN_TSO_SEGS, UNPACED_FIRST_PACKETS};
pub use sender::{
    fallback_pacing_rate, Config, Outgoing, SendError, SendPermit, Sender, PACING_CA_RATIO,
    PACING_SS_RATIO,
};
