"""PNG plots of one run's time series.

Uses matplotlib's object API with the Agg canvas (no pyplot). Sweeps write runs from several
threads, and matplotlib is not documented as thread-safe, so drawing is serialised by a lock;
simulation still runs in parallel. Under that lock the stacked time-series figures are kept and
drawn again (`_panel_axes`), since building a figure's axes and ticks costs more than the lines.

Axis limits are robust (`y_limits`): one flow's extreme values (PIBES's 10 Gbit/s burst pacing
and 68 MB window, a bandwidth estimate spiking to 30× the capacity) would flatten every other
line, so a panel ends at a physical bound (a multiple of the link capacity for rates, of the
path's bandwidth-delay product for windows) or at a multiple of its 99th percentile, whichever
is lower; values above the axis are marked by triangles on its top edge and a note gives their
maximum. Above `GROUP_ABOVE` flows, per-flow panels show one colour per CCA: the mean over its
active flows and a band from their 10th to their 90th percentile in each bin. The goodput panel
has a fair-share line (`fair_share_series`): each bottleneck's capacity in the bin divided by the
number of flows active on it then.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_LOCK = threading.Lock()
#: Above this many series a legend hides the plot; it is left out.
MAX_LEGEND = 12
#: Above this many flows, per-flow panels group the flows by CCA (mean line and spread band):
#: ten colours do not tell 50 flows apart, and their legend would hide the plot.
GROUP_ABOVE = 8
#: The spread band of a CCA's flows: these percentiles of their values in each bin.
BAND_PERCENTILES = (10.0, 90.0)
#: A rate axis ends at most at this multiple of the largest link capacity: BBR's startup paces
#: at 2/ln 2 = 2.89 times the bandwidth it measured, more is a controller's burst rate.
RATE_CLIP_CAPACITY = 3.0
#: A bandwidth estimate's axis ends at most at this multiple of the largest link capacity: an
#: estimate further above anything the link offered is noise (PIBES's B on a cellular trace
#: reaches 17 times it), and would squeeze the target rate and the capacity to the bottom.
ESTIMATE_CLIP_CAPACITY = 1.5
#: A window axis ends at most at this multiple of capacity × the flows' 99th-percentile RTT (the
#: path's bandwidth-delay product with its queue): slow start overshoots it by up to twice.
WINDOW_CLIP_BDP = 4.0
#: Values above OUTLIER_FACTOR × the panel's OUTLIER_PERCENTILE are drawn as clipped.
OUTLIER_PERCENTILE = 99.0
OUTLIER_FACTOR = 3.0
#: Room above the highest value shown, so lines stay clear of the legend.
HEADROOM = 1.2


@dataclass(frozen=True)
class Plot:
    title: str
    file: str


@dataclass
class Series:
    label: str
    t: np.ndarray
    y: np.ndarray
    style: dict[str, Any] = field(default_factory=dict)
    #: A band drawn behind the line (a group's spread), same colour.
    band: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class Panel:
    ylabel: str
    series: list[Series]
    #: Values above this are outside any sensible axis (see RATE_CLIP_CAPACITY).
    clip: float | None = None
    #: Whether values far above the panel's 99th percentile are clipped too (not for counts and
    #: flags, where a rare high value is the information).
    robust: bool = True


@dataclass(frozen=True)
class YLimits:
    bottom: float
    top: float
    #: The largest value, when it lies above `top` (drawn clipped).
    clipped_max: float | None = None


def y_limits(panel: Panel) -> YLimits | None:
    """The y range of a panel: from 0 (or the lowest value) to the highest value kept, with
    HEADROOM; values above `panel.clip` or far above the panel's 99th percentile are not kept.
    None when the panel has no finite value."""
    parts = []
    for s in panel.series:
        parts.append(s.y)
        if s.band is not None:
            parts.extend(s.band)
    v = np.concatenate([p[np.isfinite(p)] for p in parts]) if parts else np.empty(0)
    if not v.size:
        return None
    low, high = float(v.min()), float(v.max())
    kept = v
    if panel.clip is not None and panel.clip > 0:
        kept = kept[kept <= panel.clip]
    if panel.robust and kept.size:
        # Over the values within the physical bound: a flow above it all the time must not
        # raise the percentile that judges the others.
        p = float(np.percentile(kept, OUTLIER_PERCENTILE))
        if p > 0:
            kept = kept[kept <= OUTLIER_FACTOR * p]
    cut = panel.clip if panel.clip is not None and panel.clip > 0 else high
    top = float(kept.max()) if kept.size else cut
    bottom = min(0.0, float(kept.min()) if kept.size else low)
    top = top * HEADROOM if top > 0 else 1.0
    return YLimits(bottom, top, high if high > top else None)


def _series(df: pd.DataFrame, key: str, column: str, scale: float = 1.0, **style: Any) -> list[Series]:
    """One series per value of `key` (a flow, a link)."""
    if df.empty or column not in df.columns or key not in df.columns:
        return []
    return [
        Series(
            label=str(name),
            t=g["t_s"].to_numpy(dtype=float),
            y=g[column].to_numpy(dtype=float) * scale,
            style=dict(style),
        )
        for name, g in df.groupby(key, sort=False)
    ]


def active_rows(flows: pd.DataFrame) -> np.ndarray:
    """Whether each row's flow was active in that bin (started, not yet stopped or finished): the
    recorder writes a window only then. A flow that never records one (unresponsive `cbr` and
    `poisson` traffic has no congestion window) counts as active in the bins it carried data."""
    n = len(flows)
    if "cwnd_bytes" in flows.columns:
        window = np.isfinite(flows["cwnd_bytes"].to_numpy(dtype=float))
    else:
        window = np.zeros(n, dtype=bool)
    rate = next((c for c in ("throughput_mbps", "goodput_mbps") if c in flows.columns), None)
    carried = flows[rate].to_numpy(dtype=float) > 0 if rate else np.zeros(n, dtype=bool)
    out: np.ndarray
    if "flow" not in flows.columns:
        out = window | carried
        return out
    codes, _ = pd.factorize(flows["flow"])
    windowed = np.zeros(codes.max() + 1 if n else 0, dtype=bool)
    np.logical_or.at(windowed, codes, window)
    out = window | (~windowed[codes] & carried)
    return out


def flow_paths(scenario: Mapping[str, Any]) -> dict[str, list[str]]:
    """{flow id: the link directions its data crosses, named as in links.parquet} from a resolved
    scenario: `path` or the first link, `<id>:reverse` for a `reverse` flow, and the ids of a
    flow entry with `count` > 1 (`<id>-1`, `<id>-2`, ...)."""
    links = [str(link.get("id")) for link in scenario.get("links", []) if isinstance(link, Mapping)]
    out: dict[str, list[str]] = {}
    for flow in scenario.get("flows", []):
        if not isinstance(flow, Mapping):
            continue
        path = [str(p) for p in flow.get("path") or links[:1]]
        if flow.get("reverse"):
            path = [f"{p}:reverse" for p in path]
        count = int(flow.get("count", 1))
        fid = str(flow.get("id"))
        for i in [fid] if count == 1 else [f"{fid}-{k}" for k in range(1, count + 1)]:
            out[i] = path
    return out


#: The fair-share line: dotted black, over the flows' lines and below the legend.
FAIR_SHARE_STYLE: dict[str, Any] = {"color": "black", "linestyle": ":", "linewidth": 1.4, "zorder": 3}


def fair_share_series(
    flows: pd.DataFrame, links: pd.DataFrame, paths: Mapping[str, Sequence[str]] | None = None
) -> list[Series]:
    """The fair share over time: a bottleneck's capacity in each bin (`capacity_mbps`, so a
    schedule or a trace shows) divided by the number of flows active on it in that bin
    (`active_rows`), NaN while none is. One line per bottleneck, the link direction of each flow's
    path with the lowest share on average; a link that never carries two flows at once gets none
    (its line would be the capacity line). `paths` ({flow id: link directions}, `flow_paths`)
    defaults to every flow crossing the first forward link. Capacity counts headers, as the
    capacity line does."""
    need = {"t_s", "flow"}
    if flows.empty or links.empty or not need <= set(flows.columns) or "capacity_mbps" not in links.columns:
        return []
    t_codes, t_values = pd.factorize(flows["t_s"], sort=True)
    f_codes, f_values = pd.factorize(flows["flow"])
    active = np.zeros((len(t_values), len(f_values)), dtype=bool)
    active[t_codes, f_codes] = active_rows(flows)
    capacity = {
        str(name): pd.Series(g["capacity_mbps"].to_numpy(dtype=float), index=g["t_s"].to_numpy(dtype=float))
        .groupby(level=0)
        .mean()
        .reindex(np.asarray(t_values, dtype=float))
        .to_numpy()
        for name, g in links.groupby("link", sort=False)
    }
    if paths is None:
        first = next((name for name in capacity if not name.endswith(":reverse")), None)
        paths = {str(f): [first] for f in f_values} if first is not None else {}
    crossing: dict[str, list[int]] = {}
    for j, f in enumerate(f_values):
        for name in paths.get(str(f), []):
            if name in capacity:
                crossing.setdefault(name, []).append(j)
    share: dict[str, np.ndarray] = {}
    most: dict[str, int] = {}
    for name, members in crossing.items():
        n = active[:, members].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share[name] = np.where(n > 0, capacity[name] / n, np.nan)
        most[name] = int(n.max()) if n.size else 0

    def average(name: str) -> float:
        v = share[name][np.isfinite(share[name])]
        return float(v.mean()) if v.size else math.inf

    bottlenecks: list[str] = []
    for f in f_values:
        on = [name for name in paths.get(str(f), []) if name in share]
        if on:
            b = min(on, key=average)
            if b not in bottlenecks and most[b] > 1:
                bottlenecks.append(b)
    t = np.asarray(t_values, dtype=float)
    return [
        Series(
            "fair share" if len(bottlenecks) == 1 else f"fair share {b}",
            t,
            share[b],
            dict(FAIR_SHARE_STYLE),
        )
        for b in bottlenecks
    ]


def _row_percentiles(values: np.ndarray, q: float) -> np.ndarray:
    """The q-th percentile of each row's finite values (NaN for a row without any), with numpy's
    default linear interpolation; `np.nanpercentile` along an axis loops in Python, row by row."""
    ordered = np.sort(values, axis=1)  # NaN last
    n = np.isfinite(values).sum(axis=1)
    pos = np.maximum(n - 1, 0) * q / 100.0
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    rows = np.arange(values.shape[0])
    below, above = ordered[rows, lo], ordered[rows, hi]
    out: np.ndarray = below + (above - below) * (pos - lo)
    out[n == 0] = np.nan
    return out


def _grouped(
    df: pd.DataFrame, column: str, ccas: Mapping[str, str], scale: float, fmt: str, style: Mapping[str, Any]
) -> list[Series]:
    """Per CCA, the mean of its flows' values in each bin, with their 10-90th percentile band;
    one colour per CCA. Bins where none of its flows is active are NaN (gaps)."""
    cca_of = df["flow"].map({f: ccas.get(str(f), "other") for f in df["flow"].unique()})
    out = []
    for i, (cca, rows) in enumerate(df.groupby(cca_of.to_numpy(), sort=False)):
        # A bins × flows array, filled by position (one row per flow per bin).
        t_codes, t_values = pd.factorize(rows["t_s"], sort=True)
        f_codes, f_values = pd.factorize(rows["flow"])
        values = np.full((len(t_values), len(f_values)), np.nan)
        values[t_codes, f_codes] = rows[column].to_numpy(dtype=float) * scale
        n = np.isfinite(values).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, np.nansum(values, axis=1) / n, np.nan)
        lo, hi = (_row_percentiles(values, q) for q in BAND_PERCENTILES)
        t = np.asarray(t_values, dtype=float)
        colour = {**style, "color": f"C{i % 10}"}
        if len(f_values) == 1:  # a CCA with one flow: that flow's line, named
            out.append(Series(fmt.format(f"{f_values[0]} ({cca})"), t, mean, colour))
        else:
            label = fmt.format(f"{cca} ×{len(f_values)} (mean, p10-p90)")
            out.append(Series(label, t, mean, colour, band=(lo, hi)))
    return out


def flow_series(
    flows: pd.DataFrame,
    column: str,
    ccas: Mapping[str, str] | None,
    scale: float = 1.0,
    fmt: str = "{}",
    **style: Any,
) -> list[Series]:
    """A per-flow quantity: one line per flow, or grouped by CCA (`_grouped`) above GROUP_ABOVE
    flows (all in one group when `ccas`, {flow id: CCA}, is not known)."""
    if flows.empty or column not in flows.columns:
        return []
    if flows["flow"].nunique() > GROUP_ABOVE:
        return _grouped(flows, column, ccas or {}, scale, fmt, style)
    return _labeled(_series(flows, "flow", column, scale, **style), fmt)


#: Line styles cycled over flows where equal values would hide each other (RTTs of flows on the
#: same path): a dashed line over a solid one shows both colours.
_DASHES = ("-", "--", "-.", ":")


def _dashed(series: list[Series]) -> list[Series]:
    for i, s in enumerate(series):
        s.style.setdefault("linestyle", _DASHES[i % len(_DASHES)])
    return series


#: Figure margins in inches (left, right, top under the title, bottom under the x label) and
#: the gap between stacked panels. Fixed margins instead of matplotlib's constrained layout,
#: which measured every tick label again for each figure and took about 40 % of the drawing time.
MARGINS_IN = (0.9, 0.15, 0.45, 0.5)
PANEL_GAP_IN = 0.25


def figure(width: float, panel_height: float, rows: int = 1, cols: int = 1, **kw: Any) -> tuple[Any, Any]:
    """An Agg figure of `rows` × `cols` axes, each `panel_height` inches high, with fixed margins;
    returns (figure, 2-D array of axes). `kw` goes to `Figure.subplots` (e.g. sharex)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    left, right, top, bottom = MARGINS_IN
    height = rows * panel_height + (rows - 1) * PANEL_GAP_IN + top + bottom
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        top=1 - top / height,
        bottom=bottom / height,
        hspace=PANEL_GAP_IN / panel_height,
        wspace=(left + right) / ((width - left - right) / cols) if cols > 1 else 0.2,
    )
    return fig, fig.subplots(rows, cols, squeeze=False, **kw)


