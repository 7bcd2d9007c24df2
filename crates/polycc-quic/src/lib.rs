//! Every polycc controller and policy driving a real QUIC connection: an adapter from
//! s2n-quic's congestion-controller interface (feature `unstable-congestion-controller`, pinned
//! to s2n-quic 1.91.0) to [`polycc::CongestionControl`], and the endpoints of the
//! `polycc-quic` binary (bulk and sized transfers with an end-to-end checksum, real-time video
//! over datagrams, receiver timing).
//!
//! - [`Polycc`] is the provider given to an s2n-quic endpoint: it builds the controller a
//!   [`polycc::CcSpec`] names for every path ([`SpecError`] when the registry rejects it), or
//!   takes them from the caller's [`ControllerFactory`] (`Polycc::from_factory`);
//! - [`ControllerHandle`] is the application's side of one connection's controller:
//!   `set_intent` at any time (taken at the controller's next event), `telemetry()` and
//!   `stats()` (published every 10 ms of connection time and when it ends);
//! - [`timing`] carries receiver-side timing for the controllers that take it: the receiving
//!   endpoint's arrival reports ([`report`]) on a unidirectional stream, paired at the sender
//!   with the packets the controller was told of ([`TimingEvents`] on both endpoints);
//! - `adapter` maps s2n's calls to polycc's events with the simulator's semantics (its module
//!   docs list what s2n does not hand over and what the adapter builds from polycc-transport).

#![warn(missing_docs)]

pub mod ack_delay;
pub mod adapter;
pub mod clock;
pub mod controller;
pub mod endpoint;
pub mod endpoints;
pub mod fec;
pub mod handle;
pub mod ledger;
pub mod media_datagrams;
pub mod relay;
pub mod report;
pub mod timing;
pub mod transfer;
pub mod video_endpoints;
pub mod video_frames;
pub mod video_packet;

pub use adapter::{AdapterStats, Core};
pub use controller::PolyccController;
pub use endpoint::{parse_spec, ControllerFactory, Handles, Polycc, SpecError, INITIAL_DATAGRAM};
pub use handle::{ControllerHandle, Snapshot};
pub use s2n_quic;
pub use timing::TimingEvents;
