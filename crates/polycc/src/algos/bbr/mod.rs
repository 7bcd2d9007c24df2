//! BBR: model-based congestion control that paces at the estimated bottleneck bandwidth and
//! bounds in-flight data by a multiple of the estimated BDP.
//!
//! - [`v1`]: BBR v1 (Linux `tcp_bbr.c`), registered as `bbr`.
//! - [`v3`]: BBR v3 (google/bbr v3, draft-ietf-ccwg-bbr), registered as `bbr3`.
//! - [`scavenger`]: BBR-S (Proteus SIGCOMM'20 §7.1), v1 that yields on RTT deviation, `bbr-s`.
//!
//! What v1 and v3 share, one concept a file (as s2n-quic's BBR): `bdp`, [`cwnd`] (growth and
//! bounds), [`pacing`], [`quantum`] (the TSO send quantum), `rounds` (round counting),
//! [`min_rtt`] (the filter and the PROBE_RTT clock), [`probe_rtt`] (the hold), `recovery`
//! (loss recovery's save / restore), `handover` (calibrate, hand over, adopt),
//! `ack_aggregation` (v3's, and v1's with `extra_acked`), `tx_records` (v3's), `prng`. This
//! machinery is crate-private; the public modules among them only carry the Linux constants they
//! are built on.

pub(crate) mod ack_aggregation;
pub(crate) mod bdp;
pub mod cwnd;
pub(crate) mod handover;
pub mod min_rtt;
pub mod pacing;
pub(crate) mod prng;
pub mod probe_rtt;
pub mod quantum;
pub(crate) mod recovery;
pub(crate) mod rounds;
pub mod scavenger;
pub(crate) mod tx_records;
pub mod v1;
pub mod v3;

#[cfg(test)]
mod tests;

use crate::registry::Registry;

/// Registers `bbr` (v1), `bbr-s` and `bbr3`.
pub fn register(r: &mut Registry) {
    v1::register(r);
    scavenger::register(r);
    v3::register(r);
}
