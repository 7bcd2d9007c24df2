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

use crate::params::{Kind, ParamSpec};

/// The declared parameter of [`RecoveryPeriod`]'s TCP rule, for the family members that offer it.
pub(crate) const RECOVERY_SPANS_RETRANSMISSIONS: ParamSpec = ParamSpec::new(
    "recovery_spans_retransmissions",
    Kind::Bool,
    "the loss of a retransmission sent during recovery is no new congestion event (TCP's recovery; false: RFC 9002's)",
    "RFC 6675 §5 RecoveryPoint; Linux tcp_input.c TCP_CA_Recovery until snd_una >= high_seq",
);

/// The declared parameter of [`Prr`], for the family members that offer it.
pub(crate) const PRR: ParamSpec = ParamSpec::new(
    "prr",
    Kind::Bool,
    "in recovery the window follows proportional rate reduction instead of dropping to ssthresh at once",
    "RFC 6937; Linux tcp_input.c tcp_cwnd_reduction",
);
