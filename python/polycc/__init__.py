"""polycc: application-aware congestion control with a deterministic packet-level simulator.

    >>> import polycc
    >>> r = polycc.run("scenarios/demo/bottleneck.toml", seed=3)    # doctest: +SKIP
    >>> r.summary["jain_index"], r.flows.head()                      # doctest: +SKIP
    >>> df = polycc.sweep("scenario.toml", {"links.0.rate": ["10Mbps", "50Mbps"]}, seeds=2)  # doctest: +SKIP

The simulator is Rust (crates/polycc-sim) reached through the `polycc._native` extension; this
package adds scenario handling, results directories, plots, reports, sweeps and the CLI. Names are
imported on first use, so that `import polycc` (and the CLI's error paths) stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polycc._native import FusionError, ScenarioError, __version__, cca_names
from polycc.ccas import UnknownCcaError, cca_parameters, cca_summary

if TYPE_CHECKING:
    from polycc.api import RunResult, run
    from polycc.executors import Executor, LocalExecutor
    from polycc.grid import GridError
    from polycc.ray_executor import RayExecutor
    from polycc.scenario import Scenario
    from polycc.sweeps import sweep

_LAZY = {
    "RunResult": "polycc.api",
    "run": "polycc.api",
    "Executor": "polycc.executors",
    "LocalExecutor": "polycc.executors",
    "GridError": "polycc.grid",
    "RayExecutor": "polycc.ray_executor",
    "Scenario": "polycc.scenario",
    "sweep": "polycc.sweeps",
}

__all__ = [
    "Executor",
    "FusionError",
    "GridError",
    "LocalExecutor",
    "RayExecutor",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "UnknownCcaError",
    "__version__",
    "cca_names",
    "cca_parameters",
    "cca_summary",
    "run",
    "sweep",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'polycc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
