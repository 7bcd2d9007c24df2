"""Parameter sweeps: a grid of scenario overrides × seeds (see `polycc.grid`), run through an
`Executor` (threads on this machine by default). The result is one table with a row per run: the
varied parameters, the seed, and flattened summary metrics.
"""

from __future__ import annotations

import json
import math
from collections.abc import Generator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from polycc._native import ScenarioError
from polycc.executors import Executor, LocalExecutor, check_jobs
from polycc.grid import load_base, normalise_grid, normalise_points, parse_grid, plan, plan_points
from polycc.outdir import atomic_dir, relative_link
from polycc.report import render_sweep_index
from polycc.scenario import Scenario, ScenarioSource, format_value
from polycc.tasks import BACKENDS, RunOutcome, RunTask, execute, execute_packed, lost, unpack

__all__ = ["results_frame", "summary_metrics", "sweep"]


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def summary_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """One flat row from a summary: aggregates first, then flow.<id>.* and link.<id>.* columns."""
    flows = list(summary.get("flows", []))
    links = list(summary.get("links", []))
    goodputs = [float(f.get("goodput_mbps", math.nan)) for f in flows]
    row: dict[str, Any] = {
        "total_goodput_mbps": sum(goodputs) if goodputs else math.nan,
        "mean_goodput_mbps": _mean(goodputs),
        "min_goodput_mbps": min(goodputs) if goodputs else math.nan,
        "jain_index": summary.get("jain_index", math.nan),
        "mean_rtt_ms": _mean([f.get("rtt_ms", {}).get("mean", math.nan) for f in flows]),
        "max_rtt_p95_ms": max((f.get("rtt_ms", {}).get("p95", math.nan) for f in flows), default=math.nan),
        "mean_loss_rate": _mean([f.get("loss_rate", math.nan) for f in flows]),
        "mean_utilization": _mean([lk.get("utilization", math.nan) for lk in links]),
        "total_drops": sum(int(lk.get("drops", 0)) for lk in links),
        "events": summary.get("events"),
        "sim_wall_s": summary.get("wall_s"),
    }
    for f in flows:
        flat: dict[str, Any] = {}
        _flatten("", {k: v for k, v in f.items() if k != "id"}, flat)
        row.update({f"flow.{f.get('id')}.{k}": v for k, v in flat.items()})
    for lk in links:
        flat = {}
        _flatten("", {k: v for k, v in lk.items() if k != "id"}, flat)
        row.update({f"link.{lk.get('id')}.{k}": v for k, v in flat.items()})
    return row


def _param_column(values: list[Any]) -> list[Any]:
    """Parameter values as one parquet-friendly type: numbers stay numbers, the rest become text."""
    kinds = {type(v) for v in values}
    if kinds <= {int} or kinds <= {float} or kinds <= {str} or kinds <= {bool}:
        return values
    if kinds <= {int, float}:
        return [float(v) for v in values]
    return [format_value(v) for v in values]


def results_frame(outcomes: Sequence[RunOutcome], keys: Sequence[str]) -> pd.DataFrame:
    ordered = sorted(outcomes, key=lambda o: o.task.index)
    rows: list[dict[str, Any]] = []
    for o in ordered:
        row: dict[str, Any] = {"run_id": o.task.run_id}
        row.update({k: o.task.params.get(k) for k in keys})
        row["seed"] = o.task.seed
        row["status"] = "ok" if o.error is None else "error"
        row["error"] = o.error
        row["wall_s"] = o.wall_s
        if o.summary is not None:
            row.update(summary_metrics(o.summary))
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in keys:
        df[k] = _param_column(list(df[k]))
    return df


