//! The algorithm pool: one file per controller.

pub mod newreno;

use crate::registry::Registry;

/// Registers every algorithm of this module under its scenario name.
pub fn register_all(r: &mut Registry) {
    r.register("newreno", newreno::SUMMARY, newreno::build);
}
