//! Python bindings for polycc: thin on purpose. Each call converts its arguments, runs the Rust
//! code with the GIL released, and hands back plain columns (`columns`); all analysis, plotting
//! and file writing lives in the `polycc` Python package. `run_toml` / `run_json` run a scenario
//! in one go; `Simulation` (`simulation`) runs it in steps.
//!
//! Errors: a bad scenario raises `polycc._native.ScenarioError` (a `ValueError`) whose message is
//! exactly the Rust `ScenarioError` display ("ORIGIN: key.path: message"); anything else raises
//! `RuntimeError`. A Rust panic is caught and turned into a `RuntimeError`, never an abort.

mod columns;
mod emu;
mod fusion;
mod simulation;

use columns::table_to_dict;
use fusion::{FusionError, PyFusions};
use polycc::Registry;
use polycc_sim::scenario::{self, Origin};
use polycc_sim::{Model, RunOutput, SimError};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

create_exception!(
    polycc._native,
    ScenarioError,
    PyValueError,
    "A scenario is invalid. The message names its origin (file), the key path and what is allowed."
);

/// Why a call failed, decided without the GIL and turned into a Python exception with it.
pub(crate) enum Failure {
    Scenario(String),
    Internal(String),
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Scenario(s) => Failure::Scenario(s.to_string()),
            SimError::Internal(m) => Failure::Internal(m),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Scenario(m) => ScenarioError::new_err(m),
            Failure::Internal(m) => PyRuntimeError::new_err(m),
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Format {
    Toml,
    Json,
}

impl Format {
    /// The format named `name` ("toml" or "json"); `key` names the argument in the error.
    pub(crate) fn from_name(key: &str, name: &str) -> PyResult<Format> {
        match name {
            "toml" => Ok(Format::Toml),
            "json" => Ok(Format::Json),
            other => Err(PyValueError::new_err(format!(
                "{key}: {other:?} is not a scenario format; allowed: \"toml\", \"json\""
            ))),
        }
    }
}

/// Runs `f`, turning a panic into an internal error so that it never unwinds into Python.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Failure::Internal(format!("polycc panicked: {what}")))
    })
}

/// Parses, optionally overrides the seed (before validation, because synthesised traces are drawn
/// from it), and validates.
pub(crate) fn load(
    format: Format,
    text: &str,
    origin: &Origin,
    seed: Option<u64>,
    registry: &Registry,
) -> Result<Model, Failure> {
    let parsed = match format {
        Format::Toml => scenario::parse_toml(text, origin),
        Format::Json => scenario::parse_json(text, origin),
    };
    let mut sc = parsed.map_err(|e| Failure::Scenario(e.to_string()))?;
    if let Some(seed) = seed {
        sc.seed = seed;
    }
    scenario::resolve(sc, origin, registry).map_err(|e| Failure::Scenario(e.to_string()))
}

fn simulate(
    format: Format,
    text: &str,
    origin: &Origin,
    seed: Option<u64>,
    registry: &Registry,
) -> Result<(RunOutput, String), Failure> {
    let model = load(format, text, origin, seed, registry)?;
    let out = polycc_sim::run(&model, registry)?;
    let summary_json = summary_json(&out)?;
    Ok((out, summary_json))
}

pub(crate) fn summary_json(out: &RunOutput) -> Result<String, Failure> {
    serde_json::to_string_pretty(&out.summary)
        .map_err(|e| Failure::Internal(format!("cannot serialise the summary: {e}")))
}

/// A run's output as the dict `run_toml` returns.
pub(crate) fn output_to_dict<'py>(
    py: Python<'py>,
    out: &RunOutput,
    summary_json: String,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("summary_json", summary_json)?;
    dict.set_item("resolved_toml", &out.resolved_toml)?;
    dict.set_item("flows", table_to_dict(py, &out.flows)?)?;
    dict.set_item("links", table_to_dict(py, &out.links)?)?;
    dict.set_item("frames", table_to_dict(py, &out.frames)?)?;
    dict.set_item("transfers", table_to_dict(py, &out.transfers)?)?;
    Ok(dict)
}

#[allow(clippy::too_many_arguments)]
fn run_impl<'py>(
    py: Python<'py>,
    format: Format,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let origin = Origin {
        name: origin,
        base_dir,
    };
    let fusions = PyFusions::from_dict(fusions)?;
    let registry = fusions.registry(py);
    let result = py.allow_threads(|| guarded(|| simulate(format, &text, &origin, seed, &registry)));
    // A failing Python fusion is the cause of whatever else went wrong.
    if let Some(e) = fusions.errors.take(py) {
        return Err(e);
    }
    let (out, summary_json) = result?;
    output_to_dict(py, &out, summary_json)
}

fn validate_impl(
    py: Python<'_>,
    format: Format,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let origin = Origin {
        name: origin,
        base_dir,
    };
    let registry = PyFusions::from_dict(fusions)?.registry(py);
    let name = py.allow_threads(|| {
        guarded(|| {
            let model = load(format, &text, &origin, seed, &registry)?;
            Ok(model.scenario.name.clone())
        })
    })?;
    Ok(name)
}

