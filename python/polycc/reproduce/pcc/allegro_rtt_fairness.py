"""Allegro §4.1.5, Fig. 8: RTT fairness. A long-RTT flow starts first, a short-RTT flow joins;
the ratio of their throughputs for PCC, CUBIC and NewReno."""

from __future__ import annotations

import math
import statistics

from polycc.reproduce.common import Context, Reproduction, Section, Table, fmt, num, pct, safe_div
from polycc.reproduce.pcc.shared import ALLEGRO, series

SCENARIO = "rtt-fairness.toml"
FIGURE = f"{ALLEGRO} Fig. 8"
PCC = "pcc-allegro"
#: The throughputs are compared from here on (both flows sending, the short one out of start-up).
MEASURE_FROM_S = 10.0
#: 5a: PCC counts as fairest at an RTT when its |log(long / short)| is within this of the best.
LOG_TOLERANCE = 0.05


def _claims(share: dict[tuple[str, int], float], ccas: list[str], rtts: list[int]) -> list[Reproduction]:
    others = [c for c in ccas if c != PCC]
    better = sum(
        abs(math.log(share[(PCC, r)])) <= min(abs(math.log(share[(o, r)])) for o in others) + LOG_TOLERANCE
        for r in rtts
        if share[(PCC, r)] > 0
    )
    return [
        Reproduction.at_least(
            "5a",
            FIGURE,
            f"PCC is fairer across RTTs than {' and '.join(others)} (RTTs where its long/short ratio is "
            "closest to 1)",
            "all",
            better / len(rtts),
            0.8,
            pct,
        ),
        Reproduction.at_least(
            "5b",
            FIGURE,
            "the long-RTT PCC flow keeps a fair share (lowest long / short ratio)",
            "close to 1 (figure)",
            min(share[(PCC, r)] for r in rtts),
            0.5,
            lambda x: fmt(x, 2),
        ),
    ]


def run(ctx: Context) -> Section:
    rtts = [20, 100] if ctx.quick else [20, 40, 60, 80, 100]
    ccas = [PCC, "cubic"] if ctx.quick else [PCC, "cubic", "newreno"]
    end = 35 if ctx.quick else 105
    points = {
        (c, r): {"flows.*.cca": c, "flows.0.rtt": f"{r}ms", "duration": f"{end}s"} for c in ccas for r in rtts
    }
    res = ctx.sweep_labeled("rtt-fairness", SCENARIO, points)
    share: dict[tuple[str, int], float] = {}
    for k, rows in res.items():
        ts = ctx.timeseries("rtt-fairness", rows[0])
        long_, short = (statistics.fmean(series(ts, f, MEASURE_FROM_S, end)) for f in ("long", "short"))
        share[k] = safe_div(long_, short)
    table = Table(["long-flow RTT", *[f"{c}: long / short" for c in ccas]])
    for r in rtts:
        table.add(f"{r} ms", *[fmt(share[(c, r)], 2) for c in ccas])
    file = ctx.scenario_file(SCENARIO)
    return Section(
        "5",
        "RTT fairness",
        FIGURE,
        f"{num(file.rate_mbps())} Mbit/s, buffer = the short flow's BDP "
        f"({num(file.buffer_bytes() / 1e3)} KB); "
        f"the long flow ({rtts[0]}–{rtts[-1]} ms) starts first, the {num(file.rtt_ms('short'))} ms flow "
        f"joins at {num(file.start_s('short'))} s; throughput ratio over {num(MEASURE_FROM_S)}–{end} s "
        "(paper: 500 s of competition).",
        [ctx.rel(ctx.scenario(SCENARIO))],
        "rtt-fairness",
        table,
        _claims(share, ccas, rtts),
    )
