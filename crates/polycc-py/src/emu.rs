//! The emulated testbed (`polycc-emu`) from Python: the same scenario text and the same output
//! dict as a simulated run.

use crate::{guarded, load, output_to_dict, Failure, Format};
use polycc::Registry;
use polycc_emu::EmuError;
use polycc_sim::scenario::Origin;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

impl From<EmuError> for Failure {
    fn from(e: EmuError) -> Self {
        if e.is_user_error() {
            Failure::Scenario(e.to_string())
        } else {
            Failure::Internal(e.to_string())
        }
    }
}

/// Runs a scenario (`text`, TOML or JSON by `fmt`) in the emulator; needs root. `cancelled` is
/// called a hundred times a second and ends the run when it returns true (Ctrl-C in the
/// caller): everything the run made is removed before this returns, and the returned dict is
/// then `None`. Outside programs (`stack = "external"`) write their output into `log_dir` (a
/// fresh temporary directory when None). Otherwise as `run_toml`.
#[pyfunction]
#[pyo3(signature = (text, fmt, origin, base_dir, cancelled, seed=None, log_dir=None))]
#[allow(clippy::too_many_arguments)]
pub fn emulate<'py>(
    py: Python<'py>,
    text: String,
    fmt: &str,
    origin: String,
    base_dir: PathBuf,
    cancelled: PyObject,
    seed: Option<u64>,
    log_dir: Option<PathBuf>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let format = Format::from_name("fmt", fmt)?;
    let origin = Origin {
        name: origin,
        base_dir,
    };
    let registry = Registry::standard();
    // A callable that fails counts as a cancellation: the run cannot report to it anyway.
    let is_cancelled = || {
        Python::with_gil(|py| {
            cancelled
                .call0(py)
                .and_then(|r| r.is_truthy(py))
                .unwrap_or(true)
        })
    };
    let result = py.allow_threads(|| {
        guarded(|| {
            let model = load(format, &text, &origin, seed, &registry)?;
            let options = polycc_emu::Options {
                cancelled: &is_cancelled,
                log_dir: log_dir.as_deref(),
            };
            match polycc_emu::run(&model, &registry, &options) {
                Err(_) if is_cancelled() => Ok(None),
                r => Ok(Some(r?)),
            }
        })
    })?;
    let Some(out) = result else { return Ok(None) };
    // The summary says where it was measured; a simulated one has no `backend` key.
    let mut summary = serde_json::to_value(&out.summary)
        .map_err(|e| Failure::Internal(format!("cannot serialise the summary: {e}")))?;
    summary["backend"] = "emu".into();
    let summary_json = serde_json::to_string_pretty(&summary)
        .map_err(|e| Failure::Internal(format!("cannot serialise the summary: {e}")))?;
    Ok(Some(output_to_dict(py, &out, summary_json)?))
}

/// Why the emulator would refuse a scenario (`text`, TOML or JSON by `fmt`), or `None` when it
/// can run it: the emulator's own support check, without creating anything (no root needed).
/// An invalid scenario raises ScenarioError as `validate_toml` does.
#[pyfunction]
#[pyo3(signature = (text, fmt, origin, base_dir))]
pub fn emulator_refusal(
    py: Python<'_>,
    text: String,
    fmt: &str,
    origin: String,
    base_dir: PathBuf,
) -> PyResult<Option<String>> {
    let format = Format::from_name("fmt", fmt)?;
    let origin = Origin {
        name: origin,
        base_dir,
    };
    let registry = Registry::standard();
    let refusal = py.allow_threads(|| {
        guarded(|| {
            let model = load(format, &text, &origin, None, &registry)?;
            let kernel_ccas = polycc_emu::linux_tcp::available_controllers()?;
            Ok(polycc_emu::support::check(&model, &kernel_ccas)
                .err()
                .map(|e| e.to_string()))
        })
    })?;
    Ok(refusal)
}
