"""PNG plots of one run's time series.

Uses matplotlib's object API with the Agg canvas (no pyplot). Sweeps write runs from several
threads, and matplotlib is not documented as thread-safe, so drawing is serialised by a lock;
simulation still runs in parallel. Under that lock the stacked time-series figures are kept and
drawn again (`_panel_axes`), since building a figure's axes and ticks costs more than the lines.
"""

from __future__ import annotations

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


@dataclass
class Panel:
    ylabel: str
    series: list[Series]


def _series(df: pd.DataFrame, key: str, column: str, scale: float = 1.0, **style: Any) -> list[Series]:
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
        for artist in [*ax.lines, *ax.texts]:
            artist.remove()
        if (legend := ax.get_legend()) is not None:
            legend.remove()
        ax.set_prop_cycle(None)
        ax.set_autoscale_on(True)
    return fig, axes


def _draw(path: Path, title: str, panels: list[Panel]) -> None:
    fig, axes = _panel_axes(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        for s in panel.series:
            ax.plot(s.t, s.y, label=s.label, **{"linewidth": 1.2, **s.style})
    for ax in axes:
        ax.relim()
    for ax in axes:
        ax.autoscale_view()
    for ax, panel in zip(axes, panels, strict=True):
        finite = [s.y[np.isfinite(s.y)] for s in panel.series]
        top = max((float(v.max()) for v in finite if v.size), default=None)
        if top is None:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="grey")
        else:
            # Headroom above the highest value keeps lines clear of the legend.
            ax.set_ylim(
                bottom=min(0.0, *(float(v.min()) for v in finite if v.size)), top=top * 1.2 if top > 0 else 1
            )
        ax.set_ylabel(panel.ylabel)
        ax.grid(True, alpha=0.3)
        if 0 < len(panel.series) <= MAX_LEGEND:
            ax.legend(loc="upper right", fontsize="small", ncols=min(len(panel.series), 4))
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.savefig(path, dpi=100)


def _has(df: pd.DataFrame, column: str) -> bool:
    return column in df.columns and bool(df[column].notna().any())


def _labeled(series: list[Series], fmt: str) -> list[Series]:
    for s in series:
        s.label = fmt.format(s.label)
    return series


def _reported(series: list[Series]) -> list[Series]:
    """The series of flows that report the value (a CUBIC flow beside Janus flows has no stage)."""
    return [s for s in series if bool(np.isfinite(s.y).any())]


def _policy_panels(flows: pd.DataFrame) -> list[Panel]:
    """Panels for application targets and policy telemetry (Janus: stage, R', P_avg, D_p), each
    present only when some flow reports it."""
    panels: list[Panel] = []
    if _has(flows, "cc_stage"):
        panels.append(
            Panel("stage (1 = aggressive)", _series(flows, "flow", "cc_stage", drawstyle="steps-post"))
        )
    targets = (
        _labeled(_series(flows, "flow", "cc_target_rate_mbps"), "R' {}")
        if _has(flows, "cc_target_rate_mbps")
        else []
    )
    if _has(flows, "target_rate_mbps"):
        targets += _labeled(_series(flows, "flow", "target_rate_mbps", linestyle="--", linewidth=1.0), "R {}")
    if targets:
        panels.append(Panel("target rate (Mbit/s)", targets))
    if _has(flows, "satisfaction"):
        panels.append(Panel("satisfaction (goodput / R)", _series(flows, "flow", "satisfaction")))
    if _has(flows, "cc_p_avg_mbps"):
        panels.append(Panel("P_avg (Mbit/s)", _series(flows, "flow", "cc_p_avg_mbps")))
    if _has(flows, "cc_dp_ms"):
        panels.append(Panel("D_p (ms)", _series(flows, "flow", "cc_dp_ms")))
    return [Panel(p.ylabel, _reported(p.series)) for p in panels]


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


