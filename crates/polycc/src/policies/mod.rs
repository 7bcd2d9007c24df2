//! Policies: controllers built from other controllers of the pool. A policy implements the same
//! [`CongestionControl`](crate::cc::CongestionControl) trait as a CCA, so policies compose.

pub mod auto;
pub mod handover;
pub mod janus;
pub mod poly;

use crate::registry::Registry;

/// Registers every policy of this module under its scenario name.
pub fn register_all(r: &mut Registry) {
    auto::register(r);
    janus::register(r);
    poly::register(r);
}
