//! Python callables as PolyCC fusion functions, for prototyping a fusion without writing Rust.
//!
//! `polycc.run(scenario, fusions={"myfuse": fn})` registers `fn` as the fusion `py:myfuse` for
//! that run; a scenario chooses it with `cca = { name = "poly", ..., fuse = "py:myfuse" }`.
//! The callable is called as `fn(values, pilot, quantity, target)`: each member's own value in
//! pool order (list of float: bytes for `quantity == "cwnd"`, bit/s for `"rate"`), the pilot's
//! index, the quantity, and the target (float or None); it returns the fused value (float).
//!
//! Cost: every call takes the GIL back from the simulation thread and builds a list, so a
//! Python fusion defaults to `fuse_every = "rtt"` (once per smoothed RTT); `fuse_every = "ack"`
//! is allowed for exact comparisons with the built-in functions. BENCHMARKS.md has the measured
//! cost per call.
//!
//! Errors are the user's, raised as `polycc._native.FusionError` (a `RuntimeError`, which the
//! CLI reports with exit status 2), naming the fusion and its function:
//! - a callable that cannot be called with those four arguments is refused before the run;
//! - the first exception, or a result that is not a finite positive float (NaN, an infinity, 0
//!   or a negative number: no window or rate), stops the function for the rest of the run (the
//!   pilot's own value is used) and is raised once the run returns, naming the call and the
//!   value. An error rather than a silent fallback: a fusion that returns NaN is a bug in it,
//!   and a run that quietly followed the pilot would look like a result of the fusion.

use polycc::policies::poly::fusion::{Every, Fusion, FusionInput};
use polycc::policies::poly::{register_fusion, FusionFactory, PY_PREFIX};
use polycc::Registry;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::{Arc, Mutex};

create_exception!(
    polycc._native,
    FusionError,
    PyRuntimeError,
    "A Python fusion function failed: wrong signature, an exception, or a result that is not a \
     finite positive number. The message names the fusion and the function."
);

/// How a fusion is called, for messages.
const SIGNATURE: &str = "fn(values, pilot, quantity, target) -> float";

/// A failure's message, and the Python exception behind it (none for a bad result).
type Failure = (String, Option<PyErr>);

/// The first failure of any Python fusion in one run.
#[derive(Clone, Default)]
pub struct FirstError(Arc<Mutex<Option<Failure>>>);

impl FirstError {
    fn record(&self, what: String, err: Option<PyErr>) {
        // A poisoned lock only means another instance panicked while recording; keep the first.
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some((what, err));
        }
    }

    /// The recorded failure as a `FusionError` whose cause is the callable's own exception;
    /// an exception that is not an `Exception` (KeyboardInterrupt on Ctrl-C while the callable
    /// ran, SystemExit) is handed on as it is.
    pub fn take(&self, py: Python<'_>) -> Option<PyErr> {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.take().map(|(what, cause)| {
            if let Some(c) = cause
                .as_ref()
                .filter(|c| !c.is_instance_of::<PyException>(py))
            {
                return c.clone_ref(py);
            }
            let e = FusionError::new_err(what);
            e.set_cause(py, cause);
            e
        })
    }
}

/// `module.qualname` of a callable, for messages.
fn describe(func: &Bound<'_, PyAny>) -> String {
    let attr = |name: &str| func.getattr(name).and_then(|v| v.extract::<String>()).ok();
    match (attr("__module__"), attr("__qualname__")) {
        (Some(m), Some(q)) => format!("{m}.{q}"),
        (None, Some(q)) => q,
        _ => func.repr().map(|r| r.to_string()).unwrap_or_default(),
    }
}

