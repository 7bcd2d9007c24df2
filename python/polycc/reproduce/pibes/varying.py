"""PIBES §IV-B e)-g), Figs. 15-18: competing TCP on varying links (the ramp of experiment 4, the
3G trace), the application's minimum rate R_min, and two PIBES flows that know they share a
link."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from polycc.reproduce.common import (
    Context,
    Reproduction,
    Section,
    Table,
    fmt,
    jain,
    mbps,
    num,
    pct,
    prose,
    ratio,
    safe_div,
    seconds,
)
from polycc.reproduce.pibes.detection import flag_rate
from polycc.reproduce.pibes.measures import capacity, trace_gaps_ms, trace_missing, utilisation, video_runs
from polycc.reproduce.pibes.model import FIG17_R_MIN_MBPS, S_MAX, SETTLE_S, TRACES
from polycc.reproduce.pibes.plots import comparison_plot
from polycc.reproduce.pibes.ramp import SCENARIO as RAMP
from polycc.reproduce.pibes.ramp import Ramp, span_s
from polycc.reproduce.scenario_file import ScenarioFile, size_text
from polycc.reproduce.timeseries import flow_mean

if TYPE_CHECKING:
    from polycc.api import RunResult

TWO = "two-pibes.toml"
#: The competing CUBIC flow joins here (s), in Figs. 15-17.
TCP_JOIN_S = 10.0
TCP = {"flows.1.start": f"{num(TCP_JOIN_S)}s"}
#: Shares of the capacity: PIBES keeps at least s_min's 40 %; GCC counts as dominated below 35 %.
KEEPS, DOMINATED = 0.4, 0.35
#: 6c: the throughput restored after the ramp up is measured from this long after it ends, and
#: compared with the trough from this long after the ramp down ends.
RISE_SETTLE_S, TROUGH_SETTLE_S = 1.0, 2.0


def _fig16(
    ctx: Context, table: Table, ramp: Ramp, end: float
) -> tuple[list[Reproduction], dict[str, RunResult]]:
    """Fig. 16: the ramp with one CUBIC flow."""
    runs = video_runs(ctx, "ramp-tcp", RAMP, TCP)
    shares = (TCP_JOIN_S + SETTLE_S, ramp.up_from)
    after = (ramp.up_to + RISE_SETTLE_S, end)
    before = (ramp.down_to + TROUGH_SETTLE_S, ramp.up_from)
    share = {k: utilisation(r, "video", *shares) for k, r in runs.items()}
    rise = {
        k: safe_div(
            flow_mean(r, "video", "throughput_mbps", *after),
            flow_mean(r, "video", "throughput_mbps", *before),
        )
        for k, r in runs.items()
    }
    for k, r in runs.items():
        table.add(
            f"Fig. 16: ramp + CUBIC ({span_s(*shares)})",
            k,
            pct(share[k]),
            pct(utilisation(r, "tcp", *shares)),
            f"throughput {span_s(*after)} / {span_s(*before)}: {ratio(rise[k])}",
        )
    reps = [
        Reproduction.at_least(
            "6a",
            "Fig. 16",
            f"PIBES keeps its minimum share against TCP on the ramp ({span_s(*shares)})",
            "tracks s_min",
            share["PIBES"],
            KEEPS,
            pct,
        ),
        Reproduction.at_most(
            "6b",
            "Fig. 16",
            f"WebRTC is dominated by the TCP flow ({span_s(*shares)})",
            "dominated",
            share["GCC"],
            DOMINATED,
            pct,
        ),
        Reproduction.at_least(
            "6c",
            "Fig. 16",
            f"PIBES uses the capacity restored from {num(ramp.up_from)} s quickly: its throughput "
            f"{span_s(*after)} over {span_s(*before)}",
            "quickly utilises it",
            rise["PIBES"],
            1.5,
            ratio,
        ),
    ]
    return reps, runs


def _fig15_why(r: RunResult, gaps_ms: np.ndarray, t0: float, t1: float) -> str:
    """6d: why PIBES carries more than s_min of the 3G link beside CUBIC (`gaps_ms`: the gaps
    between the trace's delivery opportunities)."""
    flag = flag_rate(r.frames, t0, t1)
    share = flow_mean(r, "video", "cc_share", t0, t1)
    estimate = safe_div(flow_mean(r, "video", "cc_bw_estimate_mbps", t0, t1), capacity(r, t0, t1))
    return prose(
        f"""
        PIBES carries more than s_min = 0.5 of the 3G link for two reasons the fixed links do not
        have. The trace delivers packets at irregular opportunities (median gap
        {num(float(np.median(gaps_ms)))} ms, mean {fmt(float(gaps_ms.mean()), 1)} ms, longest
        {seconds(float(gaps_ms.max()) / 1e3, 1)}), so single gaps far above the mean land in
        d or in d~ and swing d~/d across 1 + β both ways: the flag is up in {pct(flag)} of the
        frames over {span_s(t0, t1)}, each frame without it raises s_k by Δ, and s_k averages
        {fmt(share, 2)}. And the burst, queued back to back, leaves at the trace's short gaps, so
        B = P/d averages {ratio(estimate)} the mean capacity and s_k·B is above that share of it.
        """
    )


def _fig15(ctx: Context, table: Table) -> tuple[list[Reproduction], str | None]:
    """Fig. 15: the 3G trace with one CUBIC flow; the note when the trace is missing."""
    missing = trace_missing(ctx, TRACES["3g"])
    if missing:
        return [], f"SKIPPED Fig. 15: trace {missing} is missing."
    runs = video_runs(ctx, "cellular-3g-tcp", TRACES["3g"], TCP)
    shares = (TCP_JOIN_S + SETTLE_S, ctx.scenario_file(TRACES["3g"]).duration_s())
    s3 = {k: utilisation(r, "video", *shares) for k, r in runs.items()}
    for k, r in runs.items():
        table.add(
            f"Fig. 15: 3G + CUBIC ({span_s(*shares)})", k, pct(s3[k]), pct(utilisation(r, "tcp", *shares)), ""
        )
    return [
        Reproduction.at_least(
            "6d",
            "Fig. 15",
            "PIBES shares the 3G link per its minimum share despite the fluctuations",
            "per s_min",
            s3["PIBES"],
            KEEPS,
            pct,
            _fig15_why(runs["PIBES"], trace_gaps_ms(ctx, TRACES["3g"]), *shares),
        ),
        Reproduction.at_most(
            "6e",
            "Fig. 15",
            "WebRTC slowly loses most of the 3G link to TCP",
            "most lost",
            s3["GCC"],
            DOMINATED,
            pct,
        ),
    ], None


def _fig17(ctx: Context, table: Table, ramp: Ramp) -> Reproduction:
    """Fig. 17: R_min on the ramp with TCP; in the trough less than R_min above it remains."""
    rmin = ctx.run("rmin-pibes", RAMP, TCP | {"flows.0.traffic.min_rate": f"{FIG17_R_MIN_MBPS}Mbps"})
    kept = flow_mean(rmin, "video", "throughput_mbps", *ramp.trough)
    r_min = f"{num(FIG17_R_MIN_MBPS)} Mbit/s"
    table.add(
        f"Fig. 17: R_min {r_min}, ramp + CUBIC ({span_s(*ramp.trough)})",
        "PIBES",
        pct(utilisation(rmin, "video", *ramp.trough)),
        pct(utilisation(rmin, "tcp", *ramp.trough)),
        f"video throughput {mbps(kept)}",
    )
    return Reproduction.at_least(
        "6f",
        "Fig. 17",
        f"PIBES keeps R_min = {r_min} when the capacity drops to {num(ramp.low)} Mbit/s "
        f"(throughput {span_s(*ramp.trough)})",
        "1.5 Mbit/s kept",
        kept,
        0.95 * FIG17_R_MIN_MBPS,
        mbps,
    )


def _fig18(ctx: Context, table: Table, file: ScenarioFile) -> Reproduction:
    """Fig. 18: two PIBES flows that know they share the link (flows_sharing)."""
    two = ctx.run("two-pibes", TWO)
    window = (file.start_s("video2") + SETTLE_S, file.duration_s())
    g = [flow_mean(two, f, "throughput_mbps", *window) for f in ("video1", "video2")]
    index = jain(g)
    s_min = f"s_min = s_max / {file.flow('video1')['cca']['flows_sharing']}"
    table.add(
        f"Fig. 18: two PIBES flows, {s_min} ({span_s(*window)})",
        "PIBES × 2",
        f"{mbps(g[0])} / {mbps(g[1])}",
        "",
        f"Jain {fmt(index, 3)}, utilisation {pct(sum(g) / file.rate_mbps())}",
    )
    return Reproduction.at_least(
        "6g",
        "Fig. 18",
        f"two PIBES flows with {s_min} share fairly: Jain's index",
        "reasonably fair",
        index,
        0.9,
        lambda v: fmt(v, 3),
    )


def _setup(ramp: Ramp, ramp_file: ScenarioFile, two: ScenarioFile, g3_end: float) -> str:
    sharing = int(two.flow("video1")["cca"]["flows_sharing"])
    tcp = f"one CUBIC flow from {num(TCP_JOIN_S)} s"
    return prose(
        f"""
        Fig. 16: the ramp of experiment 4 with {tcp}; shares of the
        capacity over {span_s(TCP_JOIN_S + SETTLE_S, ramp.up_from)}. Fig. 15: the 3G trace with
        {tcp}; shares over {span_s(TCP_JOIN_S + SETTLE_S, g3_end)}. Fig. 17: the ramp with CUBIC,
        PIBES with R_min = {num(FIG17_R_MIN_MBPS)} Mbit/s (the encoder's and PIBES's floor); video
        throughput in the {num(ramp.low)} Mbit/s trough. Fig. 18: two PIBES flows with
        `flows_sharing = {sharing}` (s_min = {num(S_MAX / sharing)}) on {num(two.rate_mbps())} Mbit/s,
        the second from {num(two.start_s("video2"))} s; Jain's index of their throughputs over
        {span_s(two.start_s("video2") + SETTLE_S, two.duration_s())}. One-way delay
        {num(ramp_file.one_way_ms())} ms and a {size_text(ramp_file.buffer())} queue throughout.
        """
    )


def run(ctx: Context) -> Section:
    ramp_file, two_file = ctx.scenario_file(RAMP), ctx.scenario_file(TWO)
    ramp = Ramp.of(ramp_file)
    table = Table(["experiment", "protocol", "video share of capacity", "TCP share", "other"])
    notes: list[str] = []
    reps, ramp_runs = _fig16(ctx, table, ramp, ramp_file.duration_s())
    reps_3g, skipped = _fig15(ctx, table)
    reps += [*reps_3g, _fig17(ctx, table, ramp), _fig18(ctx, table, two_file)]
    if skipped:
        notes.append(skipped)
    if ctx.plots:
        figure = ctx.out / "ramp-tcp-pibes" / "ramp-tcp-comparison.png"
        title = f"PIBES Fig. 16: ramp with one CUBIC flow from {num(TCP_JOIN_S)} s"
        comparison_plot(ctx, figure, title, ramp_runs)
        notes.append(
            f"Figures: `ramp-tcp-pibes/{figure.name}`; `rmin-pibes/goodput.png` (Fig. 17), "
            "`two-pibes/goodput.png` (Fig. 18)."
        )
    return Section(
        "6",
        "Competing TCP on varying links, R_min, two PIBES flows",
        "Figs. 15–18",
        _setup(ramp, ramp_file, two_file, ctx.scenario_file(TRACES["3g"]).duration_s()),
        [ctx.rel(ctx.scenario(s)) for s in (RAMP, TRACES["3g"], TWO)],
        "ramp-tcp-pibes",
        table,
        reps,
        notes,
    )
