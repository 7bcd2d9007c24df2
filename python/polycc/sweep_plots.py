"""Sweep plots: each summary metric against each swept key, the mean over seeds with its 95 %
confidence interval (Student's t), and each run's value as a dot.

Grid values are ordered by the quantity they state, not as text: `"500pkt"` before `"2000pkt"`,
`"2Mbps"` before `"10Mbps"`, `"0.5s"` before `"40ms"`... the other way round (`quantity`
converts the scenario units of README "Scenario files" to seconds, bit/s and bytes). On the x
axis they are evenly spaced categories labelled as written: a grid is usually geometric
(1, 10, 100 Mbit/s; loss 0, 0.1 %, 1 %), and a linear axis would crowd its small values.

With two or more swept keys, the plot against one key has a line per combination of the others
(up to MAX_LINES; beyond that one line over all of them). Sweeps of explicit points, whose keys
vary together, get no plots (`is_cartesian`).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polycc.plots import _LOCK, Plot, figure
from polycc.scenario import format_value

#: (results.parquet column, axis label) plotted against each swept key, when present.
METRICS: tuple[tuple[str, str], ...] = (
    ("total_goodput_mbps", "total goodput (Mbit/s)"),
    ("min_goodput_mbps", "lowest flow goodput (Mbit/s)"),
    ("jain_index", "Jain's index"),
    ("max_rtt_p95_ms", "highest flow RTT p95 (ms)"),
    ("mean_loss_rate", "mean loss rate"),
    ("mean_utilization", "mean link utilisation"),
)
#: More lines than this (combinations of the other keys) are merged into one.
MAX_LINES = 6

_QUANTITY = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
#: Scenario units (lower case) -> (dimension, factor to seconds, bit/s or bytes). A packet is a
#: full 1500-byte packet on the wire, as the simulator counts a queue in packets; `bdp` is
#: relative to the path and ordered only against other `bdp` values.
_UNITS: dict[str, tuple[str, float]] = {
    "": ("number", 1.0),
    "ns": ("duration", 1e-9),
    "us": ("duration", 1e-6),
    "ms": ("duration", 1e-3),
    "s": ("duration", 1.0),
    "min": ("duration", 60.0),
    "bps": ("rate", 1.0),
    "kbps": ("rate", 1e3),
    "mbps": ("rate", 1e6),
    "gbps": ("rate", 1e9),
    "b": ("size", 1.0),
    "kb": ("size", 1e3),
    "mb": ("size", 1e6),
    "gb": ("size", 1e9),
    "kib": ("size", 1024.0),
    "mib": ("size", 1024.0**2),
    "pkt": ("size", 1500.0),
    "pkts": ("size", 1500.0),
    "packets": ("size", 1500.0),
    "bdp": ("bdp", 1.0),
}


def quantity(value: Any) -> tuple[str, float] | None:
    """(dimension, magnitude in base units) of a grid value: a number, or a string with a
    scenario unit ("10Mbps" -> ("rate", 1e7)); None for anything else (a CCA name)."""
    value = _plain(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return ("number", float(value)) if not math.isnan(value) else None
    m = _QUANTITY.match(value) if isinstance(value, str) else None
    if not m or m.group(2).lower() not in _UNITS:
        return None
    dim, factor = _UNITS[m.group(2).lower()]
    return dim, float(m.group(1)) * factor


def sort_key(value: Any) -> tuple[int, str, float, str]:
    """Orders grid values: quantities by dimension, then magnitude; then the rest as text."""
    q = quantity(value)
    if q is not None:
        return 0, q[0], q[1], ""
    return 1, "", 0.0, _text(value)


def sorted_values(values: Sequence[Any]) -> list[Any]:
    """The distinct values, ordered by `sort_key`."""
    distinct: dict[str, Any] = {}
    for v in values:
        distinct.setdefault(_text(v), v)
    return sorted(distinct.values(), key=sort_key)


def _plain(value: Any) -> Any:
    """A Python scalar for a numpy one (pandas hands group keys over as numpy scalars)."""
    return value.item() if isinstance(value, np.generic) else value


def _text(value: Any) -> str:
    value = _plain(value)
    return value if isinstance(value, str) else format_value(value)


#: Student's t quantile 0.975 for 1..30 degrees of freedom (two-sided 95 % interval).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)  # fmt: skip


def mean_ci(values: Sequence[float]) -> tuple[float, float, int]:
    """(mean, half-width of the 95 % confidence interval, n) of the finite values; the half-width
    is 0 for one value and NaN for none."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(v[0]), 0.0, 1
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    return float(v.mean()), t * float(v.std(ddof=1)) / math.sqrt(n), n


#: Longer grid values (inline tables) are shortened on the x axis; index.html shows them whole.
MAX_TICK = 16


def tick_labels(values: Sequence[Any]) -> list[str]:
    """x-axis labels: the values as written, a long one shortened to its `name` (an inline CCA
    table) or its start, with "…"; shortened labels that coincide are numbered."""
    out = []
    for v in values:
        text = _text(v)
        if len(text) <= MAX_TICK:
            out.append(text)
            continue
        table: Any = _plain(v)
        if isinstance(table, str) and table.startswith("{"):
            with contextlib.suppress(ValueError):  # not JSON: shortened as text
                table = json.loads(table)
        head = str(table["name"]) if isinstance(table, dict) and "name" in table else text[: MAX_TICK - 2]
        out.append(head + "…")
    if len(set(out)) < len(out):
        out = [f"{t} #{i + 1}" if t.endswith("…") else t for i, t in enumerate(out)]
    return out


