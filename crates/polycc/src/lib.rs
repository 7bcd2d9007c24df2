//! polycc core: sans-IO congestion control.
//!
//! No I/O, no clock, no global state: every controller is a state machine driven by the events in
//! [`signals`] and read through the [`cc::CongestionControl`] trait. The same code runs in the
//! simulator, in QUIC and in user-space TCP shims.

pub mod algos;
pub mod cc;
pub mod estimators;
pub mod intent;
pub mod policies;
pub mod registry;
pub mod signals;
pub mod units;

pub use cc::{Calibration, CcContext, CongestionControl, HandoverState, MediaControl, Telemetry};
pub use intent::{Intent, IntentError};
pub use registry::{CcError, CcSpec, Params, Registry};
pub use signals::{
    AckEvent, Arrival, Feedback, FrameInfo, LossEvent, PacketOutcome, RateSample, SentPacket,
};
pub use units::{Bytes, Duration, Rate, Time};
