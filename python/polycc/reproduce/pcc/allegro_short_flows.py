"""Allegro §4.3.2, Fig. 15: completion times of short flows (100 KB) against the link's load; PCC
against TCP. The percentiles are pooled over every transfer of every source in a run, from the
runs' per-transfer tables (`transfers.parquet`)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from polycc.reproduce.common import (
    Band,
    Context,
    Reproduction,
    Section,
    Table,
    WithinFactor,
    fmt,
    num,
    pct,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL, kernel_flow_keys
from polycc.reproduce.pcc.shared import ALLEGRO, RATIO_FACTOR, SEEDS, farthest_from_one, median, ratio2
from polycc.reproduce.scenario_file import size_bytes, size_text

SCENARIO = "short-flows.toml"
FIGURE = f"{ALLEGRO} Fig. 15"
PCC = "pcc-allegro"
TCP = "cubic"
#: Allegro §4.3.2: "network load ranging from 5 % to 75 %" (the figure's points).
LOADS = (0.05, 0.25, 0.50, 0.75)
#: The load at which the paper quotes its one number (claim 9c).
HIGH_LOAD = 0.75
#: Sources per run. The paper's short flows are independent connections; ours are web sources
#: that serve their requests one after another, so many sources keep the chance that a request
#: finds its source's previous transfer still running small (about 1 in 10 at 75 % load), and
#: completion times are counted on an open connection (below) so such a wait does not count.
SOURCES = 100
#: Seed of the sources' start times (spread over the first interval, so that the runs begin with
#: requests spread over time instead of all sources requesting at once).
START_SEED = 15

# The criteria (issue 19), from Allegro §4.3.2, fixed before the runs.
#: "Similar" has no number in the paper; the paper itself names a 20 % longer p95 as a gap
#: ("20 % longer than TCP"), so similar is closer than that: within ×1.25 either way.
SIMILAR = 1.25
#: 9a / 9b: "PCC achieves similar FCT at the median and 95th percentile" (loads 5–75 %; for the
#: p95 the paper excepts 75 %, claim 9c). The value is the ratio PCC / TCP farthest from 1 over
#: the loads.
CRIT_SIMILAR = Band(1.0, 1 / SIMILAR, SIMILAR, paper_number=False)
#: 9c: "The 95th percentile FCT with 75 % utilization is 20 % longer than TCP".
CRIT_9C = WithinFactor(1.2, RATIO_FACTOR)


def sources(template: Mapping[str, Any], cca: str, load: float, capacity_mbps: float) -> list[dict[str, Any]]:
    """`SOURCES` copies of the scenario's flow whose Poisson requests together offer `load` of the
    capacity in payload, on the default stack for PCC and on the Linux model for TCP."""
    per_source_s = SOURCES * size_bytes(template["traffic"]["size"]) * 8 / (load * capacity_mbps * 1e6)
    rng = random.Random(START_SEED)
    stack = kernel_flow_keys(cca)
    return [
        {
            **template,
            **stack,
            "id": f"s{i}",
            "start": f"{rng.uniform(0.0, per_source_s):.6f}s",
            "traffic": {**template["traffic"], "interval": f"{per_source_s:.6f}s"},
        }
        for i in range(SOURCES)
    ]


def transfer_times(table: Any) -> np.ndarray:
    """Completion less connection time of every completed transfer of a run's table: the time on
    an open connection, which leaves out TCP's handshake round trip (the default stack makes none)
    and the wait of a request behind its source's previous transfer."""
    done = table.dropna(subset=["completed_s", "connected_s"])
    times: np.ndarray = (done["completed_s"] - done["connected_s"]).to_numpy(dtype=float)
    return times


