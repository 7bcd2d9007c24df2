//! The shim's API when the crate is built without the `bpf` feature: every call says so.

use crate::{Decision, FlowKey, Report, ShimError};
use std::time::Duration;

/// See the crate documentation; built without the `bpf` feature, nothing can be registered.
pub struct Shim(());

impl Shim {
    pub fn register() -> Result<Shim, ShimError> {
        Err(ShimError::NotBuilt)
    }

    pub fn decide(&self, _key: FlowKey, _d: Decision) -> Result<(), ShimError> {
        Err(ShimError::NotBuilt)
    }

    pub fn poll(
        &mut self,
        _timeout: Duration,
        _on: impl FnMut(Report),
    ) -> Result<usize, ShimError> {
        Err(ShimError::NotBuilt)
    }
}
