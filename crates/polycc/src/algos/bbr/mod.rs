//! BBR: model-based congestion control that paces at the estimated bottleneck bandwidth and
//! bounds in-flight data by a multiple of the estimated BDP.
//!
//! - [`v1`]: BBR v1 (Linux `tcp_bbr.c`), registered as `bbr`.
//! - [`v3`]: BBR v3 (google/bbr v3, draft-ietf-ccwg-bbr), registered as `bbr3`.
//! - [`scavenger`]: BBR-S (Proteus SIGCOMM'20 §7.1), v1 that yields on RTT deviation, `bbr-s`.
//! - [`model`]: what both share: BDP and quantization budget, the min-RTT filter and PROBE_RTT
//!   clock, loss-recovery save / restore, the ACK-aggregation estimator, send records, the PRNG.
//!
//! Rounds are counted by packet number (`algos/round.rs`), which is Linux's
//! `next_rtt_delivered` expressed with QUIC packet numbers; a round advances only on ACKs that
//! carry a valid delivery-rate sample, as in Linux.

pub mod model;
pub mod scavenger;
pub mod v1;
pub mod v3;

#[cfg(test)]
mod tests;

use crate::registry::Registry;

/// Registers `bbr` (v1), `bbr-s` and `bbr3`.
pub fn register(r: &mut Registry) {
    r.register(v1::NAME, v1::SUMMARY, v1::build);
    r.register(scavenger::NAME, scavenger::SUMMARY, scavenger::build);
    r.register(v3::NAME, v3::SUMMARY, v3::build);
}
