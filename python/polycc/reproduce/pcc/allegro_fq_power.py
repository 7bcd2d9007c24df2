"""Allegro §4.4.1, Fig. 17: the power (throughput over delay) of two interactive flows behind fair
queueing, with CoDel or with a deep buffer; TCP against PCC with the latency utility."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any

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
from polycc.reproduce.kernel_tcp import LINUX_MODEL, kernel_tcp
from polycc.reproduce.pcc.shared import ALLEGRO, RATIO_FACTOR, SEEDS, median, ratio2
from polycc.reproduce.scenario_file import size_text

SCENARIO = "fq-power.toml"
FIGURE = f"{ALLEGRO} Fig. 17"
PCC = "PCC (latency utility)"
TCP = "TCP (CUBIC)"
CODEL = "FQ + CoDel"
BLOAT = "FQ + deep buffer"
#: What turns the scenario's FQ-CoDel into plain fair queueing: a CoDel that never drops (its
#: target and interval far beyond any sojourn here); the shared buffer's limit still drops from
#: the largest queue.
NO_CODEL = {"links.0.queue.target": "1000s", "links.0.queue.interval": "1000s"}
#: The start-up is left out of the power: it is measured from here on.
FROM_S = 10.0

# The criteria (issue 19), from Allegro §4.4.1, fixed before the runs.
#: 10a: "with TCP CUBIC and two simultaneous interactive flows, 'FQ + CoDel' achieves 10.5× more
#: power than 'FQ + Bufferbloat'".
CRIT_10A = WithinFactor(10.5, RATIO_FACTOR)
#: 10b: "with PCC, 'Bufferbloat + FQ' and 'Codel + FQ' render no power difference" (the figure:
#: "Equal"). No number; within ×1.25 either way, the tolerance this section's short-flow claims
#: give "similar" (the paper names a 20 % difference as one).
EQUAL = 1.25
CRIT_10B = Band(1.0, 1 / EQUAL, EQUAL, paper_number=False)
#: 10c: "with either, PCC achieves higher power than 'TCP + Codel + FQ'" (the figure: 1.55×).
CRIT_10C = WithinFactor(1.55, RATIO_FACTOR)


def power(ts: Any, flows: list[str]) -> float:
    """The mean over `flows` of each one's goodput (Mbit/s) over its mean RTT (s), from FROM_S on."""
    per_flow = []
    for f in flows:
        d = ts[(ts["flow"] == f) & (ts["t_s"] >= FROM_S)]
        goodput, rtt_ms = float(d["goodput_mbps"].mean()), float(d["rtt_ms"].mean())
        per_flow.append(goodput / (rtt_ms / 1e3) if rtt_ms > 0 else math.nan)
    return statistics.fmean(per_flow)


#: A flow "holds a queue" in a bin whose RTT is above this many times the base RTT.
QUEUED_RTTS = 2.0


def queue_diagnosis(ts: Any, flows: list[str], base_rtt_ms: float) -> tuple[float, float, float]:
    """(the largest rate an MI was sent at in the first 2 s, Mbit/s; the first time after it at
    which every flow's RTT is back below QUEUED_RTTS base RTTs, s; the share of the bins from
    FROM_S on in which some flow holds a queue) of one run."""
    start = ts[ts["t_s"] < 2.0]
    peak = float(start["cc_mi_send_mbps"].max()) if "cc_mi_send_mbps" in ts else math.nan
    high = ts.assign(q=ts["rtt_ms"] > QUEUED_RTTS * base_rtt_ms).groupby("t_s")["q"].any()
    drained = next((float(t) for t, q in high.items() if t >= 2.0 and not q), math.nan)
    later = high[high.index >= FROM_S]
    return peak, drained, float(later.mean()) if len(later) else math.nan


