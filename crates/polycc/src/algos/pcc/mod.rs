//! (being written)

use crate::registry::Registry;

/// Registers this module's controllers.
pub fn register(_r: &mut Registry) {}
