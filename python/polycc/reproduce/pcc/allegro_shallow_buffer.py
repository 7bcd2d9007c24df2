"""Allegro §4.1.6, Fig. 9: throughput against the bottleneck buffer, from one packet to one BDP;
PCC against unpaced CUBIC and paced NewReno."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from polycc.reproduce.common import (
    AtLeast,
    Context,
    Reproduction,
    Section,
    Table,
    WithinFactor,
    WithinPoints,
    num,
    pct,
    prose,
    ratio,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL, kernel_tcp
from polycc.reproduce.pcc.shared import (
    ALLEGRO,
    BOUND_POINTS,
    RATIO_FACTOR,
    SEEDS,
    SHARE_POINTS,
    kilobytes,
    median,
    per_seed_goodput,
    seed_ratios,
)
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile

SCENARIO = "shallow-buffer.toml"
FIGURE = f"{ALLEGRO} Fig. 9"
PCC = "pcc-allegro"
KINDS: dict[str, dict[str, Any]] = {
    PCC: {"flows.0.cca": "pcc-allegro"},
    # Issue 19: the paper's CUBIC was the Linux kernel's, unpaced (no fq); the Linux model paces
    # only BBR. Its paced NewReno was the paper's own implementation: the default stack's pacing.
    "cubic": kernel_tcp("cubic", "0"),
    "newreno paced": {"flows.0.cca": "newreno", "flows.0.pacing": True},
}
#: The share of capacity the claims compare buffers at, and the buffer (packets) 2a quotes.
LEVEL = 0.9
AT_PACKETS = 6


# The criteria (issue 19), from Allegro §4.1.6, fixed before the runs.
#: 2a: "PCC only requires 6·MSS buffer to reach 90 % capacity" (a bound).
CRIT_2A = AtLeast(LEVEL - BOUND_POINTS / 100, paper=LEVEL)
#: 2b: "CUBIC requires 13× more buffer than PCC to reach 90 % throughput".
CRIT_2B = WithinFactor(13.0, RATIO_FACTOR)
#: 2c: "Even with pacing, TCP still requires 25× more buffer than PCC to reach 90 % throughput".
CRIT_2C = WithinFactor(25.0, RATIO_FACTOR)
#: 2d: "PCC's throughput can reach 25 % of capacity with just a single-packet buffer".
CRIT_2D = WithinPoints(0.25, SHARE_POINTS)
#: 2e / 2f: "With the same buffer [6 MSS], CUBIC can only reach 2 % capacity and even TCP with
#: packet pacing can only reach 30 %" (added after the first run under issue 19, at the paper's
#: numbers and the same tolerance as every measured share).
CRIT_2E = WithinPoints(0.02, SHARE_POINTS)
CRIT_2F = WithinPoints(0.30, SHARE_POINTS)
#: 2g: "[with a single-packet buffer] 35× higher throughput than TCP under the same scenario"
#: (TCP: CUBIC, the figure's unpaced TCP).
CRIT_2G = WithinFactor(35.0, RATIO_FACTOR)


def buffer_ratio(other: float, pcc: float) -> float:
    """The other CCA's smallest buffer reaching LEVEL over PCC's: NaN when PCC never reached it,
    ∞ when only PCC did (the other needs more than the largest buffer tried)."""
    if math.isnan(pcc):
        return math.nan
    return math.inf if math.isnan(other) else other / pcc


def _claims(u: Mapping[tuple[str, int], list[float]], buffers: list[int], seeds: int) -> list[Reproduction]:
    def first_at(kind: str, i: int) -> float:
        return next((float(b) for b in buffers if u[(kind, b)][i] >= LEVEL), float("nan"))

    def ratios(kind: str) -> list[float]:
        return [buffer_ratio(first_at(kind, i), first_at(PCC, i)) for i in range(seeds)]

    level = pct(LEVEL, 0)
    return [
        Reproduction.judge(
            "2a",
            FIGURE,
            f"PCC reaches {level} of capacity with a {AT_PACKETS}-packet buffer",
            "90 %",
            u[(PCC, AT_PACKETS)],
            CRIT_2A,
            pct,
        ),
        Reproduction.judge(
            "2b",
            FIGURE,
            f"CUBIC needs far more buffer than PCC for {level} "
            f"(ratio of the smallest buffers reaching {level}; ∞: never up to {buffers[-1]} packets)",
            "13×",
            ratios("cubic"),
            CRIT_2B,
            ratio,
        ),
        Reproduction.judge(
            "2c",
            FIGURE,
            f"pacing alone does not explain it: paced NewReno needs more buffer than PCC for {level}",
            "25×",
            ratios("newreno paced"),
            CRIT_2C,
            ratio,
        ),
        Reproduction.judge(
            "2d",
            FIGURE,
            "PCC with a one-packet buffer",
            "25 %",
            u[(PCC, 1)],
            CRIT_2D,
            pct,
            prose(
                """
                Ours is far higher: the simulator paces exactly (no timer slack, no NIC or TSO
                batching), so a flow paced just below capacity rarely has two packets at the queue
                at once; the paper's user-space sender on Emulab hosts sent in bursts. PCC then
                reaches 90 % with the smallest buffer tried, which sets the denominators of 2b
                and 2c.
                """
            ),
        ),
        Reproduction.judge(
            "2e",
            FIGURE,
            f"with the same {AT_PACKETS}-packet buffer CUBIC reaches only a little of the capacity",
            "2 %",
            u[("cubic", AT_PACKETS)],
            CRIT_2E,
            pct,
            "See this section's note: the Linux model has no stretch ACKs from late reads, nor 2015's TSO "
            "bursts.",
        ),
        Reproduction.judge(
            "2f",
            FIGURE,
            f"with the same {AT_PACKETS}-packet buffer paced NewReno reaches",
            "30 %",
            u[("newreno paced", AT_PACKETS)],
            CRIT_2F,
            pct,
        ),
        Reproduction.judge(
            "2g",
            FIGURE,
            "with a one-packet buffer PCC gets far more than TCP (PCC / CUBIC)",
            "35×",
            seed_ratios(u[(PCC, 1)], u[("cubic", 1)]),
            CRIT_2G,
            ratio,
        ),
    ]


def _setup(file: ScenarioFile, buffers: list[int], duration: str) -> str:
    lo, hi = buffers[0], buffers[-1]
    bdp = file.bdp_bytes()
    bdps = hi * PACKET_BYTES / bdp
    return (
        f"{num(file.rate_mbps())} Mbit/s, {num(file.rtt_ms())} ms RTT, drop-tail buffer from "
        f"{lo} packet{'s' if lo != 1 else ''} ({kilobytes(lo)}) to {hi} packets "
        f"({kilobytes(hi)}, {num(bdps)} BDP); "
        f"{duration} per run (paper: 100 s). CUBIC runs on {LINUX_MODEL}, as the paper's "
        "kernel CUBIC, unpaced (Linux of 2015 paced only under fq); NewReno, the paper's own paced "
        "implementation, on the default stack, paced at cwnd/RTT (Linux's scaling) as the paper's control."
    )


def run(ctx: Context) -> Section:
    buffers = [1, 6, 80] if ctx.quick else [1, 2, 3, 6, 10, 20, 40, 80, 150, 250]
    duration = "15s" if ctx.quick else "100s"
    points = {
        (k, b): {**o, "links.0.queue.size": f"{b}pkt", "duration": duration}
        for k, o in KINDS.items()
        for b in buffers
    }
    seeds = 2 if ctx.quick else SEEDS
    res = ctx.sweep_labeled("shallow-buffer", SCENARIO, points, seeds=seeds)
    file = ctx.scenario_file(SCENARIO)
    u = {k: [g / file.rate_mbps() for g in per_seed_goodput(v)] for k, v in res.items()}
    table = Table(["buffer", *[f"{k} (% of capacity, median of {seeds} seeds)" for k in KINDS]])
    for b in buffers:
        table.add(f"{b} pkt ({kilobytes(b)})", *[pct(median(u[(k, b)])) for k in KINDS])
    return Section(
        "2",
        "Shallow buffer",
        FIGURE,
        _setup(file, buffers, duration),
        [ctx.rel(ctx.scenario(SCENARIO))],
        "shallow-buffer",
        table,
        _claims(u, buffers, seeds),
        [
            prose(
                """
                The Linux model's unpaced CUBIC does better with a few packets of buffer than the
                paper's: its receiver acknowledges every second segment and compresses its SACKs as
                today's kernel does, so the ACK clock releases two or three packets at a time (more
                after a compressed SACK), but the stretch ACKs of a receiving application's late
                reads are not modelled, and Linux in 2015 sent TSO bursts of up to 64 KB, which a
                buffer of a few packets drops ("Why today's kernel CUBIC collapses", after the next
                section). With one packet of buffer it collapses as the paper's did.
                """
            ),
        ],
    )
