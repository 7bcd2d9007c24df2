//! `polycc._native.Simulation`: a scenario run in steps, so that Python can write the time
//! series out as they are recorded (bounded memory for long runs) and show the simulated time
//! reached. The steps change nothing that is simulated (`polycc_sim::engine::Simulator`).
//!
//! ```python
//! sim = Simulation(text, origin, base_dir)
//! while not sim.advance(budget_s=0.25, max_rows=8192):   # True once the run is over
//!     chunk = sim.drain()                 # {"flows": table, "links": table}, rows so far
//! out = sim.finish()                      # as run_toml returns, with the rows not drained
//! ```

use crate::columns::table_to_dict;
use crate::fusion::{FirstError, PyFusions};
use crate::{guarded, load, output_to_dict, summary_json, Failure, Format};
use polycc_sim::engine::{PauseAt, Progress, Simulator};
use polycc_sim::scenario::Origin;
use polycc_sim::SimError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// A run in progress. Each method holds the lock for its whole call (the class must be `Sync`);
/// a call from another thread meanwhile is refused rather than made to wait, as it would wait
/// holding the GIL, which a Python fusion of the running step needs.
#[pyclass(module = "polycc._native")]
pub struct Simulation {
    /// None once finished or after a failure (a run that failed halfway cannot go on).
    sim: Mutex<Option<Simulator>>,
    errors: FirstError,
    duration_s: f64,
    bin_s: f64,
}

/// The message for a call on a run that is over.
const OVER: &str = "this simulation has finished or failed; start a new one";

impl Simulation {
    fn lock(&self) -> PyResult<MutexGuard<'_, Option<Simulator>>> {
        match self.sim.try_lock() {
            Ok(guard) => Ok(guard),
            // A panic was caught (`guarded`) and the run marked over: the slot is consistent.
            Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "this simulation is busy in another thread; use one simulation per thread",
            )),
        }
    }

    fn with_sim<T>(&self, f: impl FnOnce(&mut Simulator) -> T) -> PyResult<T> {
        match self.lock()?.as_mut() {
            Some(sim) => Ok(f(sim)),
            None => Err(PyRuntimeError::new_err(OVER)),
        }
    }
}

#[pymethods]
impl Simulation {
    /// Parses and validates a scenario (`format` "toml" or "json") and prepares its run; the
    /// arguments are those of `run_toml`. Raises ScenarioError for a bad scenario.
    #[new]
    #[pyo3(signature = (text, origin, base_dir, seed=None, fusions=None, format="toml"))]
    fn new(
        py: Python<'_>,
        text: String,
        origin: String,
        base_dir: PathBuf,
        seed: Option<u64>,
        fusions: Option<&Bound<'_, PyDict>>,
        format: &str,
    ) -> PyResult<Self> {
        let format = Format::from_name("format", format)?;
        let origin = Origin {
            name: origin,
            base_dir,
        };
        let fusions = PyFusions::from_dict(fusions)?;
        let registry = Arc::new(fusions.registry(py));
        let sim = py.allow_threads(|| {
            guarded(|| {
                let model = Arc::new(load(format, &text, &origin, seed, &registry)?);
                Ok(Simulator::new(model, registry)?)
            })
        })?;
        let (duration_s, bin_s) = (
            sim.model().duration.as_secs_f64(),
            sim.model().bin.as_secs_f64(),
        );
        Ok(Simulation {
            sim: Mutex::new(Some(sim)),
            errors: fusions.errors,
            duration_s,
            bin_s,
        })
    }

    /// Simulated seconds of the whole run.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.duration_s
    }

    /// The time-series bin, in seconds.
    #[getter]
    fn bin_s(&self) -> f64 {
        self.bin_s
    }

    /// Simulated seconds reached: the time of the last event processed.
    #[getter]
    fn now_s(&self) -> PyResult<f64> {
        self.with_sim(|s| s.now().as_secs_f64())
    }

    /// Flow rows recorded and not yet drained (link rows are fewer or as many).
    #[getter]
    fn pending_rows(&self) -> PyResult<usize> {
        self.with_sim(|s| s.pending_rows().0)
    }

    /// Runs the events before `until_s` simulated seconds (default: the end) with the GIL
    /// released. Returns earlier, with `until_s` not reached, after about `budget_s` of
    /// wall-clock time (so that the caller can show progress and handle signals) or once
    /// `max_rows` flow rows are pending (so that it can drain them in chunks of about that
    /// size). Returns True once the run is over (`finish` next).
    #[pyo3(signature = (until_s=None, budget_s=None, max_rows=None))]
    fn advance(
        &self,
        py: Python<'_>,
        until_s: Option<f64>,
        budget_s: Option<f64>,
        max_rows: Option<usize>,
    ) -> PyResult<bool> {
        let budget = budget_s
            .map(|b| {
                std::time::Duration::try_from_secs_f64(b).map_err(|_| {
                    PyValueError::new_err(format!("budget_s: {b} is not a number of seconds >= 0"))
                })
            })
            .transpose()?;
        if until_s.is_some_and(|u| u.is_nan() || u < 0.0) {
            return Err(PyValueError::new_err(format!(
                "until_s: {until_s:?} is not a time >= 0"
            )));
        }
        let mut slot = self.lock()?;
        let Some(sim) = slot.as_mut() else {
            return Err(PyRuntimeError::new_err(OVER));
        };
        let until = until_s.map_or(sim.end(), polycc::units::Time::from_secs_f64);
        let pause = PauseAt {
            wall: budget,
            pending_rows: max_rows,
        };
        let result = py.allow_threads(|| guarded(|| Ok(sim.advance(until, pause)?)));
        // A failing Python fusion is the cause of whatever else went wrong.
        if let Some(e) = self.errors.take(py) {
            *slot = None;
            return Err(e);
        }
        match result {
            Ok(p) => Ok(p == Progress::Done),
            Err(e) => {
                *slot = None;
                Err(e.into())
            }
        }
    }

    /// The flow and link rows recorded since the last drain (whole bins), as
    /// {"flows": table, "links": table} encoded as in `run_toml`'s output. A column can first
    /// appear in a later chunk (telemetry a controller reports only in some states).
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (flows, links) = self.with_sim(|s| s.drain())?;
        let dict = PyDict::new(py);
        dict.set_item("flows", table_to_dict(py, &flows)?)?;
        dict.set_item("links", table_to_dict(py, &links)?)?;
        Ok(dict)
    }

    /// Ends the run (processing any events left) and returns what `run_toml` returns, with the
    /// rows not drained yet. The object cannot be used afterwards.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self
            .lock()?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err(OVER))?;
        let result = py.allow_threads(|| {
            guarded(|| {
                let out = sim.finish().map_err(|e: SimError| Failure::from(e))?;
                let json = summary_json(&out)?;
                Ok((out, json))
            })
        });
        if let Some(e) = self.errors.take(py) {
            return Err(e);
        }
        let (out, json) = result?;
        output_to_dict(py, &out, json)
    }
}