def _video_panels(flows: pd.DataFrame, capacity: list[Series]) -> list[Panel]:
    """PIBES's state over time (the paper's Figs. 8-9): bandwidth estimate against the capacity,
    the share s_k and the competing-flow flag, for the flows that report them."""
    if not _has(flows, "cc_share"):
        return []
    estimate = _reported(_labeled(_series(flows, "flow", "cc_bw_estimate_mbps"), "estimate {}"))
    sent = _reported(_labeled(_series(flows, "flow", "cc_target_mbps", linestyle=":"), "target {}"))
    return [
        Panel("estimate B, target R (Mbit/s)", estimate + sent + capacity),
        Panel("share s_k", _reported(_series(flows, "flow", "cc_share", drawstyle="steps-post"))),
        Panel(
            "competing flow flag",
            _reported(_series(flows, "flow", "cc_competing", drawstyle="steps-post")),
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


def _pool_panels(flows: pd.DataFrame, flow: str, members: Sequence[str]) -> list[Panel]:
    """PolyCC telemetry of one flow: the fused value and the sender's window on top, the pilot
    index, then one panel per member with its own window (what it wanted before the write-back)
    and its own rate."""
    f = flows[flows["flow"] == flow]
    t = f["t_s"].to_numpy(dtype=float)

    def col(c: str, scale: float = 1.0) -> np.ndarray:
        return f[c].to_numpy(dtype=float) * scale if c in f.columns else np.full(len(f), np.nan)

    if "cc_fused_rate_mbps" in f.columns:
        top = Panel(
            "fused rate (Mbit/s)",
            [
                Series("fused rate", t, col("cc_fused_rate_mbps"), {"color": "black"}),
                Series("sender pacing", t, col("pacing_rate_mbps"), {"linestyle": ":", "color": "red"}),
            ],
        )
    else:
        top = Panel(
            "fused cwnd (KB)",
            [
                Series("fused cwnd", t, col("cc_fused_cwnd_bytes", 1e-3), {"color": "black"}),
                Series("bytes in flight", t, col("inflight_bytes", 1e-3), {"linestyle": ":", "color": "red"}),
            ],
        )
    legend = " / ".join(f"{i}={m}" for i, m in enumerate(members))
    pilot = Panel("pilot (member #)", [Series(legend, t, col("cc_pilot"))])
    panels = [top, pilot]
    for i, m in enumerate(members):
        panels.append(
            Panel(
                f"m{i} {m}",
                [
                    Series(f"{m} cwnd (KB)", t, col(f"cc_m{i}_cwnd_bytes", 1e-3)),
                    Series(f"{m} rate (Mbit/s)", t, col(f"cc_m{i}_rate_mbps"), {"linestyle": "--"}),
                ],
            )
        )
    return panels


def write_plots(
    flows: pd.DataFrame,
    links: pd.DataFrame,
    out_dir: Path,
    name: str,
    *,
    frames: pd.DataFrame | None = None,
    pools: Mapping[str, Sequence[str]] | None = None,
    frame_bounds: Mapping[str, float] | None = None,
) -> list[Plot]:
    """Writes goodput.png, rtt.png, cwnd.png (per flow) and links.png (per link) into out_dir,
    frame_delay_cdf.png when there are video frames, policy.png when flows have application
    targets or policy telemetry, and pool-<flow>.png for each flow in `pools` ({flow id: PolyCC
    member names}, see `pool_members`) that recorded PolyCC telemetry, and video.png when a flow
    reports PIBES's share and competing flag. `frame_bounds` ({flow id: ms}, see
    `polycc.video.frame_delay_lower_bounds`) are drawn on the frame-delay CDF."""
    capacity = _series(links, "link", "capacity_mbps", linestyle="--", color="grey", linewidth=1.0)
    for s in capacity:
        s.label = f"capacity {s.label}"
    figures: list[tuple[Plot, list[Panel]]] = [
        (
            Plot("Goodput per flow", "goodput.png"),
            [Panel("goodput (Mbit/s)", _series(flows, "flow", "goodput_mbps") + capacity)],
        ),
        (Plot("RTT per flow", "rtt.png"), [Panel("RTT (ms)", _series(flows, "flow", "rtt_ms"))]),
        (
            Plot("Congestion window and pacing rate per flow", "cwnd.png"),
            [
                Panel("cwnd (KB)", _series(flows, "flow", "cwnd_bytes", scale=1e-3)),
                Panel("pacing rate (Mbit/s)", _series(flows, "flow", "pacing_rate_mbps")),
            ],
        ),
        (
            Plot("Links: capacity, queueing delay, occupancy, drops", "links.png"),
            [
                Panel("capacity (Mbit/s)", _series(links, "link", "capacity_mbps")),
                Panel("queue delay (ms)", _series(links, "link", "queue_delay_ms")),
                Panel("queue (KB)", _series(links, "link", "queue_bytes", scale=1e-3)),
                Panel("drops per bin", _series(links, "link", "drops")),
            ],
        ),
    ]
    policy = _policy_panels(flows)
    if policy:
        figures.append((Plot("Application targets and policy state per flow", "policy.png"), policy))
    video = _video_panels(flows, capacity)
    if video:
        figures.append((Plot("Video: bandwidth estimate, share and competing-flow flag", "video.png"), video))
    for flow, members in (pools or {}).items():
        if "cc_m0_cwnd_bytes" in flows.columns and (flows.get("flow") == flow).any():
            plot = Plot(f"PolyCC pool of {flow}", f"pool-{flow}.png")
            figures.append((plot, _pool_panels(flows, flow, members)))
    curves = frame_delay_curves(frames) if frames is not None else []
    made = [p for p, _ in figures]
    with _LOCK:
        for plot, panels in figures:
            _draw(out_dir / plot.file, f"{name}: {plot.title}", panels)
        if curves:
            cdf = Plot("Frame delay CDF (first packet sent to frame decodable)", "frame_delay_cdf.png")
            _draw_cdf(out_dir / cdf.file, f"{name}: {cdf.title}", "frame delay (ms)", curves, frame_bounds)
            made.append(cdf)
    return made