/// Runs a TOML scenario held in `text`. `origin` names it in error messages; relative trace paths
/// resolve against `base_dir`. `seed` replaces the scenario's seed. `fusions` ({name: callable})
/// are PolyCC fusion functions for `fuse = "py:<name>"` ([`fusion`]). Returns a dict with
/// `summary_json` (str), `resolved_toml` (str), `flows`, `links` and `frames` (tables encoded
/// as in [`columns`]).
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, seed=None, fusions=None))]
fn run_toml<'py>(
    py: Python<'py>,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    run_impl(py, Format::Toml, text, origin, base_dir, seed, fusions)
}

/// As `run_toml`, for a scenario written as JSON (the Python API passes dicts this way).
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, seed=None, fusions=None))]
fn run_json<'py>(
    py: Python<'py>,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    run_impl(py, Format::Json, text, origin, base_dir, seed, fusions)
}

/// Parses and validates a TOML scenario without running it; returns its name.
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, seed=None, fusions=None))]
fn validate_toml(
    py: Python<'_>,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    validate_impl(py, Format::Toml, text, origin, base_dir, seed, fusions)
}

/// Parses and validates a JSON scenario without running it; returns its name.
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir, seed=None, fusions=None))]
fn validate_json(
    py: Python<'_>,
    text: String,
    origin: String,
    base_dir: PathBuf,
    seed: Option<u64>,
    fusions: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    validate_impl(py, Format::Json, text, origin, base_dir, seed, fusions)
}

/// Names of the registered congestion controllers and policies, sorted.
#[pyfunction]
fn cca_names() -> Vec<String> {
    Registry::standard()
        .names()
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// One-line description of a registered controller, or None.
#[pyfunction]
fn cca_summary(name: &str) -> Option<String> {
    Registry::standard().summary(name).map(str::to_string)
}

/// The declared parameters of a registered controller, or None for an unknown name: a list of
/// dicts with `name`, `type` (in words), `default_json` (the default as JSON; `null` when
/// absence has a meaning of its own), `absent` (that meaning, or None), `range` ((lo, hi), each
/// a number or the name of the parameter that bounds it; None without a range), `choices` (the
/// allowed strings, or None), `description` and `source`.
#[pyfunction]
fn cca_parameters<'py>(py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyList>>> {
    let registry = Registry::standard();
    let found = py.allow_threads(|| guarded(|| Ok(registry.parameters(name))))?;
    let Some(params) = found else {
        return Ok(None);
    };
    let bound = |b: polycc::params::Bound| -> PyResult<PyObject> {
        Ok(match b {
            polycc::params::Bound::At(v) => v.into_pyobject(py)?.into_any().unbind(),
            polycc::params::Bound::Param(p) => p.into_pyobject(py)?.into_any().unbind(),
        })
    };
    let list = PyList::empty(py);
    for p in params {
        let spec = p.spec;
        let d = PyDict::new(py);
        d.set_item("name", spec.name)?;
        d.set_item("type", spec.kind.to_string())?;
        d.set_item("default_json", p.default.to_string())?;
        d.set_item("absent", spec.absent)?;
        match spec.range {
            Some((lo, hi)) => d.set_item("range", (bound(lo)?, bound(hi)?))?,
            None => d.set_item("range", py.None())?,
        }
        match spec.kind {
            polycc::params::Kind::Choice(values) => d.set_item("choices", values.to_vec())?,
            _ => d.set_item("choices", py.None())?,
        }
        d.set_item("description", spec.description)?;
        d.set_item("source", spec.source)?;
        list.append(d)?;
    }
    Ok(Some(list))
}

/// Whether a registered controller, built with its defaults, needs the frames of a video source
/// (`CongestionControl::needs_media_frames`: scenario validation refuses it on other traffic),
/// or None for an unknown name.
#[pyfunction]
fn cca_needs_media_frames(py: Python<'_>, name: &str) -> PyResult<Option<bool>> {
    let registry = Registry::standard();
    let spec = polycc::CcSpec::named(name);
    let answer = py.allow_threads(|| {
        guarded(|| {
            Ok(registry
                .build(&spec, &polycc::CcContext::new(1500))
                .ok()
                .map(|cc| cc.needs_media_frames()))
        })
    })?;
    Ok(answer)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("FusionError", m.py().get_type::<FusionError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<simulation::Simulation>()?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(cca_names, m)?)?;
    m.add_function(wrap_pyfunction!(cca_summary, m)?)?;
    m.add_function(wrap_pyfunction!(cca_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(cca_needs_media_frames, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emu::emulator_refusal, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        let r: Result<(), Failure> = guarded(|| panic!("boom"));
        assert!(matches!(r, Err(Failure::Internal(m)) if m.contains("boom")));
    }

    #[test]
    fn scenario_errors_keep_the_display_text() {
        let origin = Origin {
            name: "x.toml".into(),
            base_dir: PathBuf::new(),
        };
        let text = "name = \"x\"\n[[links]]\nid = \"l\"\nrate = \"10Mbit\"\n[[flows]]\nid = \"f\"\nrtt = \"10ms\"\n";
        let err = load(Format::Toml, text, &origin, None, &Registry::standard()).err();
        match err {
            Some(Failure::Scenario(m)) => {
                assert!(m.starts_with("x.toml: links[0].rate: "), "{m}");
            }
            _ => panic!("expected a scenario error"),
        }
    }
}
