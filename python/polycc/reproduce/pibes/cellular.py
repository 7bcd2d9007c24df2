"""PIBES §IV-B b), Fig. 11: one video flow over trace-driven 3G and 4G links; how closely each
protocol tracks the capacity (capped at the encoder's R_max), its frame delays and their spikes,
and whether PIBES, alone on the link, believes it has company. The same traces replayed as
capacity steps show how much of that is the trace's per-millisecond delivery. Skipped per trace
when the shared trace file is missing."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from polycc.reproduce.common import (
    AtLeast,
    AtMost,
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
from polycc.reproduce.pibes.measures import (
    decoded_frames,
    first,
    frame_delays,
    med,
    points,
    stat,
    trace_as_steps,
    trace_missing,
    video_runs,
)
from polycc.reproduce.pibes.model import CCAS, S_MAX, S_SHARE, SETTLE_S, TRACES, lower_bound_ms, seeds
from polycc.reproduce.pibes.plots import capacity_series, comparison_plot
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, size_text
from polycc.reproduce.timeseries import flow_mean

if TYPE_CHECKING:
    from polycc.api import RunResult

#: 3a, 3b: PIBES tracks min(capacity, R_max) at its s_max ("small gap ... due to s_max = 0.95";
#: on 4G "hit their video bitrate cap"): ± 10 points around s_max.
TRACKS_POINTS = 10.0
#: 3e (ours): a frame's delay "spikes" above this multiple of the run's median frame delay.
SPIKE_FACTOR = 2.0
#: 3e (ours): a capacity drop this long before a frame still delays it: a full 50-packet queue
#: takes 0.5 s to drain at 1.2 Mbit/s.
LOOK_BACK_S = 0.5
#: 3e: Fig. 11(d), "severe bandwidth drops ... resulting in occasional spikes in the frame
#: delay": most spikes (ours: at least 80 %) come with a drop of the capacity below the frame's
#: bitrate.
CRIT_3E = AtLeast(0.8, paper_number=False)
#: 3f: Fig. 9, "a few isolated instances of incorrect detection, their impact is negligible", and
#: Fig. 11(a), PIBES alone tracks the capacity at s_max (a declared competitor would cut its share
#: to s_share): at most 5 % of the frames (ours) sent with the competing flag up.
CRIT_3F = AtMost(0.05, paper_number=False)
#: The trace replayed as capacity steps of these lengths (s), PIBES only: how much of what the
#: trace-driven link shows comes from its per-millisecond delivery.
STEPS_S = (0.1, 1.0)
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


def _competing(r: RunResult) -> float:
    """The share of the video flow's frames (after the start-up) sent with the competing flag up."""
    f = r.frames
    f = f[(f["flow"] == "video") & (f["generated_s"] >= SETTLE_S)]
    return float(f["competing"].mean()) if len(f) else math.nan


def _spikes(r: RunResult) -> tuple[float, float, float]:
    """(share of frames whose delay spikes above SPIKE_FACTOR × the median, share of those spikes
    that saw the capacity below the frame's bitrate in a bin from LOOK_BACK_S before the frame to
    its arrival, the same share over all frames)."""
    f = decoded_frames(r.frames, "video", SETTLE_S)
    if not len(f):
        return math.nan, math.nan, math.nan
    t, cap = capacity_series(r)
    width = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    start = f["generated_s"].to_numpy(dtype=float)
    delay = f["delay_ms"].to_numpy(dtype=float) / 1e3
    bitrate = f["target_mbps"].to_numpy(dtype=float)
    # Bins [t, t + width) overlapping [start - LOOK_BACK_S, start + delay].
    saw = np.array(
        [
            bool(np.any(cap[(t < s + d) & (t + width > s - LOOK_BACK_S)] < b))
            for s, d, b in zip(start, delay, bitrate, strict=True)
        ]
    )
    spike = delay > SPIKE_FACTOR * np.median(delay)
    with_drop = float(saw[spike].mean()) if spike.any() else math.nan
    return float(spike.mean()), with_drop, float(saw.mean())


