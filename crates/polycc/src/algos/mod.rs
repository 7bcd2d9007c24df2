//! The algorithm pool: one file per controller.

pub mod cubic;
pub mod newreno;
pub(crate) mod round;
#[cfg(test)]
pub(crate) mod test_support;
pub mod vegas;

use crate::registry::Registry;

/// Registers every algorithm of this module under its scenario name.
pub fn register_all(r: &mut Registry) {
    r.register("cubic", cubic::SUMMARY, cubic::build);
    r.register("newreno", newreno::SUMMARY, newreno::build);
    r.register("vegas", vegas::SUMMARY, vegas::build);
}
