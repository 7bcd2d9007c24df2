"""PIBES §IV-B b), Fig. 11: one video flow over trace-driven 3G and 4G links; how closely each
protocol tracks the capacity (capped at the encoder's R_max). Skipped per trace when the shared
trace file is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from polycc.reproduce.common import (
    Context,
    Reproduction,
    SameSide,
    Section,
    Table,
    WithinPoints,
    mbps,
    ms,
    num,
    pct,
    prose,
    safe_div,
)
from polycc.reproduce.pibes.measures import first, frame_delays, med, points, stat, trace_missing, video_runs
from polycc.reproduce.pibes.model import S_MAX, SETTLE_S, TRACES, lower_bound_ms
from polycc.reproduce.pibes.plots import capacity_series, comparison_plot
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, size_text
from polycc.reproduce.timeseries import flow_mean

if TYPE_CHECKING:
    from polycc.api import RunResult

#: 3a, 3b: PIBES tracks min(capacity, R_max) at its s_max ("small gap ... due to s_max = 0.95";
#: on 4G "hit their video bitrate cap"): ± 10 points around s_max.
TRACKS_POINTS = 10.0
_WHY_4G = prose(
    f"""
    A trace-driven link delivers in bursts (one {PACKET_BYTES}-byte opportunity per line of
    the trace), so the burst inter-arrival can under- or over-read the mean
    capacity; the estimate follows the trace's short-term rate.
    """
)


#: 3d: what a GCC run on the 4G trace shows (cc_delay_based_mbps, cc_link_capacity_mbps over time).
_WHY_GCC_4G = prose(
    """
    Our GCC starts at WebRTC's 300 kbit/s and raises its delay-based rate slowly (about 3 Mbit/s
    by 12 s); at the trace's capacity dip around 16–20 s the queue delay rises, it detects overuse
    and drops to about 0.5 Mbit/s, and from there it increases only additively near its link-capacity
    estimate (0.55 Mbit/s), so it never approaches R_max within the 40 s. The paper's WebRTC hit an
    internal cap far below ours.
    """
)


def _track(r: RunResult, duration: float, r_max: float) -> tuple[float, float, float]:
    """(mean capacity, throughput, throughput / min(capacity, R_max)) of one run's video flow."""
    t, cap = capacity_series(r)
    sel = (t >= SETTLE_S) & (t < duration)
    reachable = float(np.minimum(cap[sel], r_max).mean())
    thr = flow_mean(r, "video", "throughput_mbps", SETTLE_S, duration)
    return float(cap[sel].mean()), thr, safe_div(thr, reachable)


def _row(table: Table, net: str, k: str, rs: list[RunResult], duration: float, r_max: float) -> list[float]:
    """Adds one protocol's row (medians over seeds); returns its per-seed tracking."""
    tracks = [_track(r, duration, r_max) for r in rs]
    d = [frame_delays(r.frames, "video", SETTLE_S) for r in rs]
    table.add(
        net.upper(),
        k,
        mbps(med([x[0] for x in tracks])),
        mbps(med([x[1] for x in tracks])),
        pct(med([x[2] for x in tracks])),
        ms(med([stat(x) for x in d])),
        ms(med([stat(x, 95) for x in d])),
    )
    return [x[2] for x in tracks]


def _claims(net: str, track: dict[str, list[float]], r_max: float) -> list[Reproduction]:
    g3 = net == "3g"
    figure = "Fig. 11(a)" if g3 else "Fig. 11(c)"
    at_s_max = WithinPoints(S_MAX, TRACKS_POINTS, paper_number=False)
    pibes_minus_gcc = [p - g for p, g in zip(track["PIBES"], track["GCC"], strict=True)]
    return [
        Reproduction.judge(
            f"3{'a' if g3 else 'b'}",
            figure,
            f"PIBES tracks the {net.upper()} capacity: "
            f"throughput / min(capacity, R_max = {num(r_max)} Mbit/s)",
            "closely tracked, small gap (s_max)" if g3 else "hits the bitrate cap",
            track["PIBES"],
            at_s_max,
            pct,
            "" if g3 else _WHY_4G,
        ),
        Reproduction.judge(
            "3c",
            figure,
            f"WebRTC uses less of the {net.upper()} capacity than PIBES: PIBES − GCC (same measure)",
            "not able to fully utilise",
            pibes_minus_gcc,
            SameSide(0.0, above=True),
            points,
        )
        if g3
        else Reproduction.judge(
            "3d",
            figure,
            f"WebRTC also hits its bitrate cap on {net.upper()}: GCC's throughput / min(capacity, R_max)",
            "both hit the cap",
            track["GCC"],
            at_s_max,
            pct,
            _WHY_GCC_4G,
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
        track = {k: _row(table, net, k, rs, duration, r_max) for k, rs in runs.items()}
        figure = ctx.out / f"cellular-{net}-pibes" / f"cellular-{net}-comparison.png"
        title = f"PIBES Fig. 11: {net.upper()} trace, one-way delay {num(file.one_way_ms())} ms"
        comparison_plot(ctx, figure, title, first(runs), bound_ms=lower_bound_ms(ctx.scenario_file(scen)))
        notes.append(
            f"Figure: `cellular-{net}-pibes/{figure.name}` "
            "(throughput against the trace's capacity, frame delay over time; first seed)."
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
        [
            *notes,
            "Table: medians over the seeds (the seed varies frame sizes; the trace is the same).",
            f"Criteria: 3a, 3b, 3d — the paper prints no number; PIBES tracks min(capacity, R_max) "
            f'at its s_max = {pct(S_MAX, 0)} ("a small gap ... due to s_max"), ± '
            f'{num(TRACKS_POINTS)} points, and on 4G "all three protocols hit their video bitrate '
            'cap", so GCC is held to the same band (3d; before issue 19 only "below PIBES").',
        ],
    )
