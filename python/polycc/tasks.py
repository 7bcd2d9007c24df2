"""One unit of work for an executor: run a scenario (and write its results directory).

Plain data and a top-level function, so that any executor (threads here, processes or a cluster
later) can ship them. Heavy modules are imported inside `execute`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polycc.scenario import Scenario

#: Where a scenario can run: the simulator, or the emulated testbed (polycc-emu).
BACKENDS = ("sim", "emu")


@dataclass(frozen=True)
class RunTask:
    index: int
    run_id: str
    #: The overrides this run applies (empty for a plain run).
    params: dict[str, Any]
    seed: int
    scenario: Scenario
    #: Directory the run writes its results into, or None to keep only the summary.
    out_dir: str | None = None
    plots: bool = True
    #: Link from the run's report back to an index page.
    back: str | None = None
    #: Where it runs: "sim" (the simulator) or "emu" (the emulated testbed).
    backend: str = "sim"


@dataclass
class RunOutcome:
    task: RunTask
    summary: dict[str, Any] | None
    error: str | None
    wall_s: float


def execute(task: RunTask) -> RunOutcome:
    """Runs one task. Failures are returned, not raised, so one bad run does not stop a sweep."""
    from polycc.api import run_scenario
    from polycc.results import stream_run, write_run_files

    t0 = time.perf_counter()
    try:
        out = None
        if task.out_dir is not None:
            out = Path(task.out_dir)
            out.mkdir(parents=True, exist_ok=False)
        if task.backend == "emu":
            # An emulated run's series are small (real time): kept, then written.
            result = run_scenario(task.scenario, seed=task.seed, backend="emu")
            if out is not None:
                write_run_files(result, out, plots=task.plots, back=task.back)
        else:
            # Streamed: the time series go to the run's files (or nowhere) as they are recorded.
            result = stream_run(task.scenario, out, seed=task.seed, plots=task.plots, back=task.back)
        return RunOutcome(task, result.summary, None, time.perf_counter() - t0)
    except Exception as e:
        return RunOutcome(task, None, f"{type(e).__name__}: {e}", time.perf_counter() - t0)
