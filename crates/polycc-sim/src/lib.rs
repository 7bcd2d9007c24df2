//! polycc-sim: a deterministic, packet-level discrete-event simulator for polycc controllers.
//!
//! One scenario runs single-threaded from one seeded RNG: the same scenario and seed give the
//! same bytes of output. See `scenario::spec` for the file format and `output` for the results.

pub mod engine;
pub mod output;
pub mod queue;
pub mod scenario;
pub mod service;
pub mod trace;

pub use output::{Column, RunOutput, StrColumn, Summary, Table};
pub use scenario::{Model, Origin, ScenarioError};

use polycc::Registry;
use std::path::Path;
use std::sync::Arc;

/// Errors a run can end with: a bad scenario (the caller exits with status 2), or an internal
/// failure.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    #[error("internal error: {0}")]
    Internal(String),
}

/// Parses and validates a TOML scenario held in memory.
pub fn load_toml(text: &str, origin: &Origin, registry: &Registry) -> Result<Model, ScenarioError> {
    scenario::resolve(scenario::parse_toml(text, origin)?, origin, registry)
}

/// Parses and validates a JSON scenario (the Python API passes dicts this way).
pub fn load_json(text: &str, origin: &Origin, registry: &Registry) -> Result<Model, ScenarioError> {
    scenario::resolve(scenario::parse_json(text, origin)?, origin, registry)
}

/// Runs a scenario file with the standard registry.
pub fn run_file(path: &Path) -> Result<RunOutput, SimError> {
    let registry = Registry::standard();
    let model = scenario::load_file(path, &registry)?;
    run(&model, &registry)
}

/// Runs a validated scenario.
pub fn run(model: &Model, registry: &Registry) -> Result<RunOutput, SimError> {
    run_with(model, registry, engine::Options::default())
}

/// Runs a validated scenario with engine options (see [`engine::Options`]).
pub fn run_with(
    model: &Model,
    registry: &Registry,
    options: engine::Options,
) -> Result<RunOutput, SimError> {
    let (model, registry) = (Arc::new(model.clone()), Arc::new(registry.clone()));
    engine::Simulator::with_options(model, registry, options)?.run()
}