def sweep(
    source: ScenarioSource | Scenario,
    grid: Mapping[str, Sequence[Any]] | Sequence[str] | Sequence[Mapping[str, Any]],
    *,
    seeds: int = 1,
    jobs: int | None = None,
    out_dir: str | Path | None = None,
    executor: Executor | None = None,
    plots: bool = True,
    progress: bool = False,
    progress_label: str = "sweep",
    backend: str = "sim",
) -> pd.DataFrame:
    """Runs the sweep and returns one row per run (see `summary_metrics` for the metric columns).

    `grid` is {key: [values]} (the cartesian product is run), a list of `KEY=V1,V2` strings (the
    same, as on the command line), or a list of {key: value} dicts: explicit points, for keys that
    vary together (e.g. `links.0.loss` and `links.0.ack_loss`).

    With `out_dir`, also writes DIR/results.parquet, DIR/sweep.json, DIR/index.html and each run's
    results directory DIR/runs/<run-id>/, atomically (all or nothing).

    `jobs` is the number of parallel runs (a positive integer; None: all cores). With
    `progress`, a bar of runs done / total (labelled `progress_label`) shows on stderr when it
    is a terminal.

    `backend="emu"` runs each point in the emulated testbed, one at a time (its runs are real
    time and would skew each other's timing), whatever `jobs` says.
    """
    check_jobs(jobs)
    if backend not in BACKENDS:
        raise ScenarioError(f"backend: {backend!r}; allowed: {', '.join(BACKENDS)}")
    if backend == "emu":
        jobs = 1
    base = load_base(source)
    points: list[dict[str, Any]] | None = None
    if isinstance(grid, Mapping):
        grid = normalise_grid(base, grid)
        tasks = plan(base, grid, seeds=seeds)
        keys = [k for k in grid if k != "seed"]
    elif all(isinstance(g, Mapping) for g in grid) and grid:
        points = normalise_points(base, [g for g in grid if isinstance(g, Mapping)])
        tasks = plan_points(base, points, seeds=seeds)
        keys = list(dict.fromkeys(k for p in points for k in p))
    else:
        grid = parse_grid([str(g) for g in grid])
        tasks = plan(base, grid, seeds=seeds)
        keys = [k for k in grid if k != "seed"]
    tasks = [replace(t, backend=backend) for t in tasks]
    executor = executor or LocalExecutor(jobs)
    if out_dir is None:
        return results_frame(_execute_all(executor, tasks, progress, progress_label), keys)

    out = Path(out_dir)
    with atomic_dir(out) as tmp:
        tasks = [
            replace(t, out_dir=str(tmp / "runs" / t.run_id), plots=plots, back="../../index.html")
            for t in tasks
        ]
        outcomes = _execute_all(executor, tasks, progress, progress_label)
        df = results_frame(outcomes, keys)
        df.to_parquet(tmp / "results.parquet", index=False)
        manifest: dict[str, Any] = {
            "scenario": base.origin,
            **(
                {"points": points}
                if points is not None
                else {"grid": {k: list(vs) for k, vs in grid.items()}}  # type: ignore[union-attr]
            ),
            "seeds": sorted({t.seed for t in tasks}),
            "runs": [
                {
                    "run_id": t.run_id,
                    "seed": t.seed,
                    "params": t.params,
                }
                for t in tasks
            ],
        }
        (tmp / "sweep.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
        (tmp / "index.html").write_text(
            render_sweep_index(
                base.origin,
                df,
                keys,
                link=lambda rid: relative_link(tmp / "runs" / rid / "report.html", tmp),
                plots_dir=tmp if plots else None,
            ),
            encoding="utf-8",
        )
    return df


def _execute_all(
    executor: Executor, tasks: Sequence[RunTask], progress: bool, desc: str = "sweep"
) -> list[RunOutcome]:
    """Runs `tasks` on `executor` and returns their outcomes (in finishing order), with a progress
    bar labelled `desc` when `progress` and stderr is a terminal."""
    from tqdm import tqdm

    outcomes: list[RunOutcome] = []
    results = _outcomes(executor, tasks)
    parallelism = getattr(executor, "parallelism", None)
    at_once = parallelism() if callable(parallelism) else getattr(executor, "jobs", 1)
    failed = 0
    try:
        # tqdm's disable=None: shown only when stderr is a terminal; it estimates the time left.
        with tqdm(total=len(tasks), unit="run", desc=desc, disable=None if progress else True) as bar:
            bar.set_postfix(failed=0, running=min(at_once, len(tasks)))
            for outcome in results:
                outcomes.append(outcome)
                failed += outcome.error is not None
                bar.set_postfix(
                    failed=failed, running=min(at_once, len(tasks) - len(outcomes)), refresh=False
                )
                bar.update(1)
    finally:
        # On Ctrl-C or SIGTERM, stop the executor (it waits for the runs under way) before the
        # caller removes the directory they write into; a suspended generator would otherwise
        # live on in the traceback, and its runs recreate the directory after its removal.
        results.close()
    return outcomes


#: For other commands that run planned tasks (`polycc suite`).
run_tasks = _execute_all


def _outcomes(executor: Executor, tasks: Sequence[RunTask]) -> Generator[RunOutcome, None, None]:
    """The tasks' outcomes as they finish. A remote executor's workers return their results
    directories as data, which are written here, on the driver; a run whose worker was lost is
    an error outcome, and the others go on."""
    if getattr(executor, "remote", False):
        packed = executor.map_unordered(execute_packed, tasks, on_lost=lost)  # type: ignore[call-arg]
        try:
            for p in packed:
                yield unpack(p)
        finally:
            close = getattr(packed, "close", None)
            if close is not None:
                close()
        return
    results = executor.map_unordered(execute, tasks)
    try:
        yield from results
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()