def run(ctx: Context) -> Section:
    import pandas as pd

    loads = (LOADS[0], HIGH_LOAD) if ctx.quick else LOADS
    seeds = 2 if ctx.quick else SEEDS
    duration = "30s" if ctx.quick else "100s"
    file = ctx.scenario_file(SCENARIO)
    capacity = file.rate_mbps()
    template = dict(file.flow(0))
    points = {
        (c, load): {"flows": sources(template, c, load, capacity), "duration": duration}
        for c in (PCC, TCP)
        for load in loads
    }
    name = "short-flows"
    res = ctx.sweep_labeled(name, SCENARIO, points, seeds=seeds)

    def times(key: tuple[str, float], i: int) -> np.ndarray:
        path = ctx.out / name / "runs" / str(res[key][i]["run_id"]) / "transfers.parquet"
        return transfer_times(pd.read_parquet(path))

    # q[(cca, load, percentile)]: one pooled percentile per seed, in seconds.
    q: dict[tuple[str, float, int], list[float]] = {}
    count: dict[tuple[str, float], int] = {}
    for key in points:
        per_seed = [times(key, i) for i in range(seeds)]
        count[key] = sum(len(t) for t in per_seed)
        for p in (50, 95):
            q[(*key, p)] = [float(np.percentile(t, p)) if len(t) else math.nan for t in per_seed]

    def seed_ratio(load: float, p: int, i: int) -> float:
        return q[(PCC, load, p)][i] / q[(TCP, load, p)][i]

    worst_p50 = [farthest_from_one([seed_ratio(x, 50, i) for x in loads]) for i in range(seeds)]
    low = [x for x in loads if x < HIGH_LOAD]
    worst_p95 = [farthest_from_one([seed_ratio(x, 95, i) for x in low]) for i in range(seeds)]
    high_p95 = [seed_ratio(HIGH_LOAD, 95, i) for i in range(seeds)]

    table = Table(
        [
            "load",
            "PCC p50 (ms)",
            "TCP p50 (ms)",
            "PCC p95 (ms)",
            "TCP p95 (ms)",
            "p50 / p95 ratio PCC / TCP",
            "transfers (PCC / TCP, all seeds)",
        ]
    )
    for x in loads:
        cells = [median(q[(c, x, p)]) * 1e3 for p in (50, 95) for c in (PCC, TCP)]
        table.add(
            pct(x, 0),
            fmt(cells[0], 0),
            fmt(cells[1], 0),
            fmt(cells[2], 0),
            fmt(cells[3], 0),
            f"{ratio2(median([seed_ratio(x, 50, i) for i in range(seeds)]))} / "
            f"{ratio2(median([seed_ratio(x, 95, i) for i in range(seeds)]))}",
            f"{count[(PCC, x)]} / {count[(TCP, x)]}",
        )
    span = f"{pct(loads[0], 0)} to {pct(loads[-1], 0)}"
    rtt_s = file.rtt_ms() / 1e3
    idle = {c: median(q[(c, loads[0], 50)]) / rtt_s for c in (PCC, TCP)}
    why_start = (
        f"At {pct(loads[0], 0)} load, where the transfers rarely meet, a transfer takes PCC "
        f"{fmt(idle[PCC], 1)} round trips at the median and TCP {fmt(idle[TCP], 1)}: slow start "
        "doubles the window every round trip from 10 packets (10 + 20 + 39 packets for 100 KB), "
        "while Allegro's starting state (§3.2) doubles its rate once per monitor interval, "
        "1.7–2.2 round trips long (§3.1). Ours starts at the initial window per 100 ms, rescaled by "
        "the first RTT sample (PCC-Uspace's start; 1.9 Mbit/s here). The paper's own text starts "
        "slower still: at 2·MSS/RTT with MIs of at least 10 packets' time (5 round trips at first), "
        "about 12 round trips for 100 KB. The authors' NSDI'15 code (`modong/pcc`, `cc.h` and "
        "`core.cpp`) starts at 2 Mbit/s and doubles once per MI of 1.5–1.7 RTTs (at least 10 "
        "packets), about as ours does. The paper's similar completion times thus need a faster start "
        "than either describes; its §4.3.2 says start-up optimisation was out of scope."
    )
    claims = [
        Reproduction.judge(
            "9a",
            FIGURE,
            f"PCC's median completion time is similar to TCP's at every load from {span} "
            "(the ratio PCC / TCP farthest from 1 over the loads)",
            "similar",
            worst_p50,
            CRIT_SIMILAR,
            ratio2,
            why_start,
        ),
        Reproduction.judge(
            "9b",
            FIGURE,
            f"PCC's 95th-percentile completion time is similar to TCP's at the loads below "
            f"{pct(HIGH_LOAD, 0)} (the ratio farthest from 1)",
            "similar",
            worst_p95,
            CRIT_SIMILAR,
            ratio2,
            "As 9a: at low load the 95th percentile is a transfer alone on the link too.",
        ),
        Reproduction.judge(
            "9c",
            FIGURE,
            f"at {pct(HIGH_LOAD, 0)} load PCC's 95th percentile is somewhat longer than TCP's (PCC / TCP)",
            "1.2× (20 % longer)",
            high_p95,
            CRIT_9C,
            ratio2,
        ),
    ]
    size = f"{num(size_bytes(template['traffic']['size']) / 1e3)} KB"
    return Section(
        "9",
        "Short-flow completion times",
        FIGURE,
        f"{num(capacity)} Mbit/s, {num(file.rtt_ms())} ms RTT, {size_text(file.buffer())} drop-tail "
        f"buffer (the paper gives none; Emulab's default queue); {SOURCES} sources of {size} "
        "transfers, each on a new connection, requested at exponentially distributed intervals whose mean "
        f"sets the offered load in payload ({', '.join(pct(x, 0) for x in loads)}); "
        f"{duration.removesuffix('s')} s per run, {seeds} seeds. "
        "PCC runs on the default stack, TCP (CUBIC) on "
        f"{LINUX_MODEL}, whose connections open with a handshake. A transfer's time is counted from "
        "when its connection can carry data (`connected_s` in transfers.parquet) to its last byte at "
        "the receiver, so TCP's handshake round trip, which the default stack does not make, is left "
        "out of both; percentiles are pooled over all transfers of a run, then the median over seeds.",
        [ctx.rel(ctx.scenario(SCENARIO))],
        name,
        table,
        claims,
    )