def run(ctx: Context) -> Section:
    seeds = 2 if ctx.quick else SEEDS
    duration = "40s" if ctx.quick else "100s"
    file = ctx.scenario_file(SCENARIO)
    flows = [str(f["id"]) for f in file.doc["flows"]]
    ccas: Mapping[str, Mapping[str, Any]] = {PCC: {}, TCP: kernel_tcp("cubic")}
    queues: Mapping[str, Mapping[str, Any]] = {CODEL: {}, BLOAT: NO_CODEL}
    points = {(c, q): {**ccas[c], **queues[q], "duration": duration} for c in ccas for q in queues}
    name = "fq-power"
    res = ctx.sweep_labeled(name, SCENARIO, points, seeds=seeds)
    pw = {k: [power(ctx.timeseries(name, row), flows) for row in rows] for k, rows in res.items()}

    def rtt_ms(key: tuple[str, str]) -> float:
        return median([float(r[f"flow.{f}.rtt_ms.mean"]) for r in res[key] for f in flows])

    def seed_ratios(a: tuple[str, str], b: tuple[str, str]) -> list[float]:
        return [x / y for x, y in zip(pw[a], pw[b], strict=True)]

    base = file.rtt_ms()
    diag = {
        q: [queue_diagnosis(ctx.timeseries(name, row), flows, base) for row in res[(PCC, q)]] for q in queues
    }

    def diag_median(q: str, i: int) -> float:
        return median([d[i] for d in diag[q]])

    def worst(q: str, key: str) -> float:
        """The median over seeds of the larger of the two PCC flows' summary value `key`."""
        return median([max(float(r[f"flow.{f}.{key}"]) for f in flows) for r in res[(PCC, q)]])

    why_pcc = (
        f"PCC's starting state doubles its rate each MI and is judged an RTT after each MI: its "
        f"fastest MI went out at {fmt(diag_median(BLOAT, 0), 0)} Mbit/s (median of the seeds) "
        f"against a share of {num(file.rate_mbps() / len(flows))}, and filled the shared buffer "
        "(the largest queue dropping first). The decision and rate-adjusting states then drain it in "
        "steps of 1 % of the rate and more, one per MI of 1.7–2.2 RTTs after a decision over four, "
        "at RTTs of up to half a second: "
        f"behind the deep buffer every flow's RTT was back below {num(QUEUED_RTTS)}× the base at "
        f"{fmt(diag_median(BLOAT, 1), 1)} s. And when one flow lowers its rate, fair queueing "
        "gives its share to the other, whose throughput, and so utility, rises with its rate: it "
        "climbs above its share and builds a queue of its own, which again drains slowly. A flow "
        f"held a queue in {fmt(100 * diag_median(BLOAT, 2), 0)} % of the bins from {num(FROM_S)} s "
        f"on behind the deep buffer, {fmt(100 * diag_median(CODEL, 2), 0)} % with CoDel."
    )

    table = Table(["controller", "queue", "power (Mbit/s per s, median)", "mean RTT (ms, whole run)"])
    for c in ccas:
        for q in queues:
            table.add(c, q, fmt(median(pw[(c, q)]), 0), fmt(rtt_ms((c, q)), 1))
    claims = [
        Reproduction.judge(
            "10a",
            FIGURE,
            f"TCP: {CODEL} gives far more power than {BLOAT} (ratio)",
            "10.5×",
            seed_ratios((TCP, CODEL), (TCP, BLOAT)),
            CRIT_10A,
            ratio2,
        ),
        Reproduction.judge(
            "10b",
            FIGURE,
            f"PCC: {CODEL} and {BLOAT} give the same power (ratio)",
            "equal",
            seed_ratios((PCC, CODEL), (PCC, BLOAT)),
            CRIT_10B,
            ratio2,
            why_pcc,
        ),
        Reproduction.judge(
            "10c",
            FIGURE,
            f"PCC gets more power than TCP with {CODEL} (PCC / TCP)",
            "1.55×",
            seed_ratios((PCC, CODEL), (TCP, CODEL)),
            CRIT_10C,
            ratio2,
            "As 10b: with CoDel too one of PCC's flows builds queues (its "
            f"95th-percentile RTT {fmt(worst(CODEL, 'rtt_ms.p95'), 0)} ms, median of the seeds): "
            f"CoDel drops {pct(worst(CODEL, 'loss_rate'), 1)} of its packets, under the 5 % knee of "
            "the utility's loss sigmoid, so the drops barely lower its utility.",
        ),
    ]
    return Section(
        "10",
        "Interactive flows behind fair queueing",
        FIGURE,
        f"{num(file.rate_mbps())} Mbit/s, {num(file.rtt_ms())} ms RTT, two flows; FQ-CoDel with its "
        f"default parameters, or the same fair queueing with CoDel turned off; a "
        f"{size_text(file.buffer())} buffer shared by the flows' queues (the paper gives none); "
        f"{duration.removesuffix('s')} s per run, {seeds} seeds. PCC runs §4.4.1's latency utility "
        f'(`utility = "allegro-latency"`) on the default stack, TCP (CUBIC) on {LINUX_MODEL}. '
        f"A flow's power is its goodput over its mean RTT from {num(FROM_S)} s on; a run's is the "
        "mean of the two flows'.",
        [ctx.rel(ctx.scenario(SCENARIO))],
        name,
        table,
        claims,
    )
