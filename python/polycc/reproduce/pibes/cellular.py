"""PIBES §IV-B b), Fig. 11: one video flow over trace-driven 3G and 4G links; how closely each
protocol tracks the capacity (capped at the encoder's R_max). Skipped per trace when the shared
trace file is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from polycc.reproduce.common import Context, Reproduction, Section, Table, mbps, ms, num, pct, prose, safe_div
from polycc.reproduce.pibes.measures import frame_delays, points, stat, trace_missing, video_runs
from polycc.reproduce.pibes.model import SETTLE_S, TRACES, lower_bound_ms
from polycc.reproduce.pibes.plots import capacity_series, comparison_plot
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, size_text
from polycc.reproduce.timeseries import flow_mean

if TYPE_CHECKING:
    from polycc.api import RunResult

#: 3a, 3b: PIBES tracks the capacity when it carries at least this share of it.
TRACKS = 0.8
_WHY_4G = prose(
    f"""
    A trace-driven link delivers in bursts (one {PACKET_BYTES}-byte opportunity per line of
    the trace), so the burst inter-arrival can under- or over-read the mean
    capacity; the estimate follows the trace's short-term rate.
    """
)


def _row(table: Table, net: str, k: str, r: RunResult, duration: float, r_max: float) -> float:
    """Adds one run's row; returns its throughput over min(capacity, R_max)."""
    t, cap = capacity_series(r)
    sel = (t >= SETTLE_S) & (t < duration)
    reachable = float(np.minimum(cap[sel], r_max).mean())
    thr = flow_mean(r, "video", "throughput_mbps", SETTLE_S, duration)
    d = frame_delays(r.frames, "video", SETTLE_S)
    track = safe_div(thr, reachable)
    table.add(
        net.upper(), k, mbps(float(cap[sel].mean())), mbps(thr), pct(track), ms(stat(d)), ms(stat(d, 95))
    )
    return track


def _claims(net: str, track: dict[str, float], r_max: float) -> list[Reproduction]:
    g3 = net == "3g"
    figure = "Fig. 11(a)" if g3 else "Fig. 11(c)"
    return [
        Reproduction.at_least(
            f"3{'a' if g3 else 'b'}",
            figure,
            f"PIBES tracks the {net.upper()} capacity: "
            f"throughput / min(capacity, R_max = {num(r_max)} Mbit/s)",
            "closely tracked, small gap (s_max)" if g3 else "hits the bitrate cap",
            track["PIBES"],
            TRACKS,
            pct,
            "" if g3 else _WHY_4G,
        ),
        Reproduction.at_least(
            f"3{'c' if g3 else 'd'}",
            figure,
            f"WebRTC uses less of the {net.upper()} capacity than PIBES: PIBES − GCC (same measure)",
            "not able to fully utilise" if g3 else "both hit the cap",
            track["PIBES"] - track["GCC"],
            0.0,
            points,
        ),
    ]


def _setup(file: ScenarioFile, duration: float, r_max: float) -> str:
    return prose(
        f"""
        One video flow over a trace-driven link: 3G is the T-Mobile UMTS driving downlink,
        4G the T-Mobile LTE short downlink (mahimahi traces from `../shared/traces/`, not
        the paper's own captures), one-way delay {num(file.one_way_ms())} ms,
        {size_text(file.buffer())} queue, the first {duration:g} s of the trace. Throughput is
        compared with the capacity capped at the encoder's R_max ({num(r_max)} Mbit/s), which the
        4G trace often exceeds (the paper: "all three protocols hit their video bitrate cap").
        Frame delays after the first {SETTLE_S:g} s.
        """
    )


def run(ctx: Context) -> Section:
    duration = 15.0 if ctx.quick else 40.0
    table = Table(
        [
            "network",
            "protocol",
            "mean capacity",
            "throughput",
            "throughput / min(capacity, R_max)",
            "frame delay mean",
            "p95",
        ]
    )
    reps: list[Reproduction] = []
    notes: list[str] = []
    file = ctx.scenario_file(TRACES["3g"])
    r_max = file.traffic_mbps("max_rate")
    for net, scen in TRACES.items():
        missing = trace_missing(ctx, scen)
        if missing:
            notes.append(
                f"SKIPPED {net.upper()}: trace {missing} is missing "
                "(it lives in the shared traces next to the checkout)."
            )
            continue
        runs = video_runs(ctx, f"cellular-{net}", scen, {"duration": f"{duration:g}s"})
        track = {k: _row(table, net, k, r, duration, r_max) for k, r in runs.items()}
        figure = ctx.out / f"cellular-{net}-pibes" / f"cellular-{net}-comparison.png"
        title = f"PIBES Fig. 11: {net.upper()} trace, one-way delay {num(file.one_way_ms())} ms"
        comparison_plot(ctx, figure, title, runs, bound_ms=lower_bound_ms(ctx.scenario_file(scen)))
        notes.append(
            f"Figure: `cellular-{net}-pibes/{figure.name}` "
            "(throughput against the trace's capacity, frame delay over time)."
        )
        reps += _claims(net, track, r_max)
    return Section(
        "3",
        "Cellular traces",
        "Fig. 11",
        _setup(file, duration, r_max),
        [ctx.rel(ctx.scenario(s)) for s in TRACES.values()],
        "cellular-3g-pibes",
        table,
        reps,
        notes,
    )
