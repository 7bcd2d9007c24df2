//! The algorithm pool: one file (or folder) per controller. Each module registers its own names.

pub mod bbr;
pub mod bictcp_update;
pub mod copa;
pub mod cubic;
pub mod gcc;
pub mod htcp;
pub mod hybla;
pub mod hystart;
pub mod illinois;
pub mod ledbat;
pub mod ledbat_pp;
pub mod newreno;
pub mod pcc;
pub mod pibes;
pub(crate) mod recent_flight;
pub(crate) mod reno;
pub(crate) mod round;
#[cfg(test)]
mod shortcut_tests;
#[cfg(test)]
pub(crate) mod test_support;
pub mod vegas;
pub mod westwood;

use crate::registry::Registry;

/// Registers every algorithm of this module under its scenario name.
pub fn register_all(r: &mut Registry) {
    cubic::register(r);
    newreno::register(r);
    vegas::register(r);
    bbr::register(r);
    copa::register(r);
    ledbat::register(r);
    ledbat_pp::register(r);
    westwood::register(r);
    hybla::register(r);
    illinois::register(r);
    htcp::register(r);
    pcc::register(r);
    gcc::register(r);
    pibes::register(r);
}
