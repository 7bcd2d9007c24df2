//! What the Reno family shares, written once, as Linux shares `tcp_slow_start`,
//! `tcp_cong_avoid_ai` and `tcp_reno_ssthresh` across `tcp_cong.c`'s users.
//!
//! NewReno, CUBIC, H-TCP, Illinois, Hybla, Westwood+ and Vegas differ in their increase rule,
//! their decrease factor and the state those need; the rest is one mechanism:
//! - [`RecoveryPeriod`] (`recovery.rs`): RFC 9002 §7.3.2's one reduction per congestion event;
//! - [`Prr`] (`prr.rs`): proportional rate reduction in recovery (RFC 6937, Linux), an option
//!   of the window;
//! - [`RenoWindow`] (`window.rs`): the window, the threshold and their bounds, slow start, the
//!   multiplicative decrease, the persistent-congestion collapse and the telemetry preamble;
//! - [`AiCredit`] and [`ByteCarry`] (`growth.rs`): the two ways the family accumulates
//!   congestion-avoidance growth smaller than a step (whole MSS steps, or fractions of a byte);
//! - [`RenoFamily`] (`family.rs`): the loss, calibration and hand-over sequences, with hooks where
//!   each controller adds its own state, and [`reno_family_methods`] to put them in a
//!   [`CongestionControl`](crate::cc::CongestionControl) impl.

mod family;
mod growth;
mod prr;
mod recovery;
mod window;

pub(crate) use family::{reno_family_methods, reno_window_in, RenoFamily};
pub(crate) use growth::{AiCredit, ByteCarry};
pub(crate) use prr::Prr;
pub(crate) use recovery::RecoveryPeriod;
pub(crate) use window::{millis_or_nan, RenoWindow, RENO_BETA};
