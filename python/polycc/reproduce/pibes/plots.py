"""The PIBES experiments' figures: time-series panels comparing the protocols' runs (Figs. 10-16
style) and the estimation accuracy against a parameter (Figs. 6-7 style)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from polycc.reproduce.common import pct
from polycc.reproduce.pibes.model import S_MAX

if TYPE_CHECKING:
    from polycc.api import RunResult
    from polycc.reproduce.common import Context

#: One colour per protocol in every panel, others for the TCP flows; reference lines grey.
_COLOURS = {"PIBES": "C0", "GCC": "C1", "tcp": "C2", "tcp1": "C2", "tcp2": "C3"}


def _style(label: str) -> dict[str, Any]:
    if label.startswith(("capacity", "lower bound")):
        return {"color": "grey", "linestyle": "--", "linewidth": 1.0}
    colour = _COLOURS.get(label)
    return {"color": colour} if colour else {}


def _plot(path: Path, title: str, panels: Sequence[tuple[str, Mapping[str, tuple[Any, Any]]]]) -> None:
    """Time-series panels of labelled (t, y) lines."""
    from polycc.plots import _LOCK, Panel, Series, _draw

    drawn = [
        Panel(
            ylabel,
            [
                Series(label, np.asarray(t, dtype=float), np.asarray(y, dtype=float), _style(label))
                for label, (t, y) in lines.items()
            ],
        )
        for ylabel, lines in panels
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK:
        _draw(path, title, drawn)


def _series(r: RunResult, flow: str, col: str) -> tuple[np.ndarray, np.ndarray]:
    f = r.flows[r.flows["flow"] == flow]
    return f["t_s"].to_numpy(dtype=float), f[col].to_numpy(dtype=float)


def capacity_series(r: RunResult) -> tuple[np.ndarray, np.ndarray]:
    """Times and capacity (Mbit/s) of the run's first link."""
    link = str(r.summary["links"][0]["id"])
    f = r.links[r.links["link"] == link]
    return f["t_s"].to_numpy(dtype=float), f["capacity_mbps"].to_numpy(dtype=float)


def _frame_series(r: RunResult, flow: str) -> tuple[np.ndarray, np.ndarray]:
    f = r.frames
    if f.empty:
        return np.array([]), np.array([])
    f = f[(f["flow"] == flow) & (f["decoded"] == 1)]
    return f["generated_s"].to_numpy(dtype=float), f["delay_ms"].to_numpy(dtype=float)


def comparison_plot(
    ctx: Context,
    path: Path,
    title: str,
    runs: Mapping[str, RunResult],
    *,
    bound_ms: float | None = None,
) -> None:
    """Throughput of each run's video flow against the capacity, and (given the lower bound) its
    frame delay over time with the bound (Figs. 10-12 style)."""
    if not ctx.plots:
        return
    first = next(iter(runs.values()))
    thr: dict[str, tuple[Any, Any]] = {"capacity": capacity_series(first)}
    thr |= {label: _series(r, "video", "throughput_mbps") for label, r in runs.items()}
    panels: list[tuple[str, Mapping[str, tuple[Any, Any]]]] = [("throughput (Mbit/s)", thr)]
    for label, r in runs.items():
        flows = r.summary["flows"]
        others = [str(f["id"]) for f in flows if f["id"] != "video" and (f.get("active_s") or 0) > 0]
        if others:
            panels.append(
                (
                    f"{label} run (Mbit/s)",
                    {"capacity": capacity_series(r), label: _series(r, "video", "throughput_mbps")}
                    | {o: _series(r, o, "throughput_mbps") for o in others},
                )
            )
    if bound_ms is not None:
        dl: dict[str, tuple[Any, Any]] = {label: _frame_series(r, "video") for label, r in runs.items()}
        t = capacity_series(first)[0]
        dl[f"lower bound ({pct(S_MAX, 0)} of capacity)"] = (t, np.full(t.shape, bound_ms))
        panels.append(("frame delay (ms)", dl))
    _plot(path, title, panels)


def plot_xy(
    path: Path, title: str, panels: Sequence[tuple[str, Sequence[float], Mapping[str, Sequence[float]]]]
) -> None:
    """Panels of labelled lines against a parameter (x)."""
    from polycc.plots import _LOCK, figure, line_axes

    fig, grid = figure(9, 2.65, 1, len(panels))
    for ax, (xlabel, x, lines) in zip(grid[0], panels, strict=True):
        line_axes(ax, xlabel, {label: (x, y) for label, y in lines.items()})
    fig.suptitle(title, fontsize="medium")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK:
        fig.savefig(path, dpi=100)