/// Refuses a callable that cannot take the four arguments of a fusion call. A callable whose
/// signature Python cannot tell (some built-ins) is let through; calling it will tell.
fn check_signature(py: Python<'_>, name: &str, func: &Bound<'_, PyAny>) -> PyResult<()> {
    let inspect = py.import("inspect")?;
    let Ok(sig) = inspect.call_method1("signature", (func,)) else {
        return Ok(());
    };
    if sig
        .call_method1("bind", (Vec::<f64>::new(), 0, "cwnd", py.None()))
        .is_ok()
    {
        return Ok(());
    }
    Err(FusionError::new_err(format!(
        "fusion {PY_PREFIX}{name}: {}{} cannot be called as a fusion; a fusion is called as \
         {SIGNATURE} (values: the members' own values in pool order; pilot: the pilot's index; \
         quantity: \"cwnd\" or \"rate\"; target: a float or None)",
        describe(func),
        sig.str()?,
    )))
}

/// Python callables by name, taken from the `fusions` argument (with the GIL held).
pub struct PyFusions {
    funcs: Vec<(String, Py<PyAny>)>,
    pub errors: FirstError,
}

impl PyFusions {
    /// Validates `fusions` ({name: callable}); the error names the entry at fault.
    pub fn from_dict(fusions: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut funcs = Vec::new();
        for (k, v) in fusions.into_iter().flat_map(|d| d.iter()) {
            let name: String = k.extract().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!("fusions: key {k} is not a string"))
            })?;
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "fusions: name {name:?} must be non-empty without spaces"
                )));
            }
            if !v.is_callable() {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "fusions[{name:?}] is not callable"
                )));
            }
            check_signature(v.py(), &name, &v)?;
            funcs.push((name, v.unbind()));
        }
        Ok(PyFusions {
            funcs,
            errors: FirstError::default(),
        })
    }

    /// The standard registry with every callable registered as `py:<name>`.
    pub fn registry(&self, py: Python<'_>) -> Registry {
        let mut r = Registry::standard();
        for (name, func) in &self.funcs {
            let label = format!("{PY_PREFIX}{name}");
            let func = func.clone_ref(py);
            let errors = self.errors.clone();
            let factory_label = label.clone();
            let factory: FusionFactory = Arc::new(move || {
                let func = Python::with_gil(|py| func.clone_ref(py));
                Box::new(PyFusion {
                    label: factory_label.clone(),
                    func,
                    errors: errors.clone(),
                    failed: false,
                    calls: 0,
                })
            });
            // "py:" names never collide with the built-in ones.
            if register_fusion(&mut r, &label, factory).is_err() {
                unreachable!("{label} is not a built-in fusion name");
            }
        }
        r
    }
}

struct PyFusion {
    label: String,
    func: Py<PyAny>,
    errors: FirstError,
    failed: bool,
    /// Calls so far, to say which one failed.
    calls: u64,
}

impl Fusion for PyFusion {
    fn name(&self) -> &str {
        &self.label
    }

    fn fuse(&mut self, input: &FusionInput<'_>) -> f64 {
        if self.failed {
            return f64::NAN;
        }
        self.calls += 1;
        Python::with_gil(|py| {
            let called = PyList::new(py, input.values)
                .and_then(|values| {
                    self.func.call1(
                        py,
                        (values, input.pilot, input.quantity.name(), input.target),
                    )
                })
                .and_then(|r| r.extract::<f64>(py));
            let failure = match called {
                Ok(v) if v.is_finite() && v > 0.0 => return v,
                Ok(v) => (
                    format!(
                        "returned {v} at its call {} (values {:?}, pilot {}, quantity {:?}); \
                         a fusion must return a finite positive number (bytes for \"cwnd\", \
                         bit/s for \"rate\")",
                        self.calls,
                        input.values,
                        input.pilot,
                        input.quantity.name()
                    ),
                    None,
                ),
                Err(e) => (
                    format!(
                        "failed at its call {} ({SIGNATURE} must return a float): {e}",
                        self.calls
                    ),
                    Some(e),
                ),
            };
            self.failed = true;
            let func = describe(self.func.bind(py));
            self.errors.record(
                format!("fusion {} {} (function {func})", self.label, failure.0),
                failure.1,
            );
            f64::NAN
        })
    }

    fn default_every(&self) -> Every {
        Every::Rtt
    }
}
