//! polycc core: sans-IO congestion control.
//!
//! No I/O, no clock, no global state: every controller (a CCA such as CUBIC or BBR, or a policy
//! over several, such as Janus or a PolyCC pool) is a state machine driven by the events in
//! [`signals`] and read through the [`CongestionControl`] trait. The same code runs in the
//! simulator, in QUIC and in kernel-TCP shims.
//!
//! # Embedding a controller in a transport
//!
//! A transport builds a controller by name from the [`Registry`], tells it what it sends, what
//! is acknowledged and what is lost, and reads back a window and a pacing rate. The transport
//! owns the clock and passes `now` into every call:
//!
//! ```
//! use polycc::estimators::rtt::RttEstimator;
//! use polycc::{AckEvent, CcContext, CcSpec, Duration, LossEvent, Registry, SentPacket, Time};
//!
//! const MSS: u64 = 1200; // bytes of a full datagram on the wire: "one packet"
//! let spec: CcSpec = serde_json::from_str(r#"{ "name": "cubic", "beta": 0.7 }"#).unwrap();
//! let mut cc = Registry::standard()
//!     .build(&spec, &CcContext::new(MSS))
//!     .expect("cubic takes beta");
//! assert_eq!(cc.cwnd(), 10 * MSS); // RFC 9002's initial window
//!
//! // Ten packets leave at 1 s.
//! let t0 = Time::ZERO + Duration::from_secs(1);
//! for pn in 0..10 {
//!     let sent = SentPacket { pn, bytes: MSS, in_flight: (pn + 1) * MSS, ..SentPacket::default() };
//!     cc.on_sent(t0, &sent);
//! }
//! // One ACK for all ten, 50 ms later. The transport keeps the RTT estimator (RFC 9002 §5).
//! let t1 = t0 + Duration::from_millis(50);
//! let mut rtt = RttEstimator::new();
//! rtt.update(t1, Duration::from_millis(50), Duration::ZERO);
//! let ack = AckEvent {
//!     acked_bytes: 10 * MSS,
//!     acked_packets: 10,
//!     largest_acked: 9,
//!     largest_acked_sent_time: t0,
//!     min_rtt_sample: Some(Duration::from_millis(50)),
//!     max_rtt_sample: Some(Duration::from_millis(50)),
//!     rtt: rtt.snapshot(),
//!     prior_in_flight: 10 * MSS,
//!     in_flight: 0,
//!     mss: MSS,
//!     ..AckEvent::default()
//! };
//! cc.on_ack(t1, &ack);
//! assert_eq!(cc.cwnd(), 20 * MSS); // slow start: +1 packet per packet acknowledged
//!
//! // A loss (reported just before the ACK that revealed it): CUBIC keeps beta of its window.
//! let loss = LossEvent { lost_bytes: MSS, lost_packets: 1, largest_lost_pn: 10, mss: MSS, ..LossEvent::default() };
//! cc.on_loss(t1, &loss);
//! assert_eq!(cc.cwnd(), 14 * MSS);
//! // Send while in-flight bytes stay under `cc.cwnd()`, spaced at `cc.pacing_rate()` when it
//! // gives one (CUBIC leaves pacing to the transport: `None`).
//! assert!(cc.pacing_rate().is_none());
//! ```
//!
//! The events must come in the order the [`CongestionControl`] trait documents. Rather than
//! assembling them by hand, a transport can use the `polycc-transport` crate: a sans-IO sender
//! (sent-packet ledger, RFC 9002 loss detection and PTO, RACK, delivery-rate samples, pacing)
//! that turns packets sent, ACK frames and timeouts into exactly these calls. Controllers that
//! need receiver timestamps (LEDBAT, GCC, PIBES) also take [`Feedback`]; policies read the
//! application's [`Intent`].

#![warn(missing_docs)]

pub mod algos;
pub mod cc;
pub mod estimators;
pub mod intent;
pub mod params;
pub mod policies;
pub mod registry;
pub mod signals;
pub mod units;

pub use cc::{
    Calibration, CcContext, ClampChange, CongestionControl, HandoverState, MediaControl, Telemetry,
};
pub use intent::{Intent, IntentError};
pub use registry::{CcError, CcSpec, Params, Registry};
pub use signals::{
    AckEvent, Arrival, Feedback, FrameInfo, LossEvent, PacketOutcome, RateSample, SentPacket,
};
pub use units::{Bytes, Duration, Rate, Time};
