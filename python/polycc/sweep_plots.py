"""Sweep plots: each summary metric against each swept key, the mean over seeds with its 95 %
confidence interval (Student's t), and each run's value as a dot.

Grid values are ordered by the quantity they state, not as text: `"500pkt"` before `"2000pkt"`,
`"2Mbps"` before `"10Mbps"`, `"0.5s"` before `"40ms"`... the other way round (`quantity`
converts the scenario units of README "Scenario files" to seconds, bit/s and bytes). When every
value of a key is a quantity of one dimension, the x axis is numeric (`x_axis`), in one unit named
in the axis label (the unit the values are written in when they share one, else the largest of
the dimension's units not above the median value); it is logarithmic when the values span more
than LOG_ABOVE_DECADES decades (a grid is often geometric: 1, 10, 100 Mbit/s), symmetric-log
when such a grid also holds 0 (loss 0, 0.1 %, 1 %). Names (CCAs, tables) stay evenly spaced
categories labelled as written.

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
from dataclasses import dataclass
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


#: Axis units of each dimension, (label, size in base units), smallest first; a numeric axis
#: takes the largest one not above the median value (1, 10, 100, 1000 Mbit/s, not 0.001 Gbit/s).
_AXIS_UNITS: dict[str, tuple[tuple[str, float], ...]] = {
    "duration": (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)),
    "rate": (("bit/s", 1.0), ("kbit/s", 1e3), ("Mbit/s", 1e6), ("Gbit/s", 1e9)),
    "size": (("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9)),
    "bdp": (("BDP", 1.0),),
    "number": (("", 1.0),),
}
#: A scenario unit as an axis unit's label, when all of a key's values are written in it.
_UNIT_LABELS: dict[str, str] = {
    "ns": "ns",
    "us": "µs",
    "ms": "ms",
    "s": "s",
    "min": "min",
    "bps": "bit/s",
    "kbps": "kbit/s",
    "mbps": "Mbit/s",
    "gbps": "Gbit/s",
    "b": "B",
    "kb": "KB",
    "mb": "MB",
    "gb": "GB",
    "kib": "KiB",
    "mib": "MiB",
    "pkt": "packets",
    "pkts": "packets",
    "packets": "packets",
    "bdp": "BDP",
}
#: A numeric axis is logarithmic when its values span more than this many decades.
LOG_ABOVE_DECADES = 1.5
#: At most this many ticks at the swept values themselves; more get matplotlib's ticks.
MAX_VALUE_TICKS = 12


@dataclass(frozen=True)
class XAxis:
    """How a swept key's values are placed on x."""

    #: "category" (evenly spaced, positions 0, 1, ...), "linear", "log" or "symlog".
    scale: str
    #: The x of each value, in `unit` (the category index for "category").
    positions: tuple[float, ...]
    #: The axis label's unit ("" for plain numbers and categories).
    unit: str
    #: Tick labels at `positions`, or None for matplotlib's own ticks.
    ticks: tuple[str, ...] | None
    #: The linear range around 0 of a "symlog" axis: the smallest nonzero |value|.
    linthresh: float | None = None

    def label(self, key: str) -> str:
        return f"{key} ({self.unit})" if self.unit else key


def _written_unit(value: Any) -> str:
    """The scenario unit a value is written in, lower case ("" for a number)."""
    m = _QUANTITY.match(value) if isinstance(value := _plain(value), str) else None
    unit = m.group(2).lower() if m else ""
    return "pkt" if unit in ("pkts", "packets") else unit


def x_axis(values: Sequence[Any]) -> XAxis:
    """The x axis of a key's values in order (`sorted_values`): numeric when all are quantities of
    one dimension, else categories labelled as written (`tick_labels`)."""
    quantities = [quantity(v) for v in values]
    dims = {q[0] for q in quantities if q is not None}
    if not values or any(q is None for q in quantities) or len(dims) != 1:
        return XAxis("category", tuple(float(i) for i in range(len(values))), "", tuple(tick_labels(values)))
    (dim,) = dims
    magnitudes = np.array([q[1] for q in quantities if q is not None])
    written = {_written_unit(v) for v in values}
    if len(written) == 1 and (only := next(iter(written))) in _UNIT_LABELS:
        unit, factor = _UNIT_LABELS[only], _UNITS[only][1]
    else:
        nonzero = np.abs(magnitudes[magnitudes != 0])
        middle = float(np.median(nonzero)) if nonzero.size else 1.0
        ladder = _AXIS_UNITS[dim]
        unit, factor = next(((u, f) for u, f in reversed(ladder) if f <= middle), ladder[0])
    x = magnitudes / factor
    if np.unique(x).size < x.size:  # one quantity written two ways ("1s", "1000ms"): as written
        return XAxis("category", tuple(float(i) for i in range(len(values))), "", tuple(tick_labels(values)))
    nonzero = np.abs(x[x != 0])
    decades = math.log10(float(nonzero.max() / nonzero.min())) if nonzero.size >= 2 else 0.0
    scale, linthresh = "linear", None
    if decades > LOG_ABOVE_DECADES:
        scale, linthresh = ("log", None) if bool((x > 0).all()) else ("symlog", float(nonzero.min()))
    ticks = None
    if len(x) <= MAX_VALUE_TICKS and _spread(x, scale, linthresh):
        ticks = tuple(f"{v:g}" for v in x)
    return XAxis(scale, tuple(float(v) for v in x), unit, ticks, linthresh)


def _scaled(x: np.ndarray, scale: str, linthresh: float | None) -> np.ndarray:
    """x in the axis's own coordinates (where it is evenly spaced), as matplotlib scales it."""
    from matplotlib.scale import LogTransform, SymmetricalLogTransform

    if scale == "log":
        return np.asarray(LogTransform(10).transform(x), dtype=float)
    if scale == "symlog" and linthresh:
        return np.asarray(SymmetricalLogTransform(10, linthresh, 1.0).transform(x), dtype=float)
    return np.asarray(x, dtype=float)