def _file_name(key: str) -> str:
    return "sweep-" + re.sub(r"[^A-Za-z0-9_.-]", "_", key) + ".png"


def _lines(ok: pd.DataFrame, key: str, others: list[str]) -> list[tuple[str, pd.DataFrame]]:
    if not others:
        return [("", ok)]
    groups = list(ok.groupby(others, sort=False, dropna=False))
    if len(groups) > MAX_LINES:
        return [(f"mean over {len(groups)} combinations of {', '.join(others)}", ok)]
    groups.sort(key=lambda vg: [sort_key(vg[1][k].iloc[0]) for k in others])
    columns = [tick_labels([g[k].iloc[0] for _, g in groups]) for k in others]
    if len(others) == 1:  # the legend's title names the key
        return [(label, g) for label, (_, g) in zip(columns[0], groups, strict=True)]
    return [
        (", ".join(f"{k}={col[i]}" for k, col in zip(others, columns, strict=True)), g)
        for i, (_, g) in enumerate(groups)
    ]


def sweep_figures(results: pd.DataFrame, keys: Sequence[str]) -> list[tuple[str, Plot, list[Any], list[str]]]:
    """(key, plot, x values in order, metrics) of each figure `write_sweep_plots` draws: one per
    key with at least two values, over the runs that succeeded."""
    ok = _succeeded(results)
    metrics = [c for c, _ in METRICS if c in ok.columns and bool(ok[c].notna().any())]
    if not is_cartesian(results, keys):  # failed runs count: they are points of the grid
        return []
    out = []
    for key in keys:
        if key not in ok.columns or not metrics:
            continue
        xs = sorted_values(list(ok[key]))
        if len(xs) >= 2:
            out.append((key, Plot(f"Summary metrics against {key}", _file_name(key)), xs, metrics))
    return out


def is_cartesian(results: pd.DataFrame, keys: Sequence[str]) -> bool:
    """Whether the runs cover every combination of the keys' values (a `--grid` sweep). Explicit
    points (keys that vary together, a reproduction's list of setups) are not: a plot against
    one key would mix the others' changes into it, so none is drawn."""
    keys = [k for k in keys if k in results.columns]
    if not keys or results.empty or bool(results[keys].isna().to_numpy().any()):
        return not keys
    text = results[keys].map(_text)
    combos = len(text.drop_duplicates())
    return combos == math.prod(int(text[k].nunique()) for k in keys)


def _succeeded(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["status"] == "ok"] if "status" in results.columns else results


def write_sweep_plots(results: pd.DataFrame, keys: Sequence[str], out_dir: Path) -> list[Plot]:
    """Writes sweep-<key>.png for each swept key into out_dir; returns the plots written."""
    ok = _succeeded(results)
    seeds = int(ok["seed"].nunique()) if "seed" in ok.columns else 1
    stat = "mean and 95 % CI" if seeds > 1 else "one run each"
    labels = dict(METRICS)
    made = []
    for key, plot, xs, metrics in sweep_figures(results, keys):
        position = {_text(x): i for i, x in enumerate(xs)}
        lines = _lines(ok, key, [k for k in keys if k != key])
        ticks = tick_labels(xs)
        cols = 2 if len(metrics) > 1 else 1
        rows = -(-len(metrics) // cols)
        with _LOCK:
            fig, grid = figure(10 if cols == 2 else 6, 2.4, rows, cols)
            for ax, metric in zip(grid.flat, metrics, strict=False):
                for j, (label, g) in enumerate(lines):
                    offset = (j - (len(lines) - 1) / 2) * 0.08  # error bars side by side
                    _draw_metric(ax, g, key, metric, position, offset, label or "mean", f"C{j % 10}")
                ax.set_ylabel(labels[metric], fontsize="small")
                ax.set_xticks(range(len(xs)), ticks, fontsize="small")
                ax.set_xlim(-0.5, len(xs) - 0.5)
                ax.grid(True, alpha=0.3)
            for ax in list(grid.flat)[len(metrics) :]:
                ax.set_visible(False)
            for ax in grid[-1, :]:
                ax.set_xlabel(key)
            others = [k for k in keys if k != key]
            if len(lines) > 1 or lines[0][0]:
                title = others[0] if len(others) == 1 and len(lines) > 1 else None
                grid[0, 0].legend(fontsize="x-small", title=title, title_fontsize="x-small", framealpha=0.7)
            fig.suptitle(f"{plot.title}: {stat} over {seeds} seed{'s' if seeds != 1 else ''}")
            fig.savefig(out_dir / plot.file, dpi=100)
        made.append(plot)
    return made


def _draw_metric(
    ax: Any,
    g: pd.DataFrame,
    key: str,
    metric: str,
    position: dict[str, int],
    offset: float,
    label: str,
    color: str,
) -> None:
    points = []
    for x, runs in g.groupby(key, sort=False, dropna=False):
        mean, half, n = mean_ci(list(runs[metric]))
        if n:
            xi = position[_text(x)] + offset
            points.append((xi, mean, half))
            ax.plot(np.full(n, xi), runs[metric].dropna().to_numpy(dtype=float), ".", color=color, alpha=0.3)
    points.sort()
    if points:
        x, y, err = (np.array(c) for c in zip(*points, strict=True))
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color=color, label=label, linewidth=1.2)
