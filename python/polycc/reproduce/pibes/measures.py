"""What the PIBES experiments measure in a run: the video flow's utilisation of the capacity, its
frame delays, and the runs of both protocols on one scenario."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from polycc.reproduce.common import Context, fmt, safe_div, seconds
from polycc.reproduce.pibes.model import CCAS, seeds
from polycc.reproduce.scenario_file import PACKET_BYTES
from polycc.reproduce.timeseries import flow_mean, window

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult


def capacity(r: RunResult, t0: float, t1: float) -> float:
    """The run's first link's mean capacity (Mbit/s) over [t0, t1)."""
    link = str(r.summary["links"][0]["id"])
    v = window(r.links, "link", link, t0, t1)["capacity_mbps"].to_numpy(dtype=float)
    return float(v.mean()) if v.size else math.nan


def utilisation(r: RunResult, flow: str, t0: float, t1: float, cap: float | None = None) -> float:
    """Mean throughput of `flow` over [t0, t1) over the mean capacity then (or `cap`)."""
    return safe_div(flow_mean(r, flow, "throughput_mbps", t0, t1), cap or capacity(r, t0, t1))


def decoded_frames(frames: pd.DataFrame, flow: str, t0: float = 0.0, t1: float = math.inf) -> pd.DataFrame:
    """The settled, decodable frames of `flow` produced in [t0, t1)."""
    if frames.empty:
        return frames
    f = frames[(frames["flow"] == flow) & (frames["settled"] == 1) & (frames["decoded"] == 1)]
    return f[(f["generated_s"] >= t0) & (f["generated_s"] < t1)]


def frame_delays(frames: pd.DataFrame, flow: str, t0: float = 0.0, t1: float = math.inf) -> np.ndarray:
    """Delays (ms) of the settled, decodable frames of `flow` produced in [t0, t1)."""
    f = decoded_frames(frames, flow, t0, t1)
    delays: np.ndarray = f["delay_ms"].to_numpy(dtype=float) if len(f) else np.array([])
    return delays


def stat(x: np.ndarray, q: float | None = None) -> float:
    """The mean of `x`, or its `q`-th percentile; NaN when empty."""
    if not x.size:
        return math.nan
    return float(np.percentile(x, q)) if q is not None else float(x.mean())


def secs(v: float) -> str:
    return seconds(v, 2)


def num3(v: float) -> str:
    return fmt(v, 3)


def points(v: float) -> str:
    """A difference of two shares, in percentage points ("+2.4 points")."""
    return f"{100 * v:+.1f} points"


def times(v: float) -> str:
    """A ratio to two decimals ("0.94×")."""
    return f"{v:.2f}×"


def video_runs(
    ctx: Context, name: str, scenario: str, extra: Mapping[str, Any] | None = None
) -> dict[str, list[RunResult]]:
    """The runs per protocol (PIBES, GCC) of `scenario` with `extra` overrides, one per seed."""
    return {
        label: ctx.run_seeds(
            f"{name}-{label.lower()}", scenario, dict(over) | dict(extra or {}), seeds=seeds(ctx)
        )
        for label, over in CCAS.items()
    }


def first(runs: Mapping[str, list[RunResult]]) -> dict[str, RunResult]:
    """Each protocol's first-seed run (the one plotted)."""
    return {k: v[0] for k, v in runs.items()}


def med(xs: Sequence[float]) -> float:
    """The median of per-seed values for a table cell (NaN ignored; NaN when none)."""
    v = [x for x in xs if not math.isnan(x)]
    return float(np.median(v)) if v else math.nan


def _link(ctx: Context, scenario: str) -> dict[str, Any]:
    """The first link of a scenario file, as written."""
    doc = tomllib.loads(ctx.scenario(scenario).read_text(encoding="utf-8"))
    link: dict[str, Any] = doc["links"][0]
    return link


def _trace_ms(ctx: Context, scenario: str) -> np.ndarray:
    """The delivery opportunities (ms) of a cellular scenario's mahimahi trace, one a packet."""
    path = (ctx.scenarios / _link(ctx, scenario)["trace"]).resolve()
    ms: np.ndarray = np.loadtxt(path, dtype=np.int64, ndmin=1)
    return ms


def trace_gaps_ms(ctx: Context, scenario: str) -> np.ndarray:
    """The gaps (ms) between the delivery opportunities of a cellular scenario's mahimahi trace."""
    gaps: np.ndarray = np.diff(_trace_ms(ctx, scenario))
    return gaps


def trace_as_steps(ctx: Context, scenario: str, step_s: float, duration_s: float) -> dict[str, Any]:
    """The scenario's first link with its mahimahi trace replaced by capacity steps of `step_s`
    over the first `duration_s`, each at the rate of the trace's opportunities in it: a link that
    serves a bandwidth changed at intervals, as a trace replayed through a rate-limited pipe is,
    rather than packets at the trace's own milliseconds."""
    link = {k: v for k, v in _link(ctx, scenario).items() if k != "trace"}
    step_ms = round(1000 * step_s)
    steps = round(1000 * duration_s) // step_ms
    counts = np.bincount(_trace_ms(ctx, scenario) // step_ms, minlength=steps)[:steps]
    link["schedule"] = [
        {"at": f"{k * step_ms}ms", "rate": f"{n * PACKET_BYTES * 8 / step_ms / 1000:.6g}Mbps"}
        for k, n in enumerate(counts)
    ]
    return link


def trace_missing(ctx: Context, scenario: str) -> str | None:
    """The trace file a cellular scenario needs, when it is absent."""
    doc = tomllib.loads(ctx.scenario(scenario).read_text(encoding="utf-8"))
    trace = doc["links"][0]["trace"]
    path = (ctx.scenarios / trace).resolve()
    return None if path.is_file() else str(path)