def _spread(x: np.ndarray, scale: str, linthresh: float | None) -> bool:
    """Whether ticks at these values stay legible: neighbours at least 1/25 of the span apart."""
    s = np.sort(_scaled(x, scale, linthresh))
    span = float(s[-1] - s[0]) if s.size else 0.0
    return span > 0 and float(np.diff(s).min()) >= span / 25


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
    made = []
    for key, plot, xs, metrics in sweep_figures(results, keys):
        with _LOCK:
            fig = draw_sweep(results, keys, key, plot, xs, metrics)
            fig.savefig(out_dir / plot.file, dpi=100)
        made.append(plot)
    return made


#: Error bars of the lines side by side: this fraction of the closest two values' distance apart.
LINE_OFFSET = 0.08


def draw_sweep(
    results: pd.DataFrame,
    keys: Sequence[str],
    key: str,
    plot: Plot,
    xs: Sequence[Any],
    metrics: Sequence[str],
) -> Any:
    """The figure of one entry of `sweep_figures` (key, plot, values, metrics): a panel per
    metric, x as `x_axis(xs)`. Callers that draw from several threads hold `polycc.plots._LOCK`."""
    ok = _succeeded(results)
    seeds = int(ok["seed"].nunique()) if "seed" in ok.columns else 1
    stat = "mean and 95 % CI" if seeds > 1 else "one run each"
    labels = dict(METRICS)
    axis = x_axis(xs)
    x = np.array(axis.positions)
    scaled = _scaled(x, axis.scale, axis.linthresh)
    gap = float(np.diff(np.sort(scaled)).min()) if len(x) > 1 else 1.0
    others = [k for k in keys if k != key]
    lines = _lines(ok, key, others)
    # Each line's x of each value (by its text), offset in the axis's own coordinates.
    placed = []
    for j in range(len(lines)):
        shifted = scaled + (j - (len(lines) - 1) / 2) * LINE_OFFSET * gap
        at = _unscaled(shifted, axis.scale, axis.linthresh)
        placed.append({_text(v): float(a) for v, a in zip(xs, at, strict=True)})
    cols = 2 if len(metrics) > 1 else 1
    rows = -(-len(metrics) // cols)
    fig, grid = figure(10 if cols == 2 else 6, 2.4, rows, cols)
    for ax, metric in zip(grid.flat, metrics, strict=False):
        _set_x_axis(ax, axis)
        for j, (label, g) in enumerate(lines):
            _draw_metric(ax, g, key, metric, placed[j], label or "mean", f"C{j % 10}")
        ax.set_ylabel(labels[metric], fontsize="small")
        ax.grid(True, alpha=0.3)
    for ax in list(grid.flat)[len(metrics) :]:
        ax.set_visible(False)
    for ax in grid[-1, :]:
        ax.set_xlabel(axis.label(key))
    if len(lines) > 1 or lines[0][0]:
        title = others[0] if len(others) == 1 and len(lines) > 1 else None
        grid[0, 0].legend(fontsize="x-small", title=title, title_fontsize="x-small", framealpha=0.7)
    fig.suptitle(f"{plot.title}: {stat} over {seeds} seed{'s' if seeds != 1 else ''}")
    return fig


def _unscaled(scaled: np.ndarray, scale: str, linthresh: float | None) -> np.ndarray:
    """The inverse of `_scaled`."""
    from matplotlib.scale import InvertedLogTransform, InvertedSymmetricalLogTransform

    if scale == "log":
        return np.asarray(InvertedLogTransform(10).transform(scaled), dtype=float)
    if scale == "symlog" and linthresh:
        return np.asarray(InvertedSymmetricalLogTransform(10, linthresh, 1.0).transform(scaled), dtype=float)
    return np.asarray(scaled, dtype=float)


def _set_x_axis(ax: Any, axis: XAxis) -> None:
    from matplotlib.ticker import NullFormatter, NullLocator

    n = len(axis.positions)
    if axis.scale == "category":
        ax.set_xticks(axis.positions, axis.ticks, fontsize="small")
        ax.set_xlim(-0.5, n - 0.5)
        return
    if axis.scale == "symlog":
        ax.set_xscale("symlog", base=10, linthresh=axis.linthresh, linscale=1.0)
    else:
        ax.set_xscale(axis.scale)
    if axis.ticks is not None:
        ax.set_xticks(axis.positions, axis.ticks, fontsize="small")
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.tick_params(axis="x", labelsize="small")
    # Room beside the outermost values for their error bars and dots, in the axis's coordinates.
    scaled = _scaled(np.array(axis.positions), axis.scale, axis.linthresh)
    pad = 0.06 * float(scaled.max() - scaled.min()) if n > 1 else 1.0
    low, high = _unscaled(np.array([scaled.min() - pad, scaled.max() + pad]), axis.scale, axis.linthresh)
    ax.set_xlim(float(low), float(high))


def _draw_metric(
    ax: Any,
    g: pd.DataFrame,
    key: str,
    metric: str,
    place: dict[str, float],
    label: str,
    color: str,
) -> None:
    points = []
    for x, runs in g.groupby(key, sort=False, dropna=False):
        mean, half, n = mean_ci(list(runs[metric]))
        if n:
            xi = place[_text(x)]
            points.append((xi, mean, half))
            ax.plot(np.full(n, xi), runs[metric].dropna().to_numpy(dtype=float), ".", color=color, alpha=0.3)
    points.sort()
    if points:
        x, y, err = (np.array(c) for c in zip(*points, strict=True))
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, color=color, label=label, linewidth=1.2)