def _row(
    table: Table, net: str, link: str, k: str, rs: list[RunResult], duration: float, r_max: float
) -> dict[str, list[float]]:
    """Adds one protocol's row (medians over seeds); returns its per-seed tracking, competing
    share and spikes with a drop."""
    tracks = [_track(r, duration, r_max) for r in rs]
    d = [frame_delays(r.frames, "video", SETTLE_S) for r in rs]
    competing = [_competing(r) for r in rs]
    spikes = [_spikes(r) for r in rs]
    table.add(
        net.upper(),
        link,
        k,
        mbps(med([x[0] for x in tracks])),
        mbps(med([x[1] for x in tracks])),
        pct(med([x[2] for x in tracks])),
        pct(med(competing)),
        ms(med([stat(x, 50) for x in d])),
        ms(med([stat(x, 95) for x in d])),
        pct(med([x[0] for x in spikes])),
        f"{pct(med([x[1] for x in spikes]))} ({pct(med([x[2] for x in spikes]))})",
    )
    return {"track": [x[2] for x in tracks], "competing": competing, "drops": [x[1] for x in spikes]}


def _claims(net: str, measured: dict[str, dict[str, list[float]]], r_max: float) -> list[Reproduction]:
    g3 = net == "3g"
    figure = "Fig. 11(a)" if g3 else "Fig. 11(c)"
    at_s_max = WithinPoints(S_MAX, TRACKS_POINTS, paper_number=False)
    track = {k: m["track"] for k, m in measured.items()}
    pibes_minus_gcc = [p - g for p, g in zip(track["PIBES"], track["GCC"], strict=True)]
    tracks = Reproduction.judge(
        f"3{'a' if g3 else 'b'}",
        figure,
        f"PIBES tracks the {net.upper()} capacity: throughput / min(capacity, R_max = {num(r_max)} Mbit/s)",
        "closely tracked, small gap (s_max)" if g3 else "hits the bitrate cap",
        track["PIBES"],
        at_s_max,
        pct,
        "" if g3 else _WHY_4G,
    )
    if g3:
        return [
            tracks,
            Reproduction.judge(
                "3c",
                figure,
                f"WebRTC uses less of the {net.upper()} capacity than PIBES: PIBES − GCC (same measure)",
                "not able to fully utilise",
                pibes_minus_gcc,
                SameSide(0.0, above=True),
                points,
            ),
        ]
    return [
        tracks,
        Reproduction.judge(
            "3d",
            figure,
            f"WebRTC also hits its bitrate cap on {net.upper()}: GCC's throughput / min(capacity, R_max)",
            "both hit the cap",
            track["GCC"],
            at_s_max,
            pct,
            _WHY_GCC_4G,
        ),
        Reproduction.judge(
            "3e",
            "Fig. 11(d)",
            f"PIBES's frame-delay spikes on {net.upper()} come with bandwidth drops: the share of frames "
            f"delayed over {num(SPIKE_FACTOR)}× the median that saw the capacity below their bitrate",
            "occasional spikes from severe drops",
            measured["PIBES"]["drops"],
            CRIT_3E,
            pct,
        ),
    ]


def _claim_alone(competing: list[list[float]], on_steps: dict[str, list[float]]) -> Reproduction:
    """3f over both traces: per seed, the larger of the two networks' competing shares.
    `on_steps`: per step label, the medians of the two networks' shares on the stepped replays."""
    steps = "; ".join(f"{k}: {' and '.join(pct(v) for v in vs)}" for k, vs in on_steps.items())
    return Reproduction.judge(
        "3f",
        "Figs. 9, 11(a)",
        "PIBES alone on the 3G and 4G traces declares no competing flow: share of its frames sent "
        "with the competing flag up (per seed, the larger network)",
        "a few isolated instances",
        [max(v) for v in zip(*competing, strict=True)],
        CRIT_3F,
        pct,
        prose(
            f"""
            No flow competes here. The flag rises when the paced packets of frames arrive more
            than β = 10 % further apart than their bursts' packets, and a capacity that changes
            within a frame, or a link that serves several packets in one millisecond and none in
            the next, does that alone. The flag's share falls as the replay's steps lengthen
            (3G and 4G, medians over the seeds): {steps}. The mahimahi trace's per-millisecond
            delivery, which a rate-limited pipe such as the paper's Dummynet does not have,
            explains most of it; capacity that changes every 100 ms still raises the flag often.
            A raised flag caps PIBES's share at s_share = {pct(S_SHARE, 0)} instead of s_max,
            which is why 3a sits near its band's lower edge on the trace and higher on the
            1-s steps (table).
            """
        ),
    )


def _step_text(step_s: float, sep: str = " ") -> str:
    """A step's length as the section writes it: "100 ms", "1 s" (`sep` "-": "100-ms")."""
    return f"{1000 * step_s:g}{sep}ms" if step_s < 1 else f"{step_s:g}{sep}s"


def _steps_label(step_s: float) -> str:
    return f"{_step_text(step_s, '-')} steps"