#: Time-series figures by panel count, drawn again for each plot (callers hold `_LOCK`): a new
#: figure's axes, ticks and their labels cost more than the lines themselves.
_PANEL_FIGURES: dict[int, tuple[Any, Any]] = {}


def line_axes(ax: Any, xlabel: str, lines: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> None:
    """Labelled lines with markers on `ax` (a parameter on x, values from 0 up), grid and legend."""
    for label, (x, y) in lines.items():
        ax.plot(list(x), list(y), marker="o", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")


def _panel_axes(rows: int) -> tuple[Any, Any]:
    """A stacked figure of `rows` panels sharing the time axis, emptied for a new plot."""
    if rows not in _PANEL_FIGURES:
        fig, grid = figure(9, 2.0, rows, sharex=True)
        _PANEL_FIGURES[rows] = (fig, grid[:, 0])
    fig, axes = _PANEL_FIGURES[rows]
    for ax in axes:
        for artist in [*ax.lines, *ax.texts, *ax.collections]:
            artist.remove()
        if (legend := ax.get_legend()) is not None:
            legend.remove()
        ax.set_prop_cycle(None)
        ax.set_autoscale_on(True)
    return fig, axes


def _draw(path: Path, title: str, panels: list[Panel]) -> list[YLimits | None]:
    fig, axes = _panel_axes(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        for s in panel.series:
            (line,) = ax.plot(s.t, s.y, label=s.label, **{"linewidth": 1.2, **s.style})
            if s.band is not None:
                ax.fill_between(s.t, *s.band, color=line.get_color(), alpha=0.2, linewidth=0)
    for ax in axes:
        ax.relim()
    for ax in axes:
        ax.autoscale_view()
    limits = [y_limits(panel) for panel in panels]
    for ax, panel, lim in zip(axes, panels, limits, strict=True):
        if lim is None:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="grey")
            ax.set_ylim(0, 1)  # else a kept figure would keep the limits of its previous plot
        else:
            ax.set_ylim(bottom=lim.bottom, top=lim.top)
            if lim.clipped_max is not None:
                _mark_clipped(ax, panel, lim)
        ax.set_ylabel(panel.ylabel)
        ax.grid(True, alpha=0.3)
        if 0 < len(panel.series) <= MAX_LEGEND:
            ax.legend(loc="upper right", fontsize="small", ncols=min(len(panel.series), 4))
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.savefig(path, dpi=100)
    return limits


#: At most this many clipped markers per series: a flow above the axis all the time gets a
#: dotted row along the top edge, not a solid bar.
MAX_CLIP_MARKERS = 40


def _mark_clipped(ax: Any, panel: Panel, lim: YLimits) -> None:
    """Triangles on the top edge where a line leaves the axis, and a note naming those series
    and their largest value."""
    names = []
    for s, line in zip(panel.series, list(ax.lines), strict=False):
        above = np.flatnonzero(np.isfinite(s.y) & (s.y > lim.top))
        if not above.size:
            continue
        peak = float(np.nanmax(s.y))
        names.append(f"{s.label} (up to {peak:,.0f})" if peak >= 100 else f"{s.label} (up to {peak:.3g})")
        above = above[:: max(1, -(-above.size // MAX_CLIP_MARKERS))]
        ax.plot(
            s.t[above],
            np.full(above.size, lim.top),
            linestyle="none",
            marker="^",
            markersize=4,
            color=line.get_color(),
            clip_on=False,
            label="_clipped",
        )
    shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    # Above the panel, in the gap between panels: inside, it would collide with the legend.
    ax.text(
        0.0,
        1.01,
        f"\u25b2 above the axis: {shown}",
        transform=ax.transAxes,
        ha="left",
        va="bottom",
        fontsize="x-small",
        color="dimgrey",
    )


def _has(df: pd.DataFrame, column: str) -> bool:
    return column in df.columns and bool(df[column].notna().any())


def _labeled(series: list[Series], fmt: str) -> list[Series]:
    for s in series:
        s.label = fmt.format(s.label)
    return series


def _reported(series: list[Series]) -> list[Series]:
    """The series of flows that report the value (a CUBIC flow beside Janus flows has no stage)."""
    return [s for s in series if bool(np.isfinite(s.y).any())]


def _policy_panels(
    flows: pd.DataFrame, ccas: Mapping[str, str] | None, rate_clip: float | None
) -> list[Panel]:
    """Panels for application targets and policy telemetry (Janus: stage, R', P_avg, D_p), each
    present only when some flow reports it."""
    panels: list[Panel] = []
    if _has(flows, "cc_stage"):
        panels.append(
            Panel(
                "stage (1 = aggressive)",
                flow_series(flows, "cc_stage", ccas, drawstyle="steps-post"),
                robust=False,
            )
        )
    targets = (
        flow_series(flows, "cc_target_rate_mbps", ccas, fmt="R' {}")
        if _has(flows, "cc_target_rate_mbps")
        else []
    )
    if _has(flows, "target_rate_mbps"):
        targets += flow_series(flows, "target_rate_mbps", ccas, fmt="R {}", linestyle="--", linewidth=1.0)
    if targets:
        panels.append(Panel("target rate (Mbit/s)", targets, clip=rate_clip))
    if _has(flows, "satisfaction"):
        panels.append(Panel("satisfaction (goodput / R)", flow_series(flows, "satisfaction", ccas)))
    if _has(flows, "cc_p_avg_mbps"):
        panels.append(Panel("P_avg (Mbit/s)", flow_series(flows, "cc_p_avg_mbps", ccas), clip=rate_clip))
    if _has(flows, "cc_dp_ms"):
        panels.append(Panel("D_p (ms)", flow_series(flows, "cc_dp_ms", ccas)))
    return [Panel(p.ylabel, _reported(p.series), p.clip, p.robust) for p in panels]


def _draw_cdf(
    path: Path,
    title: str,
    xlabel: str,
    curves: list[tuple[str, np.ndarray]],
    bounds: Mapping[str, float] | None = None,
) -> None:
    fig, grid = figure(9, 3.0)
    ax = grid[0, 0]
    for label, values in curves:
        x = np.sort(values[np.isfinite(values)])
        if x.size:
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=label, linewidth=1.2)
    # One line per distinct bound (flows on the same path share it).
    for value in sorted({round(v, 3) for v in (bounds or {}).values()}):
        ax.axvline(value, color="grey", linestyle="--", linewidth=1.0, label=f"lower bound {value:.1f} ms")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of frames")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if 0 < len(curves) <= MAX_LEGEND:
        ax.legend(loc="lower right", fontsize="small")
    if bounds:
        ax.set_xlim(left=0)
    fig.suptitle(title)
    fig.savefig(path, dpi=100)


def frame_delay_curves(frames: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    """Per video flow, the delays (ms) of its settled, decoded frames."""
    if frames.empty or "delay_ms" not in frames.columns:
        return []
    settled = frames[(frames["settled"] == 1) & (frames["decoded"] == 1)]
    return [(str(f), g["delay_ms"].to_numpy(dtype=float)) for f, g in settled.groupby("flow", sort=False)]


def _video_panels(
    flows: pd.DataFrame, capacity: list[Series], ccas: Mapping[str, str] | None, estimate_clip: float | None
) -> list[Panel]:
    """PIBES's state over time (the paper's Figs. 8-9): bandwidth estimate against the capacity,
    the share s_k and the competing-flow flag, for the flows that report them. The estimate's
    axis ends by ESTIMATE_CLIP_CAPACITY × the capacity (its spikes reach 30 times it)."""
    if not _has(flows, "cc_share"):
        return []
    estimate = _reported(flow_series(flows, "cc_bw_estimate_mbps", ccas, fmt="estimate B {}"))
    sent = _reported(flow_series(flows, "cc_target_mbps", ccas, fmt="target R {}", linestyle=":"))
    return [
        Panel("estimate B, target R (Mbit/s)", estimate + sent + capacity, clip=estimate_clip),
        Panel("share s_k", _reported(flow_series(flows, "cc_share", ccas, drawstyle="steps-post"))),
        Panel(
            "competing flow flag",
            _reported(flow_series(flows, "cc_competing", ccas, drawstyle="steps-post")),
            robust=False,
        ),
    ]


def pool_members(scenario: Mapping[str, Any]) -> dict[str, list[str]]:
    """{flow id: member names} for the flows whose CCA is a PolyCC pool (`poly`), in the order of
    its telemetry's m0, m1, ... (the pilot, then the copilots)."""

    def name(spec: Any) -> str:
        if isinstance(spec, Mapping):
            return str(spec.get("name", "?"))
        return str(spec)

    out: dict[str, list[str]] = {}
    for flow in scenario.get("flows", []):
        cca = flow.get("cca") if isinstance(flow, Mapping) else None
        if cca == "poly":
            cca = {"name": "poly"}
        if isinstance(cca, Mapping) and cca.get("name") == "poly":
            # The defaults of the Rust `poly` builder (the paper's BBR pilot, CUBIC copilot).
            pilot = cca.get("pilot", "bbr")
            copilots = cca.get("copilots", ["cubic"])
            out[str(flow.get("id"))] = [name(pilot), *(name(c) for c in copilots)]
    return out


def _pool_panels(
    flows: pd.DataFrame,
    flow: str,
    members: Sequence[str],
    rate_clip: float | None,
    window_clip_kb: float | None,
) -> tuple[str, list[Panel]]:
    """PolyCC telemetry of one flow, one unit per panel: the members' own windows (what each
    wanted before the write-back) with the fused window and the bytes in flight; their own rates
    with the fused rate and the sender's pacing rate; the pilot's index only when it changes (the
    title names the pilot otherwise). Returns (title, panels)."""
    f = flows[flows["flow"] == flow]
    t = f["t_s"].to_numpy(dtype=float)

    def col(c: str, scale: float = 1.0) -> np.ndarray:
        return f[c].to_numpy(dtype=float) * scale if c in f.columns else np.full(len(f), np.nan)

    def present(series: list[Series]) -> list[Series]:
        return [s for s in series if bool(np.isfinite(s.y).any())]

    black = {"color": "black", "linewidth": 1.6, "zorder": 3}  # over the members it fuses
    red = {"linestyle": ":", "color": "red"}
    windows = present(
        [
            Series("fused cwnd", t, col("cc_fused_cwnd_bytes", 1e-3), dict(black)),
            Series("bytes in flight", t, col("inflight_bytes", 1e-3), dict(red)),
            *(Series(f"m{i} {m}", t, col(f"cc_m{i}_cwnd_bytes", 1e-3)) for i, m in enumerate(members)),
        ]
    )
    rates = present(
        [
            Series("fused rate", t, col("cc_fused_rate_mbps"), dict(black)),
            Series("sender pacing", t, col("pacing_rate_mbps"), dict(red)),
            *(
                Series(f"m{i} {m}", t, col(f"cc_m{i}_rate_mbps"), {"linestyle": "--"})
                for i, m in enumerate(members)
            ),
        ]
    )
    panels = [
        Panel("window (KB)", windows, clip=window_clip_kb),
        Panel("rate (Mbit/s)", rates, clip=rate_clip),
    ]
    pilots = col("cc_pilot")
    used = sorted({int(v) for v in pilots[np.isfinite(pilots)]})
    if len(used) > 1:
        legend = " / ".join(f"{i}={m}" for i, m in enumerate(members))
        pilot = Series(legend, t, pilots, {"drawstyle": "steps-post"})
        panels.append(Panel("pilot (member #)", [pilot], robust=False))
        roles = f"pilot changes between {', '.join(members[i] for i in used if i < len(members))}"
    else:
        k = used[0] if used and used[0] < len(members) else 0
        roles = f"pilot {members[k]} throughout"
    return f"PolyCC members of flow {flow} ({roles})", panels


def clip_bounds(flows: pd.DataFrame, links: pd.DataFrame) -> tuple[float | None, float | None]:
    """(rate clip in Mbit/s, window clip in KB): RATE_CLIP_CAPACITY × the largest link capacity,
    WINDOW_CLIP_BDP × that capacity × the flows' 99th-percentile RTT; None when unknown."""
    cap = links["capacity_mbps"].to_numpy(dtype=float) if "capacity_mbps" in links.columns else np.empty(0)
    cap = cap[np.isfinite(cap)]
    if not cap.size or cap.max() <= 0:
        return None, None
    cap_max = float(cap.max())
    rtt = flows["rtt_ms"].to_numpy(dtype=float) if "rtt_ms" in flows.columns else np.empty(0)
    rtt = rtt[np.isfinite(rtt)]
    window = None
    if rtt.size:
        bdp_kb = cap_max * 1e6 / 8 * float(np.percentile(rtt, 99)) * 1e-3 * 1e-3
        window = WINDOW_CLIP_BDP * bdp_kb if bdp_kb > 0 else None
    return RATE_CLIP_CAPACITY * cap_max, window


def figures(
    flows: pd.DataFrame,
    links: pd.DataFrame,
    *,
    pools: Mapping[str, Sequence[str]] | None = None,
    ccas: Mapping[str, str] | None = None,
    paths: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[Plot, list[Panel]]]:
    """The time-series figures `write_plots` draws, as data: (plot, panels) in drawing order.
    `paths` ({flow id: link directions}, `flow_paths`) places the fair-share line."""
    rate_clip, window_clip = clip_bounds(flows, links)
    capacity = _series(links, "link", "capacity_mbps", linestyle="--", color="grey", linewidth=1.0)
    for s in capacity:
        s.label = f"capacity {s.label}"
    goodput = flows
    if "goodput_mbps" in flows.columns and "flow" in flows.columns and flows["flow"].nunique() > GROUP_ABOVE:
        # A group's mean and band are over its active flows, comparable with the fair share: a
        # flow not started yet or finished delivers nothing and is no competitor.
        goodput = flows.assign(goodput_mbps=flows["goodput_mbps"].where(active_rows(flows)))
    fair = fair_share_series(flows, links, paths)
    out: list[tuple[Plot, list[Panel]]] = [
        (
            Plot("Goodput per flow", "goodput.png"),
            [
                Panel(
                    "goodput (Mbit/s)",
                    flow_series(goodput, "goodput_mbps", ccas) + fair + capacity,
                    clip=rate_clip,
                )
            ],
        ),
        (Plot("RTT per flow", "rtt.png"), [Panel("RTT (ms)", _dashed(flow_series(flows, "rtt_ms", ccas)))]),
        (
            Plot("Congestion window and pacing rate per flow", "cwnd.png"),
            [
                Panel("cwnd (KB)", flow_series(flows, "cwnd_bytes", ccas, scale=1e-3), clip=window_clip),
                Panel("pacing rate (Mbit/s)", flow_series(flows, "pacing_rate_mbps", ccas), clip=rate_clip),
            ],
        ),
        (
            Plot("Links: capacity, queueing delay, occupancy, drops", "links.png"),
            [
                Panel("capacity (Mbit/s)", _series(links, "link", "capacity_mbps"), robust=False),
                Panel("queue delay (ms)", _series(links, "link", "queue_delay_ms"), robust=False),
                Panel("queue (KB)", _series(links, "link", "queue_bytes", scale=1e-3), robust=False),
                Panel("drops per bin", _series(links, "link", "drops"), robust=False),
            ],
        ),
    ]
    policy = _policy_panels(flows, ccas, rate_clip)
    if policy:
        out.append((Plot("Application targets and policy state per flow", "policy.png"), policy))
    estimate_clip = rate_clip * ESTIMATE_CLIP_CAPACITY / RATE_CLIP_CAPACITY if rate_clip else None
    video = _video_panels(flows, capacity, ccas, estimate_clip)
    if video:
        out.append((Plot("Video: bandwidth estimate, share and competing-flow flag", "video.png"), video))
    for flow, members in (pools or {}).items():
        if "cc_m0_cwnd_bytes" in flows.columns and (flows.get("flow") == flow).any():
            title, panels = _pool_panels(flows, flow, members, rate_clip, window_clip)
            out.append((Plot(title, f"pool-{flow}.png"), panels))
    return out


def write_plots(
    flows: pd.DataFrame,
    links: pd.DataFrame,
    out_dir: Path,
    name: str,
    *,
    frames: pd.DataFrame | None = None,
    pools: Mapping[str, Sequence[str]] | None = None,
    frame_bounds: Mapping[str, float] | None = None,
    ccas: Mapping[str, str] | None = None,
    paths: Mapping[str, Sequence[str]] | None = None,
) -> list[Plot]:
    """Writes goodput.png, rtt.png, cwnd.png (per flow) and links.png (per link) into out_dir,
    frame_delay_cdf.png when there are video frames, policy.png when flows have application
    targets or policy telemetry, and pool-<flow>.png for each flow in `pools` ({flow id: PolyCC
    member names}, see `pool_members`) that recorded PolyCC telemetry, and video.png when a flow
    reports PIBES's share and competing flag. `frame_bounds` ({flow id: ms}, see
    `polycc.video.frame_delay_lower_bounds`) are drawn on the frame-delay CDF. `ccas` ({flow id:
    CCA name}) names the groups when there are more than GROUP_ABOVE flows; `paths` ({flow id:
    link directions}, see `flow_paths`) places the goodput panel's fair-share line (default:
    every flow on the first link)."""
    made_figures = figures(flows, links, pools=pools, ccas=ccas, paths=paths)
    curves = frame_delay_curves(frames) if frames is not None else []
    made = [p for p, _ in made_figures]
    with _LOCK:
        for plot, panels in made_figures:
            _draw(out_dir / plot.file, f"{name}: {plot.title}", panels)
        if curves:
            cdf = Plot("Frame delay CDF (first packet sent to frame decodable)", "frame_delay_cdf.png")
            _draw_cdf(out_dir / cdf.file, f"{name}: {cdf.title}", "frame delay (ms)", curves, frame_bounds)
            made.append(cdf)
    return made