def _setup(file: ScenarioFile, duration: float, r_max: float) -> str:
    return prose(
        f"""
        One video flow over a trace-driven link: 3G is the T-Mobile UMTS driving downlink,
        4G the T-Mobile LTE short downlink (mahimahi traces from `../shared/traces/`, not
        the paper's own captures), one-way delay {num(file.one_way_ms())} ms,
        {size_text(file.buffer())} queue, the first {duration:g} s of the trace. Throughput is
        compared with the capacity capped at the encoder's R_max ({num(r_max)} Mbit/s), which the
        4G trace often exceeds (the paper: "all three protocols hit their video bitrate cap").
        Frame delays after the first {SETTLE_S:g} s. A mahimahi link delivers one packet at each
        millisecond the trace lists, several in some and none in others; the paper's testbed
        replayed its captures through a modified Dummynet, whose pipe serves a bandwidth. So
        PIBES also runs on each trace replayed as capacity steps of
        {" and of ".join(_step_text(s) for s in STEPS_S)}, each step at the rate of the
        trace's opportunities in it (rows "steps").
        """
    )


def run(ctx: Context) -> Section:
    duration = 15.0 if ctx.quick else 40.0
    table = Table(
        [
            "network",
            "link",
            "protocol",
            "mean capacity",
            "throughput",
            "throughput / min(capacity, R_max)",
            "competing flag up",
            "frame delay p50",
            "p95",
            f"frames over {num(SPIKE_FACTOR)}× p50",
            "of those, with a drop (all frames)",
        ]
    )
    reps: list[Reproduction] = []
    notes: list[str] = []
    competing: list[list[float]] = []
    on_steps: dict[str, list[float]] = {}
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
        over = {"duration": f"{duration:g}s"}
        runs = video_runs(ctx, f"cellular-{net}", scen, over)
        measured = {k: _row(table, net, "trace", k, rs, duration, r_max) for k, rs in runs.items()}
        for step in STEPS_S:
            steps = {**over, **CCAS["PIBES"], "links.0": trace_as_steps(ctx, scen, step, duration)}
            label = _steps_label(step)
            rs = ctx.run_seeds(f"cellular-{net}-steps{1000 * step:g}ms-pibes", scen, steps, seeds=seeds(ctx))
            m = _row(table, net, label, "PIBES", rs, duration, r_max)
            on_steps.setdefault(label, []).append(med(m["competing"]))
        figure = ctx.out / f"cellular-{net}-pibes" / f"cellular-{net}-comparison.png"
        title = f"PIBES Fig. 11: {net.upper()} trace, one-way delay {num(file.one_way_ms())} ms"
        comparison_plot(ctx, figure, title, first(runs), bound_ms=lower_bound_ms(ctx.scenario_file(scen)))
        notes.append(
            f"Figure: `cellular-{net}-pibes/{figure.name}` "
            "(throughput against the trace's capacity, frame delay over time; first seed)."
        )
        reps += _claims(net, measured, r_max)
        competing.append(measured["PIBES"]["competing"])
    if len(competing) == len(TRACES):
        reps.append(_claim_alone(competing, on_steps))
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
            "Table: medians over the seeds (the seed varies frame sizes; the trace is the same). "
            f"Frame delays over decoded frames; a spike is a frame delayed over {num(SPIKE_FACTOR)}× "
            f"the run's median, and it comes with a drop when a 100-ms bin from {LOOK_BACK_S:g} s "
            "before the frame to its arrival had less capacity than the frame's bitrate (in "
            "brackets, the same share over all frames).",
            f"Criteria: 3a, 3b, 3d — the paper prints no number; PIBES tracks min(capacity, R_max) "
            f'at its s_max = {pct(S_MAX, 0)} ("a small gap ... due to s_max"), ± '
            f'{num(TRACKS_POINTS)} points, and on 4G "all three protocols hit their video bitrate '
            'cap", so GCC is held to the same band (3d; before issue 19 only "below PIBES"). 3e, '
            f"3f — no number in the paper: at least {pct(CRIT_3E.lo, 0)} of the spikes with a drop "
            f'("severe bandwidth drops ... resulting in occasional spikes"), at most '
            f'{pct(CRIT_3F.hi, 0)} of the frames with the flag up ("a few isolated instances of '
            "incorrect detection\", Fig. 9). Fig. 11(b)'s comparison is with Salsify, which we do "
            "not have; GCC, which uses a third of the 3G link, does not stand in for it.",
        ],
    )
