"""The PCC family's published results: PCC Allegro (Dong et al., NSDI'15, seed text 001) and PCC
Proteus (Meng et al., SIGCOMM'20, seed text 000), reproduced in the simulator.

Each `_exp_*` function runs one experiment (scenario files in scenarios/papers/pcc/) and returns
its `Section`. The pass criteria are the papers' qualitative claims with a stated margin; they are
fixed here, before and independently of the results. `ctx.quick` selects shortened versions
(shorter runs, fewer points) used by the tests.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from polycc.reproduce.common import (
    Context,
    Reproduction,
    Section,
    Table,
    fmt,
    pct,
    prose,
    ratio,
    safe_div,
)

if TYPE_CHECKING:
    import pandas as pd

TITLE = "PCC family: Allegro (NSDI'15) and Proteus (SIGCOMM'20)"

ALLEGRO = "Allegro"
PROTEUS = "Proteus"


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        _exp_random_loss,
        _exp_shallow_buffer,
        _exp_satellite,
        _exp_changing,
        _exp_rtt_fairness,
        _exp_convergence,
        _exp_scavenger,
        _exp_bbr_s,
    ]
    return [step(ctx) for step in steps]


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float:
    vals = [float(r[key]) for r in rows]
    return statistics.fmean(vals) if vals else float("nan")


def _goodput(rows: Sequence[dict[str, Any]], flow: str = "sender") -> float:
    return _mean(rows, f"flow.{flow}.goodput_mbps")


# ---------------------------------------------------------------------------------------------
# 1. Random loss (Allegro §4.1.4, Fig. 7; loss-resilient utility §4.4.2)

CAPACITY_MBPS = 100.0
# Seeds per point: near the 5 % knee one seed is a draw from a bistable outcome (see the note).
RANDOM_LOSS_SEEDS = 5


def _exp_random_loss(ctx: Context) -> Section:
    losses = (
        [0.001, 0.01, 0.02] if ctx.quick else [0.0, 0.001, 0.005, 0.007, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    )
    ccas = ["pcc-allegro", "cubic"] if ctx.quick else ["pcc-allegro", "cubic", "illinois"]
    duration = "15s" if ctx.quick else "60s"
    points = {
        (cca, loss): {
            "flows.0.cca": cca,
            "links.0.loss": loss,
            "links.0.ack_loss": loss,
            "duration": duration,
        }
        for cca in ccas
        for loss in losses
    }
    # §4.4.2: forward loss only, the loss-resilient utility T·(1 − L).
    heavy = [0.1, 0.3] if ctx.quick else [0.1, 0.2, 0.3, 0.4, 0.5]
    for loss in heavy:
        points[("pcc-allegro/loss-resilient", loss)] = {
            "flows.0.cca": {"name": "pcc-allegro", "utility": "loss-resilient"},
            "links.0.loss": loss,
            "links.0.ack_loss": 0.0,
            "duration": duration,
        }
    # Diagnostic: Illinois with exactly paced sends (the scenario gives every sender 1 ms of host
    # send-time noise).
    exact_losses = [0.007, 0.02] if "illinois" in ccas else []
    for loss in exact_losses:
        points[("illinois/exact", loss)] = {
            **points[("illinois", loss)],
            "flows.0.send_jitter": "0ms",
        }
    seeds = 1 if ctx.quick else RANDOM_LOSS_SEEDS
    res = ctx.sweep_labeled("random-loss", "random-loss.toml", points, seeds=seeds)
    g = {k: _goodput(v) for k, v in res.items()}
    # PCC's goodput per seed, at the losses where the seeds disagree by more than a fifth of the
    # capacity (see the note).
    per_seed = {x: [float(r["flow.sender.goodput_mbps"]) for r in res[("pcc-allegro", x)]] for x in losses}
    split = [x for x in losses if max(per_seed[x]) - min(per_seed[x]) > 0.2 * CAPACITY_MBPS]

    def startup_exit_rate(row: Mapping[str, Any]) -> float:
        """PCC's rate (Mbit/s) in the first time bin after its start-up state."""
        ts = ctx.timeseries("random-loss", row)
        after = ts[(ts["flow"] == "sender") & (ts["cc_state"] != "starting")]
        return float(after["cc_rate_mbps"].iloc[0]) if len(after) else math.nan

    trapped_exits = [
        startup_exit_rate(r)
        for x in split
        for r in res[("pcc-allegro", x)]
        if float(r["flow.sender.goodput_mbps"]) < 0.5 * CAPACITY_MBPS
    ]

    table = Table(["loss (each direction)", *[f"{c} goodput (Mbit/s)" for c in ccas], "PCC / CUBIC"])
    for loss in losses:
        table.add(
            pct(loss),
            *[g[(c, loss)] for c in ccas],
            ratio(safe_div(g[("pcc-allegro", loss)], g[("cubic", loss)])),
        )
    for loss in heavy:
        table.add(
            f"{pct(loss, 0)} forward only, loss-resilient utility",
            fmt(g[("pcc-allegro/loss-resilient", loss)]),
            *["" for _ in ccas[1:]],
            f"{pct(g[('pcc-allegro/loss-resilient', loss)] / CAPACITY_MBPS)} of capacity",
        )
    for loss in exact_losses:
        table.add(
            f"{pct(loss)}, exact pacing (no send jitter)",
            *["" for _ in ccas[:-1]],
            fmt(g[("illinois/exact", loss)]),
            "",
        )

    fig = f"{ALLEGRO} Fig. 7"
    pcc = "pcc-allegro"
    low = [x for x in losses if x <= 0.01]
    worst_low = min(g[(pcc, x)] for x in low) / CAPACITY_MBPS
    reps = [
        Reproduction.at_least(
            "1a",
            fig,
            f"PCC keeps > 95 % of capacity up to 1 % loss (worst of {', '.join(pct(x) for x in low)})",
            "> 95 %",
            worst_low,
            0.90,
            pct,
        ),
    ]
    at2 = g[(pcc, 0.02)] / CAPACITY_MBPS
    reps.append(
        Reproduction.at_least(
            "1b",
            fig,
            "PCC degrades gracefully at 2 % loss",
            "74 %",
            at2,
            0.5,
            pct,
            prose(
                f"""
                Per seed: {", ".join(fmt(v) for v in sorted(per_seed[0.02]))} Mbit/s. Below the
                safe utility's 5 % knee a higher rate has the higher utility, so a flow that
                reaches the link's rate holds it; one that leaves start-up low can stay there
                (see this section's note). The paper gives no per-trial values, so whether
                its drop from 95 % to 74 % between 1 % and 2 % mixes such outcomes is not known.
                The buffer (not given) also matters: with a 1-BDP buffer the overflow losses PCC
                causes add to the random ones.
                """
            ),
        )
    )
    r01 = safe_div(g[(pcc, 0.001)], g[("cubic", 0.001)])
    reps.append(
        Reproduction.at_least(
            "1c",
            fig,
            "CUBIC collapses under random loss: PCC / CUBIC at 0.1 % loss",
            "10×",
            r01,
            3.0,
            ratio,
            prose(
                """
                Our CUBIC (RFC 9438 with HyStart++, SACK-like RFC 9002 recovery) keeps more of the
                link at 0.1 % than the paper's 2015 Linux CUBIC; the Mathis bound for Reno at 0.1 %
                and 30 ms is 15 Mbit/s, and CUBIC's concave growth adds to it.
                """
            ),
        )
    )
    r2 = safe_div(g[(pcc, 0.02)], g[("cubic", 0.02)])
    reps.append(
        Reproduction.at_least(
            "1d",
            fig,
            "PCC / CUBIC at 2 % loss",
            "37×",
            r2,
            10.0,
            ratio,
        )
    )
    if "illinois" in ccas:
        ri = safe_div(g[(pcc, 0.007)], g[("illinois", 0.007)])
        reps.append(
            Reproduction.at_least(
                "1e",
                fig,
                "Illinois below 10 % of PCC at 0.7 % loss: PCC / Illinois",
                "> 10×",
                ri,
                5.0,
                ratio,
                prose(
                    f"""
                    Holds with the senders' 1 ms of host send-time noise; without it Illinois
                    reaches {fmt(g[("illinois/exact", 0.007)])} Mbit/s at 0.7 % and
                    {fmt(g[("illinois/exact", 0.02)])} at 2 % (the exact-pacing rows), a ratio of
                    {ratio(safe_div(g[(pcc, 0.007)], g[("illinois/exact", 0.007)]))}. Illinois
                    (Linux tcp_illinois) sets its AIMD parameters from the average queueing delay
                    d_a against the largest it has seen, d_m: α = 10 packets and β = 1/8 while d_a
                    stays below d_m / 100, moving to α = 0.3 and β = 1/2 (Reno-like) as it rises.
                    Exactly paced onto an empty queue, d_a stays near zero and Illinois runs at its
                    most aggressive point; the host noise alone (0.5 ms on average) keeps d_a
                    above that bound, so it runs as Reno does under random loss, as on the
                    paper's Emulab hosts.
                    """
                ),
            )
        )
        ri2 = safe_div(g[(pcc, 0.02)], g[("illinois", 0.02)])
        reps.append(
            Reproduction.at_least(
                "1f",
                fig,
                "PCC / Illinois at 2 % loss",
                "16×",
                ri2,
                5.0,
                ratio,
                "As 1e: the host send-time noise holds Illinois at its Reno-like point.",
            )
        )
        at6 = g[(pcc, 0.06)] / CAPACITY_MBPS
        reps.append(
            Reproduction.at_most(
                "1g",
                fig,
                "the safe utility gives up above its 5 % loss cap (PCC at 6 % loss)",
                "3 %",
                at6,
                0.2,
                pct,
            )
        )
    # Simulated random loss drops packets before they reach the bottleneck queue, so they take none
    # of its capacity: the best possible goodput is the capacity itself.
    worst_lr_loss = min(heavy, key=lambda x: g[("pcc-allegro/loss-resilient", x)])
    worst_lr = g[("pcc-allegro/loss-resilient", worst_lr_loss)] / CAPACITY_MBPS
    lr_seeds = {
        x: [float(r["flow.sender.goodput_mbps"]) for r in res[("pcc-allegro/loss-resilient", x)]]
        for x in heavy
    }
    reps.append(
        Reproduction.at_least(
            "1h",
            f"{ALLEGRO} §4.4.2",
            f"the loss-resilient utility stays near optimal at {pct(heavy[0], 0)}–{pct(heavy[-1], 0)} "
            "forward loss (worst case)",
            ">= 97 %",
            worst_lr,
            0.9,
            pct,
            prose(
                f"""
                Optimal here is the capacity: the simulator drops randomly lost packets before the
                bottleneck, so they cost no capacity (an emulator that drops after the link would
                make it capacity × (1 − loss)). Per seed at {pct(worst_lr_loss, 0)}: {
                    ", ".join(fmt(v) for v in sorted(lr_seeds[worst_lr_loss]))
                } Mbit/s. T·(1 − L) rises with the rate at any loss, but an MI of a dozen packets
                measures a 40–50 % loss rate only to about ±14 % (binomial), so in start-up a
                doubled rate can measure the lower utility and end the doubling at a few Mbit/s;
                from there RCTs of ±1–5 % under that noise rarely agree, and the rate climbs
                only slowly.
                """
            ),
        )
    )
    return Section(
        "1",
        "Random loss",
        fig,
        f"100 Mbit/s, 30 ms RTT, 1-BDP drop-tail buffer (not given in the paper), random loss on data and "
        f"ACK directions; {duration} per run (the paper does not give the duration), mean of {seeds} "
        "seed(s). Goodput counts unique application bytes. The loss-resilient rows drop data packets "
        "only, as §4.4.2.",
        [ctx.rel(ctx.scenario("random-loss.toml"))],
        "random-loss",
        table,
        reps,
        [
            prose(
                f"""
                Near the safe utility's 5 % knee PCC is bistable, so the table gives means over
                seeds: per seed it gets {
                    "; ".join(
                        f"{', '.join(fmt(v) for v in sorted(per_seed[x]))} Mbit/s at {pct(x)}" for x in split
                    )
                }. A flow whose start-up doubling reaches the link's rate measures each MI's loss
                over hundreds of packets, close to the path's rate, and stays. One that leaves
                start-up at a few Mbit/s (an early MI that lost more than 5 %) has MIs of a few
                dozen packets, in which one loss more or less moves the loss rate by several
                per cent across the knee: its trials then often favour the lower rate, and it
                stays trapped far below the link (the trapped runs left start-up at {
                    _span(trapped_exits, lambda v: f"{fmt(v, 1)} Mbit/s")
                }).
                """
            )
        ]
        if split
        else [],
    )


# ---------------------------------------------------------------------------------------------
# 2. Shallow buffer (Allegro §4.1.6, Fig. 9)


def _needs_more(other: float, pcc: float, factor: float) -> bool:
    """PCC reached the level (pcc is a buffer size) and the other did not, or at `factor` × more."""
    if math.isnan(pcc):
        return False
    return math.isnan(other) or other >= factor * pcc


def _exp_shallow_buffer(ctx: Context) -> Section:
    buffers = [1, 6, 80] if ctx.quick else [1, 2, 3, 6, 10, 20, 40, 80, 150, 250]
    duration = "15s" if ctx.quick else "100s"
    kinds: dict[str, dict[str, Any]] = {
        "pcc-allegro": {"flows.0.cca": "pcc-allegro"},
        "cubic": {"flows.0.cca": "cubic", "flows.0.pacing": False},
        "newreno paced": {"flows.0.cca": "newreno", "flows.0.pacing": True},
    }
    points = {
        (k, b): {**o, "links.0.queue.size": f"{b}pkt", "duration": duration}
        for k, o in kinds.items()
        for b in buffers
    }
    res = ctx.sweep_labeled("shallow-buffer", "shallow-buffer.toml", points)
    u = {k: _goodput(v) / CAPACITY_MBPS for k, v in res.items()}
    table = Table(["buffer", *[f"{k} (% of capacity)" for k in kinds]])
    for b in buffers:
        table.add(f"{b} pkt ({b * 1.5:g} KB)", *[pct(u[(k, b)]) for k in kinds])

    def first_at(kind: str, level: float) -> float:
        return next((float(b) for b in buffers if u[(kind, b)] >= level), float("nan"))

    fig = f"{ALLEGRO} Fig. 9"
    at6 = u[("pcc-allegro", 6)]
    pcc90, cubic90, reno90 = (
        first_at("pcc-allegro", 0.9),
        first_at("cubic", 0.9),
        first_at("newreno paced", 0.9),
    )
    reps = [
        Reproduction.at_least(
            "2a",
            fig,
            "PCC reaches 90 % of capacity with a 6-packet buffer",
            "90 %",
            at6,
            0.85,
            pct,
        ),
        Reproduction(
            "2b",
            fig,
            "CUBIC needs far more buffer than PCC for 90 % (ratio of the smallest buffers reaching 90 %)",
            "13×",
            ratio(safe_div(cubic90, pcc90)) if cubic90 == cubic90 else f"> {ratio(buffers[-1] / pcc90)}",
            _needs_more(cubic90, pcc90, 4.0),
            ">= 4×",
            value=safe_div(cubic90, pcc90),
        ),
        Reproduction(
            "2c",
            fig,
            "pacing alone does not explain it: paced NewReno needs more buffer than PCC for 90 %",
            "25×",
            ratio(safe_div(reno90, pcc90)) if reno90 == reno90 else f"> {ratio(buffers[-1] / pcc90)}",
            _needs_more(reno90, pcc90, 2.0),
            ">= 2×",
            value=safe_div(reno90, pcc90),
        ),
    ]
    u1 = u[("pcc-allegro", 1)]
    reps.append(
        Reproduction.at_least(
            "2d",
            fig,
            "PCC with a one-packet buffer",
            "25 %",
            u1,
            0.2,
            pct,
            prose(
                """
                Ours is far higher: the simulator paces exactly (no timer slack, no NIC or TSO
                batching), so a flow paced just below capacity rarely has two packets at the queue
                at once; the paper's user-space sender on Emulab hosts sent in bursts.
                """
            ),
        )
    )
    return Section(
        "2",
        "Shallow buffer",
        fig,
        f"100 Mbit/s, 30 ms RTT, drop-tail buffer from 1 packet (1.5 KB) to 250 packets (375 KB, 1 BDP); "
        f"{duration} per run (paper: 100 s). CUBIC is not paced (Linux of 2015 paced only under fq); "
        "NewReno is paced at cwnd/RTT (Linux's scaling) as the paper's control.",
        [ctx.rel(ctx.scenario("shallow-buffer.toml"))],
        "shallow-buffer",
        table,
        reps,
        [
            prose(
                """
                Unpaced CUBIC does better with tiny buffers than in the paper: the simulated sender
                has no TSO bursts and the receiver ACKs every packet, so the ACK clock releases one
                or two packets at a time; Linux in 2015 sent TSO bursts of up to 64 KB, which a
                buffer of a few packets drops.
                """
            ),
        ],
    )


# ---------------------------------------------------------------------------------------------
# Helpers over time series


def _series(ts: pd.DataFrame, flow: str, start: float, end: float) -> list[float]:
    """A flow's goodput samples (Mbit/s, one per bin) with start <= t < end."""
    sel = ts[(ts["flow"] == flow) & (ts["t_s"] >= start) & (ts["t_s"] < end)]
    return [float(x) for x in sel["goodput_mbps"].fillna(0.0)]


def _window_means(xs: Sequence[float], per: int) -> list[float]:
    return [statistics.fmean(xs[i : i + per]) for i in range(0, len(xs) - per + 1, per)]


def jain(xs: Sequence[float]) -> float:
    total, squares = sum(xs), sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if squares > 0 else math.nan


def _span(xs: Sequence[float], f: Callable[[float], str]) -> str:
    """The range of `xs` as text, "lo–hi" (one value when they format alike)."""
    if not xs:
        return "–"
    lo, hi = f(min(xs)), f(max(xs))
    return lo if lo == hi else f"{lo}–{hi}"


# ---------------------------------------------------------------------------------------------
# 3. Satellite (Allegro §4.1.3, Fig. 6)

SAT_CAPACITY_MBPS = 42.0


def _exp_satellite(ctx: Context) -> Section:
    buffers = [5, 667] if ctx.quick else [1, 5, 10, 50, 100, 300, 667]
    ccas = ["pcc-allegro", "hybla"] if ctx.quick else ["pcc-allegro", "hybla", "illinois", "cubic"]
    # quick: 60 s; at 800 ms RTT the start-up takes several seconds, and in 40 s runs its share
    # of the mean varied with the flow's random seed across the 80 % criterion (78.8–81.0 %).
    duration = "60s" if ctx.quick else "100s"
    points = {
        (c, b): {"flows.0.cca": c, "links.0.queue.size": f"{b}pkt", "duration": duration}
        for c in ccas
        for b in buffers
    }
    res = ctx.sweep_labeled("satellite", "satellite.toml", points)
    g = {k: _goodput(v) for k, v in res.items()}
    table = Table(["buffer", *[f"{c} (Mbit/s)" for c in ccas]])
    for b in buffers:
        table.add(f"{b} pkt ({b * 1.5:g} KB)", *[g[(c, b)] for c in ccas])
    fig = f"{ALLEGRO} Fig. 6"
    pcc, big = "pcc-allegro", buffers[-1]
    reps = [
        Reproduction.at_least(
            "3a",
            fig,
            "PCC reaches 90 % of optimal with a 7.5 KB (5-packet) buffer",
            "90 %",
            g[(pcc, 5)] / SAT_CAPACITY_MBPS,
            0.8,
            pct,
            "Optimal is the capacity here: simulated random loss happens before the bottleneck.",
        ),
        Reproduction.at_least(
            "3b",
            fig,
            "Hybla far below PCC even with a 1 MB buffer (PCC / Hybla)",
            "17×",
            safe_div(g[(pcc, big)], g[("hybla", big)]),
            5.0,
            ratio,
        ),
    ]
    if "illinois" in ccas:
        reps.append(
            Reproduction.at_least(
                "3c",
                fig,
                "Illinois far below PCC with a 1 MB buffer (PCC / Illinois)",
                "54×",
                safe_div(g[(pcc, big)], g[("illinois", big)]),
                10.0,
                ratio,
            )
        )
    return Section(
        "3",
        "Satellite link",
        fig,
        f"42 Mbit/s, 800 ms RTT, 0.74 % random loss on data packets, drop-tail buffer from 1 packet to "
        f"667 packets (1 MB); {duration} per run (paper: 100 s).",
        [ctx.rel(ctx.scenario("satellite.toml"))],
        "satellite",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 4. Rapidly changing network (Allegro §4.1.7, Fig. 11)

#: The generator of scenarios/papers/pcc/changing-network.toml's schedule (tests check the file
#: matches it): every 5 s, capacity U[10, 100] Mbit/s, RTT U[10, 100] ms, loss U[0, 1] %, drawn
#: independently (Allegro §4.1.7).
CHANGING_SEED = 2015
CHANGING_PERIOD_S = 5
CHANGING_DURATION_S = 500
CHANGING_BASE_RTT_MS = 10.0


def changing_network_schedule(
    seed: int = CHANGING_SEED, duration_s: int = CHANGING_DURATION_S
) -> list[dict[str, Any]]:
    """Schedule points: the flow's base RTT is 10 ms, the link's one-way delay adds the rest."""
    import random

    rng = random.Random(seed)
    points: list[dict[str, Any]] = []
    for t in range(0, duration_s, CHANGING_PERIOD_S):
        rate = round(rng.uniform(10.0, 100.0), 1)
        rtt = round(rng.uniform(10.0, 100.0), 1)
        loss = round(rng.uniform(0.0, 0.01), 5)
        points.append(
            {
                "at": f"{t}s",
                "rate": f"{rate}Mbps",
                "delay": f"{round((rtt - CHANGING_BASE_RTT_MS) / 2, 2)}ms",
                "loss": loss,
            }
        )
    return points


def changing_network_toml() -> str:
    lines = [
        "# Allegro (Dong et al., NSDI'15) §4.1.7, Fig. 11: capacity, RTT and loss all change every 5 s,",
        "# each drawn independently: capacity U[10, 100] Mbit/s, RTT U[10, 100] ms (the flow's 10 ms",
        "# plus twice the link delay), loss U[0, 1] %. GENERATED by",
        "# polycc.reproduce.pcc.changing_network_toml() (seed 2015); do not edit by hand. The paper does",
        "# not give the buffer: 375 KB (one BDP at the mean capacity and RTT).",
        'name = "pcc-changing-network"',
        'description = "Allegro Fig. 11: capacity, RTT and loss redrawn every 5 s"',
        f'duration = "{CHANGING_DURATION_S}s"',
        "",
        "[[links]]",
        'id = "bottleneck"',
        'queue = { kind = "droptail", size = "375KB" }',
        "schedule = [",
    ]
    for p in changing_network_schedule():
        lines.append(
            f'    {{ at = "{p["at"]}", rate = "{p["rate"]}", delay = "{p["delay"]}", loss = {p["loss"]} }},'
        )
    lines += [
        "]",
        "",
        "[[flows]]",
        'id = "sender"',
        'cca = "pcc-allegro"',
        f'rtt = "{CHANGING_BASE_RTT_MS:g}ms"',
    ]
    return "\n".join(lines) + "\n"


def _exp_changing(ctx: Context) -> Section:
    duration = 50 if ctx.quick else CHANGING_DURATION_S
    ccas = ["pcc-allegro", "cubic"] if ctx.quick else ["pcc-allegro", "cubic", "illinois"]
    points = {c: {"flows.0.cca": c, "duration": f"{duration}s"} for c in ccas}
    res = ctx.sweep_labeled("changing-network", "changing-network.toml", points)
    sched = [p for p in changing_network_schedule() if int(str(p["at"])[:-1]) < duration]
    optimal = statistics.fmean(float(str(p["rate"])[:-4]) for p in sched)
    g = {c: _goodput(v) for c, v in res.items()}
    table = Table(["CCA", "goodput (Mbit/s)", "of optimal", "PCC / this"])
    for c in ccas:
        table.add(c, g[c], pct(g[c] / optimal), ratio(safe_div(g["pcc-allegro"], g[c])))
    fig = f"{ALLEGRO} Fig. 11"
    reps = [
        Reproduction.at_least(
            "4a",
            fig,
            "PCC tracks the changing optimum (goodput / mean capacity)",
            "83 %",
            g["pcc-allegro"] / optimal,
            0.7,
            pct,
        ),
        Reproduction.at_least(
            "4b", fig, "PCC / CUBIC", "14×", safe_div(g["pcc-allegro"], g["cubic"]), 5.0, ratio
        ),
    ]
    if "illinois" in g:
        reps.append(
            Reproduction.at_least(
                "4c", fig, "PCC / Illinois", "5.6×", safe_div(g["pcc-allegro"], g["illinois"]), 2.5, ratio
            )
        )
    return Section(
        "4",
        "Rapidly changing network",
        fig,
        f"Every 5 s capacity U[10, 100] Mbit/s, RTT U[10, 100] ms and loss U[0, 1] % are redrawn (one fixed "
        f"draw, seed {CHANGING_SEED}, written into the scenario file); {duration} s (paper: 500 s). Optimal "
        f"is the mean capacity, {optimal:.1f} Mbit/s.",
        [ctx.rel(ctx.scenario("changing-network.toml"))],
        "changing-network",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 5. RTT fairness (Allegro §4.1.5, Fig. 8)


def _exp_rtt_fairness(ctx: Context) -> Section:
    rtts = [20, 100] if ctx.quick else [20, 40, 60, 80, 100]
    ccas = ["pcc-allegro", "cubic"] if ctx.quick else ["pcc-allegro", "cubic", "newreno"]
    end = 35 if ctx.quick else 105
    points = {
        (c, r): {"flows.*.cca": c, "flows.0.rtt": f"{r}ms", "duration": f"{end}s"} for c in ccas for r in rtts
    }
    res = ctx.sweep_labeled("rtt-fairness", "rtt-fairness.toml", points)
    share: dict[tuple[str, int], float] = {}
    for k, rows in res.items():
        ts = ctx.timeseries("rtt-fairness", rows[0])
        long_, short = (statistics.fmean(_series(ts, f, 10.0, end)) for f in ("long", "short"))
        share[k] = safe_div(long_, short)
    table = Table(["long-flow RTT", *[f"{c}: long / short" for c in ccas]])
    for r in rtts:
        table.add(f"{r} ms", *[fmt(share[(c, r)], 2) for c in ccas])
    fig = f"{ALLEGRO} Fig. 8"
    others = [c for c in ccas if c != "pcc-allegro"]
    better = sum(
        abs(math.log(share[("pcc-allegro", r)])) <= min(abs(math.log(share[(o, r)])) for o in others) + 0.05
        for r in rtts
        if share[("pcc-allegro", r)] > 0
    )
    worst = min(share[("pcc-allegro", r)] for r in rtts)
    reps = [
        Reproduction.at_least(
            "5a",
            fig,
            f"PCC is fairer across RTTs than {' and '.join(others)} (RTTs where its long/short ratio is "
            "closest to 1)",
            "all",
            better / len(rtts),
            0.8,
            pct,
        ),
        Reproduction.at_least(
            "5b",
            fig,
            "the long-RTT PCC flow keeps a fair share (lowest long / short ratio)",
            "close to 1 (figure)",
            worst,
            0.5,
            lambda x: fmt(x, 2),
        ),
    ]
    return Section(
        "5",
        "RTT fairness",
        fig,
        "100 Mbit/s, buffer = the short flow's BDP (125 KB); the long flow (20–100 ms) starts first, "
        f"the 10 ms flow joins at 5 s; throughput ratio over 10–{end} s (paper: 500 s of competition).",
        [ctx.rel(ctx.scenario("rtt-fairness.toml"))],
        "rtt-fairness",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 6. Convergence and stability (Allegro §4.2, Figs. 12, 13, 16)

TIME_SCALES_S = (1, 5, 10, 25)
FAIR_SHARE_BAND = 0.25  # §4.2.2: within ±25 % of the ideal equal rate
CONVERGED_FOR_S = 5  # ... for every second of t to t + 5 s
STABILITY_WINDOW_S = 60  # rate standard deviation over the 60 s after convergence


def convergence_time(per_second: Sequence[float], fair: float) -> float:
    """§4.2.2's forward-looking convergence time (seconds from the first sample): the smallest t
    whose next CONVERGED_FOR_S one-second throughputs are all within ±25 % of `fair`."""
    ok = [abs(x - fair) <= FAIR_SHARE_BAND * fair for x in per_second]
    for t in range(len(ok) - CONVERGED_FOR_S + 1):
        if all(ok[t : t + CONVERGED_FOR_S]):
            return float(t)
    return math.nan


# Allegro §2.2: the safe utility's sigmoid cuts off at 5 % loss.
SAFE_UTILITY_KNEE = 0.05


@dataclass
class TwoFlow:
    """Flow B's mean convergence time (s), rate standard deviation (Mbit/s) over the stability
    window, and (PCC only) the share of its MIs sampled in that window whose loss rate was above
    the safe utility's knee, and their mean loss rate."""

    conv: dict[str, float]
    dev: dict[str, float]
    above_knee: dict[str, float]
    mi_loss: dict[str, float]


def _two_flow(
    ctx: Context, name: str, configs: Mapping[str, Mapping[str, Any]], dur: int, seeds: int
) -> TwoFlow:
    """Flow B's convergence and stability per configuration ({label: overrides of
    two-flow-convergence.toml}) in the sweep `name`."""
    runs = ctx.sweep_labeled(
        name,
        "two-flow-convergence.toml",
        {c: {"duration": f"{dur}s", **o} for c, o in configs.items()},
        seeds=seeds,
    )
    out = TwoFlow({}, {}, {}, {})
    for c in configs:
        cts, devs, knee, loss = [], [], [], []
        for row in runs[c]:
            ts = ctx.timeseries(name, row)
            b = _series(ts, "b", 20.0, float(dur))
            ct = convergence_time(b, 50.0)
            cts.append(ct)
            if not math.isnan(ct):
                after = b[int(ct) : int(ct) + STABILITY_WINDOW_S]
                devs.append(statistics.pstdev(after) if len(after) > 1 else math.nan)
                t0 = 20.0 + int(ct)
                sel = ts[(ts["flow"] == "b") & (ts["t_s"] >= t0) & (ts["t_s"] < t0 + STABILITY_WINDOW_S)]
                if "cc_mi_loss" in sel:
                    mi = sel["cc_mi_loss"].dropna()
                    if len(mi):
                        knee.append(float((mi > SAFE_UTILITY_KNEE).mean()))
                        loss.append(float(mi.mean()))
        out.conv[c] = statistics.fmean(cts) if cts else math.nan
        out.dev[c] = statistics.fmean(devs) if devs else math.nan
        out.above_knee[c] = statistics.fmean(knee) if knee else math.nan
        out.mi_loss[c] = statistics.fmean(loss) if loss else math.nan
    return out


# Buffers besides 1 BDP tried for Fig. 16, whose buffer §4.2.2 does not give.
FIG16_DIAGNOSTIC_BUFFERS = ("0.25bdp", "2bdp")

# Allegro §4.2.2: the Fig. 16 point the paper quotes against CUBIC (T_m = 1 RTT, ε_min = 0.02).
ALLEGRO_FIG16 = {"name": "pcc-allegro", "eps_min": 0.02, "mi_rtts_min": 1.0, "mi_rtts_max": 1.0}


def _exp_convergence(ctx: Context) -> Section:
    ccas = ["pcc-allegro", "cubic"]
    # The paper's timeline (joins every 500 s, 2000 s each; the reproduction is not part of CI,
    # and the four 100 Mbit/s flows run in about a minute); quick: 10 s between joins.
    scale = 0.2 if ctx.quick else 10.0
    t = [round(x * scale) for x in (50, 100, 150, 200, 250, 300, 350)]
    over = {
        "duration": f"{t[6]}s",
        "flows.0.stop": f"{t[3]}s",
        "flows.1.start": f"{t[0]}s",
        "flows.1.stop": f"{t[4]}s",
        "flows.2.start": f"{t[1]}s",
        "flows.2.stop": f"{t[5]}s",
        "flows.3.start": f"{t[2]}s",
        "flows.3.stop": f"{t[6]}s",
    }
    res = ctx.sweep_labeled("convergence", "convergence.toml", {c: {"flows.*.cca": c, **over} for c in ccas})
    scales = [s for s in TIME_SCALES_S if s <= (t[3] - t[2]) / 2]
    jains: dict[tuple[str, int], float] = {}
    for c in ccas:
        ts = ctx.timeseries("convergence", res[c][0])
        flows = [_series(ts, f, t[2], t[3]) for f in ("f1", "f2", "f3", "f4")]
        for s in scales:
            per = round(s / 0.1)  # 100 ms bins
            windows = zip(*(_window_means(x, per) for x in flows), strict=True)
            jains[(c, s)] = statistics.fmean(jain(w) for w in windows)

    seeds = 1 if ctx.quick else 3
    dur = 20 + 20 + STABILITY_WINDOW_S + CONVERGED_FOR_S + 5 if not ctx.quick else 60
    configs: dict[str, dict[str, Any]] = {
        "pcc-fig16": {"flows.*.cca": ALLEGRO_FIG16},
        "pcc-allegro": {"flows.*.cca": "pcc-allegro"},
        "cubic": {"flows.*.cca": "cubic"},
    }
    two = _two_flow(ctx, "two-flow-convergence", configs, dur, seeds)
    conv, dev = two.conv, two.dev
    # Diagnostic: the same runs with exactly paced senders (no host send-time noise).
    exact = {c: {**configs[c], "flows.*.send_jitter": "0ms"} for c in ("pcc-allegro", "cubic")}
    if ctx.quick:
        conv_x: dict[str, float] = {}
        dev_x: dict[str, float] = {}
    else:
        two_x = _two_flow(ctx, "two-flow-convergence-exact", exact, dur, seeds)
        conv_x, dev_x = two_x.conv, two_x.dev

    # Diagnostic: the buffer, which §4.2.2 does not give for Fig. 16 (1 BDP above, as in §4.2.1).
    buffers = [] if ctx.quick else list(FIG16_DIAGNOSTIC_BUFFERS)
    by_buffer = {
        b: _two_flow(
            ctx,
            f"two-flow-convergence-{b}",
            {c: {**o, "links.0.queue.size": b} for c, o in configs.items()},
            dur,
            seeds,
        ).dev
        for b in buffers
    }
    dev_ratio = {"1bdp": dev} | by_buffer

    table = Table(["metric", *ccas])
    for s in scales:
        table.add(f"Jain's index, 4 flows, {s} s windows", *[fmt(jains[(c, s)], 3) for c in ccas])
    table.add(
        "flow B convergence time (s), Fig. 16 setting (PCC: T_m = 1 RTT, ε_min = 0.02)",
        fmt(conv["pcc-fig16"]),
        fmt(conv["cubic"]),
    )
    table.add(
        f"flow B rate std. dev. over {STABILITY_WINDOW_S} s after (Mbit/s), Fig. 16 setting",
        fmt(dev["pcc-fig16"], 2),
        fmt(dev["cubic"], 2),
    )
    table.add(
        "flow B convergence time (s), PCC defaults (T_m = 1.7–2.2 RTT, ε_min = 0.01)",
        fmt(conv["pcc-allegro"]),
        "",
    )
    table.add(
        f"flow B rate std. dev. over {STABILITY_WINDOW_S} s after (Mbit/s), PCC defaults",
        fmt(dev["pcc-allegro"], 2),
        "",
    )
    table.add(
        "diagnostic, exact pacing (no send jitter): flow B convergence time (s)",
        *[fmt(conv_x.get(c, math.nan)) for c in ccas],
    )
    table.add(
        f"diagnostic, exact pacing: flow B rate std. dev. over {STABILITY_WINDOW_S} s after (Mbit/s)",
        *[fmt(dev_x.get(c, math.nan), 2) for c in ccas],
    )
    for b in buffers:
        table.add(
            f"diagnostic, {b} buffer: flow B rate std. dev. (Mbit/s), Fig. 16 setting",
            fmt(by_buffer[b]["pcc-fig16"], 2),
            fmt(by_buffer[b]["cubic"], 2),
        )
        table.add(
            f"diagnostic, {b} buffer: flow B rate std. dev. (Mbit/s), PCC defaults",
            fmt(by_buffer[b]["pcc-allegro"], 2),
            "",
        )

    def std_ratios(pcc_config: str) -> str:
        """CUBIC's rate std. dev. over PCC's, per buffer."""
        return ", ".join(
            f"{ratio(safe_div(d['cubic'], d[pcc_config]))} at {b.replace('bdp', ' BDP')}"
            for b, d in sorted(dev_ratio.items(), key=lambda kv: float(kv[0][:-3]))
        )

    fig13, fig16 = f"{ALLEGRO} Figs. 12–13", f"{ALLEGRO} Fig. 16"
    fairer = sum(jains[("pcc-allegro", s)] >= jains[("cubic", s)] - 0.01 for s in scales)
    reps = [
        Reproduction.at_least(
            "6a",
            fig13,
            "competing PCC flows are fairer than CUBIC at every time scale (share of time scales)",
            "all",
            fairer / len(scales),
            1.0,
            pct,
            prose(
                f"""
                The four flows run PCC's defaults, which here need {fmt(conv["pcc-allegro"])} s to
                bring a joining flow within ±25 % of its share (the convergence rows; why: see
                below); the four-flow period lasts {t[3] - t[2]} s from the fourth flow's start,
                so its first {fmt(conv["pcc-allegro"])} s measure that convergence rather than
                steady sharing.
                """
            ),
        ),
        Reproduction.at_least(
            "6b",
            fig16,
            "PCC's rate after convergence varies less than CUBIC's (CUBIC std. dev. / PCC's)",
            "4.2× (ε_min = 0.02, T_m = 1 RTT)",
            safe_div(dev["cubic"], dev["pcc-fig16"]),
            2.0,
            ratio,
            prose(
                f"""
                PCC varies less than CUBIC, but not by 4.2× (the paper's text calls it "rate
                variance" after defining the metric as a standard deviation; as a ratio of
                variances ours is {fmt(safe_div(dev["cubic"], dev["pcc-fig16"]) ** 2, 2)}×, still
                short). At this setting too the incumbent's accelerating climbs overshoot into loss
                above the safe utility's 5 % knee (see the why below), and both flows step down
                together there, which shows in 1 s rates: of flow B's MIs sampled once a second over
                the {STABILITY_WINDOW_S} s after convergence, {pct(two.above_knee["pcc-fig16"])}
                lost more than 5 % (mean MI loss {pct(two.mi_loss["pcc-fig16"])}; with PCC's
                defaults {pct(two.above_knee["pcc-allegro"])} and
                {pct(two.mi_loss["pcc-allegro"])}). §2.2 puts the two flows' equilibrium at a
                total rate between C and 20C/19, at most 5 % loss, right at the sigmoid's cliff;
                with T_m = 1 RTT and ε_min = 0.02 each step there is larger and each verdict
                noisier than with the defaults. The buffer, which the paper does not give for
                Fig. 16, sets how late the loss signal comes, and no buffer we tried brings this
                setting near 4.2× (CUBIC's std. dev. over PCC's: {std_ratios("pcc-fig16")}; the
                diagnostic rows), while PCC's defaults come close ({std_ratios("pcc-allegro")}).
                """
            ),
        ),
        Reproduction.at_most(
            "6c",
            fig16,
            "PCC converges about as fast as CUBIC (PCC's convergence time / CUBIC's)",
            "about 1× (ε_min = 0.02, T_m = 1 RTT)",
            safe_div(conv["pcc-fig16"], conv["cubic"]),
            2.0,
            ratio,
        ),
    ]
    timeline = "(as the paper)" if t[0] == 500 else f"(paper: 500 s and 2000 s; times × {t[0] / 500:g})"
    return Section(
        "6",
        "Convergence and stability",
        f"{fig13}, {fig16}",
        f"Four flows on 100 Mbit/s, 30 ms, 1-BDP buffer join every {t[0]} s and send {t[3]} s each "
        f"{timeline}; "
        f"Jain's index over the period when all "
        f"four are active, averaged over windows of each time scale. Convergence: flow B joins A after 20 s "
        f"on the same link; §4.2.2's definition (±25 % of 50 Mbit/s for {CONVERGED_FOR_S} s) over 1 s bins, "
        f"mean of {seeds} seed(s) (paper: 15 trials).",
        [ctx.rel(ctx.scenario(f)) for f in ("convergence.toml", "two-flow-convergence.toml")],
        "convergence",
        table,
        reps,
        [
            prose(
                """
                Every sender has 1 ms of host send-time noise (`send_jitter`, U[0, 1 ms]; real
                hosts and emulators have such noise, the simulator otherwise paces exactly).
                Without it (the exact-pacing rows) flows paced at constant rates lock phases at
                the full drop-tail queue (Floyd and Jacobson 1992): the incumbent takes nearly
                every freed slot, and in an instrumented run the joiner lost 25–50 % of its
                packets, the incumbent 1–3 %.
                Why PCC with its defaults converges more slowly than CUBIC (both flows' decisions
                traced): with T_m = 1.7–2.2 RTTs of a queue-inflated 60 ms RTT an MI lasts
                100–130 ms, and an RCT (four trials, then their results) about 0.5 s. The
                incumbent's rate adjusting accelerates (steps of 1 %, 2 %, 3 %, ... per MI) while
                the 1-BDP buffer delays the loss signal by the time it takes to fill, so each
                climb overshoots and holds the loss rate of both flows above the safe utility's
                5 % knee for several MIs; there the utility is about −x·L at any rate and the
                joiner's trials pick its lower rate, as the incumbent's do. The joiner gains only
                between those episodes, a few per cent per conclusive RCT. RCT verdicts, ε growth
                (0.01 up to 0.05 on inconclusive trials, back to 0.01 after a conclusive one) and
                reverts follow §3.2; no bug was found in them. The paper's Fig. 16 shows the same
                trade-off (longer T_m and smaller ε_min: slower and steadier) and compares CUBIC
                with T_m = 1 RTT and ε_min = 0.02, the setting 6b and 6c use. Two bugs of our PCC
                code made convergence worse and are fixed: every PCC flow used the same random
                seed (identical MI lengths and trial orders), and an MI's rate was measured over
                its window, whose boundaries fall between packets (±8 % at 12 packets per MI,
                larger than the 1–2 % steps a joining flow compares).
                """
            )
        ],
    )


# ---------------------------------------------------------------------------------------------
# 7. Proteus scavenger (Proteus §6.2, Fig. 10)

PRIMARIES = ["cubic", "bbr", "copa", "proteus-p", "pcc-vivace"]
SCAVENGERS = ["proteus-s", "ledbat"]
PROTEUS_MEASURE_FROM_S = 10.0


def _exp_scavenger(ctx: Context) -> Section:
    primaries = ["cubic", "bbr"] if ctx.quick else PRIMARIES
    jitters = ["2ms"] if ctx.quick else ["0ms", "2ms", "5ms"]
    duration = "30s" if ctx.quick else "60s"
    alone_flows = [{"id": "primary", "cca": "cubic", "rtt": "30ms"}]
    points: dict[Any, dict[str, Any]] = {}
    for p in primaries:
        for j in jitters:
            base = {"links.0.jitter.max": j, "duration": duration}
            points[(p, j, "alone")] = {**base, "flows": [dict(alone_flows[0], cca=p)]}
            for s in SCAVENGERS:
                points[(p, j, s)] = {**base, "flows.0.cca": p, "flows.1.cca": s}
    # LEDBAT alone, paced by the transport (as in every run here) and unpaced (ACK-clocked, as
    # RFC 6817's pseudo-code sends): jitter must not cost a paced LEDBAT its window (7b).
    for j in jitters:
        for paced in (True, False):
            points[("ledbat-alone", j, paced)] = {
                "links.0.jitter.max": j,
                "duration": duration,
                "flows": [dict(alone_flows[0], id="scavenger", cca="ledbat", pacing=paced)],
            }
    # Vivace with the paper's signed RTT gradient instead of master's clamp, alone and against
    # LEDBAT: what the clamp does under jitter (7b).
    if "pcc-vivace" in primaries:
        for j in jitters:
            signed = {"name": "pcc-vivace", "utility": "vivace-signed"}
            base = {"links.0.jitter.max": j, "duration": duration}
            points[("signed", j, "alone")] = {**base, "flows": [dict(alone_flows[0], cca=signed)]}
            points[("signed", j, "ledbat")] = {**base, "flows.0.cca": signed, "flows.1.cca": "ledbat"}
    points[("self", "2ms", "proteus-s")] = {
        "links.0.jitter.max": "2ms",
        "duration": duration,
        "flows.0.cca": "proteus-s",
        "flows.1.cca": "proteus-s",
    }
    res = ctx.sweep_labeled("scavenger", "scavenger.toml", points)

    end_s = float(duration[:-1])

    def primary(k: Any) -> float:
        ts = ctx.timeseries("scavenger", res[k][0])
        return statistics.fmean(_series(ts, "primary", PROTEUS_MEASURE_FROM_S, end_s))

    def penalised(k: Any) -> tuple[float, float]:
        """Of Proteus-S's MIs (the last one sampled at each bin over the measured span): the share
        whose RTT deviation passed the noise filter into the utility, and the share whose RTT
        gradient exceeded its regression error (the filter's first test)."""
        ts = ctx.timeseries("scavenger", res[k][0])
        sel = ts[(ts["flow"] == "scavenger") & (ts["t_s"] >= PROTEUS_MEASURE_FROM_S) & (ts["t_s"] < end_s)]

        def share(col: str) -> float:
            x = sel[col].dropna() if col in sel else sel["t_s"].iloc[:0]
            return float((x > 0).mean()) if len(x) else math.nan

        return share("cc_rtt_dev_used_us"), share("cc_noise_gate_open")

    ratios = {
        (p, j, s): safe_div(primary((p, j, s)), primary((p, j, "alone")))
        for p in primaries
        for j in jitters
        for s in SCAVENGERS
    }
    filt = {(p, j): penalised((p, j, "proteus-s")) for p in primaries for j in jitters}
    pen = {k: v[0] for k, v in filt.items()}
    gate = {k: v[1] for k, v in filt.items()}
    table = Table(
        [
            "primary",
            "jitter",
            "alone (Mbit/s)",
            *[f"ratio with {s}" for s in SCAVENGERS],
            "Proteus-S MIs with the deviation penalised",
        ]
    )
    for p in primaries:
        for j in jitters:
            table.add(
                p,
                j,
                primary((p, j, "alone")),
                *[pct(ratios[(p, j, s)]) for s in SCAVENGERS],
                pct(pen[(p, j)]),
            )
    latency_aware = [p for p in ("copa", "proteus-p", "pcc-vivace") if p in primaries]
    noisy = [j for j in jitters if j != "0ms"]
    pen_noisy = [pen[(p, j)] for p in latency_aware for j in noisy]
    gate_noisy = [gate[(p, j)] for p in latency_aware for j in noisy]
    wins_by_jitter = {
        j: sum(ratios[(p, j, "proteus-s")] >= ratios[(p, j, "ledbat")] for p in primaries) for j in jitters
    }
    fig = f"{PROTEUS} Fig. 10"
    keep = [ratios[(p, j, "proteus-s")] >= 0.9 for p in ("cubic", "bbr") for j in jitters]
    missing = [
        p
        for p in primaries
        if statistics.median(ratios[(p, j, "proteus-s")] for j in jitters)
        < statistics.median(ratios[(p, j, "ledbat")] for j in jitters) - 0.02
    ]
    better = len(primaries) - len(missing)
    ledbat_alone = {
        (j, paced): float(res[("ledbat-alone", j, paced)][0]["flow.scavenger.goodput_mbps"])
        for j in jitters
        for paced in (True, False)
    }

    def ledbat_delay(k: Any) -> float:
        """LEDBAT's median queueing-delay estimate (current − base delay, ms) over the measured
        span of run `k`."""
        ts = ctx.timeseries("scavenger", res[k][0])
        sel = ts[(ts["flow"] == "scavenger") & (ts["t_s"] >= PROTEUS_MEASURE_FROM_S) & (ts["t_s"] < end_s)]
        return float(sel["cc_queuing_delay_ms"].median())

    pcc_primaries = [p for p in ("proteus-p", "pcc-vivace") if p in primaries]
    ledbat_q = [ledbat_delay((p, j, "ledbat")) for p in latency_aware for j in jitters]

    def ms(x: float) -> str:
        return f"{fmt(x, 1)} ms"

    def mbps(x: float) -> str:
        return f"{fmt(x, 1)} Mbit/s"

    clamp_note = ""
    if "pcc-vivace" in primaries:
        kept_signed = {
            j: safe_div(primary(("signed", j, "ledbat")), primary(("signed", j, "alone"))) for j in jitters
        }
        clamp_note = " " + prose(
            f"""
            For Vivace much of this comes from its utility's clamp of negative RTT gradients (PCC-Uspace
            master's; the paper's form rewards them): noise lifts the gradient of the lower-rate
            trial, which drains the queue, above zero as often as not, and the clamp turns that
            into a penalty the sign would have cancelled, so the trials favour the higher rate.
            With the paper's signed gradient (`vivace-signed`) Vivace keeps
            {", ".join(f"{pct(kept_signed[j])} at {j}" for j in jitters)} against LEDBAT
            ({", ".join(mbps(primary(("signed", j, "ledbat"))) for j in jitters)}).
            """
        )
    self_rows = res[("self", "2ms", "proteus-s")][0]
    self_jain = jain(
        [float(self_rows["flow.primary.goodput_mbps"]), float(self_rows["flow.scavenger.goodput_mbps"])]
    )
    reps = [
        Reproduction.at_least(
            "7a",
            fig,
            "with Proteus-S, CUBIC and BBR keep >= 90 % of their throughput in most cases (share of cases)",
            "71.8 % (BBR), 51.3 % (CUBIC) of WiFi cases",
            sum(keep) / len(keep),
            0.5,
            pct,
        ),
        Reproduction.at_least(
            "7b",
            fig,
            "primaries keep more against Proteus-S than against LEDBAT (share of primaries, by median ratio)",
            "all five: median ratio +17.6 % (BBR), +19.2 % (CUBIC), +39.3 % (Copa), +41.0 % (Proteus-P), "
            "+44.1 % (Vivace) (§6.2.1)",
            better / len(primaries),
            0.8,
            pct,
            prose(
                f"""
                Primaries keeping at least as much against Proteus-S as against LEDBAT, per jitter:
                {", ".join(f"{wins_by_jitter[j]} of {len(primaries)} at {j}" for j in jitters)}; the
                median over jitters misses for {", ".join(missing) or "none"}. LEDBAT's 100 ms
                TARGET lies beyond the 60 ms of queue this buffer holds (against Copa, Proteus-P
                and Vivace its queueing-delay estimate has a median of {_span(ledbat_q, ms)}), so
                it never yields: it gains a packet per RTT until the buffer overflows, halves,
                and climbs again, and the latency-aware primaries back off from the rising RTT.
                They keep more of their rate when there is jitter ({
                    "; ".join(
                        f"{p} " + ", ".join(f"{pct(ratios[(p, j, 'ledbat')])} at {j}" for j in jitters)
                        for p in pcc_primaries
                    )
                }).{clamp_note} Jitter does not cost LEDBAT itself: alone and
                paced it gets {", ".join(f"{mbps(ledbat_alone[(j, True)])} at {j}" for j in jitters)},
                unpaced {", ".join(f"{mbps(ledbat_alone[(j, False)])} at {j}" for j in jitters)}.
                That needs RFC 6817 §2.5's reading of the flight-size cap ("flightsize in the
                previous RTT" plus one packet), which we count as the largest flight of the last
                round trip: the flight before each ACK, which a paced sender keeps below its
                window whenever jittered ACKs arrive bunched, ratchets the window down.
                """
            ),
        ),
        Reproduction.at_least(
            "7c",
            f"{PROTEUS} §6",
            "two Proteus-S flows share fairly (Jain's index)",
            "fair (figure)",
            self_jain,
            0.9,
            lambda x: fmt(x, 3),
        ),
    ]
    return Section(
        "7",
        "Proteus-S as a scavenger",
        fig,
        f"50 Mbit/s, 30 ms, 375 KB drop-tail buffer, per-packet data-path jitter U[0, max] as the RTT noise "
        f"(the paper uses real WiFi paths); primary alone vs with a scavenger starting at the same time; "
        f"ratio of the primary's mean goodput over {PROTEUS_MEASURE_FROM_S:g} s – {duration}.",
        [ctx.rel(ctx.scenario("scavenger.toml"))],
        "scavenger",
        table,
        reps,
        [
            "LEDBAT's 100 ms target is larger than the 60 ms of queue this buffer holds, so against "
            "loss-based primaries it never sees its target and competes as a primary would.",
            prose(
                f"""
                Against the latency-aware primaries (Copa, Proteus-P, Vivace) Proteus-S takes a
                larger share here than the paper's figure shows. Both flows keep the queue short,
                so what makes Proteus-S yield is its RTT-deviation penalty d·x·σ_RTT, and here it
                does not discriminate between the two rates of a probing pair. With jitter the
                penalty entered {pct(statistics.fmean(pen_noisy)) if pen_noisy else "–"} of
                Proteus-S's sampled MIs against them (table, last column), almost always through
                the noise filter's first test ({
                    pct(statistics.fmean(gate_noisy)) if gate_noisy else "–"
                } of MIs had an RTT gradient above its regression error), which looks at
                |gradient|: a trial above the link's share fills the queue and one below drains
                it, both steeply enough. σ_RTT itself is mostly the jitter (U[0, max] has σ =
                max/√12, 0.58 ms at 2 ms), the same at both rates. So a trial's penalty, at
                15 Mbit/s and 2 ms d·x·σ ≈ 0.0015 × 15 × 580 ≈ 13, lands on either trial at
                random, against a difference of about 1 between the throughput terms of
                r(1 ± 0.05): the two pairs rarely agree and Proteus-S, whose rule needs both,
                mostly keeps probing around its rate instead of backing off. On the paper's WiFi
                paths σ_RTT grows with the queue the primary builds, so the higher-rate trial
                draws the larger penalty. Two Proteus-S flows starting together share fairly
                (7c; Jain's index 0.83 before every PCC flow drew its own random seed and MI
                rates were measured over the packets' send span).
                """
            ),
        ],
    )


# ---------------------------------------------------------------------------------------------
# 8. BBR-S (Proteus §7.1, Fig. 14)


# Proteus §7.1: the RTT-deviation threshold of BBR-S (ms).
BBR_S_THRESHOLD_MS = 20.0

# Host and testbed noise a Linux sender and receiver on Emulab plausibly have, applied to both
# flows, to test whether the simulator's missing ms-scale RTT noise is why BBR-S rarely yields.
# Linux's receiver ACKs every second full-sized segment and otherwise holds an ACK up to its
# delayed-ACK timer, at least TCP_DELACK_MIN = HZ/25 = 40 ms (include/net/tcp.h). Emulab shapes
# links with dummynet on FreeBSD delay nodes (Emulab wiki, "DelayImplementation"), which releases
# packets on its kernel's timer ticks, 1 ms at HZ = 1000: ACKs batched and data delayed by up to
# 1 ms. 1 ms of host send-time noise is the one the Allegro scenarios give every sender (section 1).
_LINUX_DELACK = {"ack": {"every": 2, "max_delay": "40ms"}}
_BBR_S_NOISE: dict[str, dict[str, Any]] = {
    "Linux delayed ACKs": {},
    "delayed ACKs + 1 ms ACK batching": {"links.0.ack_aggregation": {"interval": "1ms"}},
    "delayed ACKs + 1 ms data jitter": {"links.0.jitter": {"max": "1ms"}},
    "delayed ACKs + 1 ms send noise": {"send_jitter": "1ms"},
    "all four": {
        "links.0.ack_aggregation": {"interval": "1ms"},
        "links.0.jitter": {"max": "1ms"},
        "send_jitter": "1ms",
    },
    # Ten times the dummynet tick, beyond what Emulab adds: does any noise make BBR-S yield?
    "delayed ACKs + 10 ms data jitter": {"links.0.jitter": {"max": "10ms"}},
}


def _bbr_s_noise_overrides(noise: Mapping[str, Any]) -> dict[str, Any]:
    """Scenario overrides for one `_BBR_S_NOISE` entry: link keys as given, the rest (and the
    Linux receiver's delayed ACKs) on both flows."""
    out: dict[str, Any] = {}
    for key, value in {**_LINUX_DELACK, **noise}.items():
        if key.startswith("links."):
            out[key] = value
        else:
            out[f"flows.0.{key}"] = value
            out[f"flows.1.{key}"] = value
    return out


@dataclass(frozen=True)
class _RuleStats:
    """What BBR-S's rule saw over the measurement window: forced PROBE_RTTs there and over the
    whole run, and its `mdev_us` (ms): median, 99th percentile and share of bins above 20 ms."""

    forced: float
    forced_total: float
    mdev_median: float
    mdev_p99: float
    above: float


def _bbr_s_rule_stats(ts: pd.DataFrame, start: float, end: float) -> _RuleStats:
    flow = ts[ts["flow"] == "bbr-s"]
    forced = flow["cc_forced_probe_rtts"].fillna(0.0)
    window = flow[(flow["t_s"] >= start) & (flow["t_s"] < end)]
    earlier = forced[flow["t_s"] < start]
    total = float(forced.max()) if len(forced) else 0.0
    in_window = float(window["cc_forced_probe_rtts"].fillna(0.0).max()) - (
        float(earlier.max()) if len(earlier) else 0.0
    )
    mdev = window["cc_rtt_mdev_ms"].dropna()
    if mdev.empty:
        return _RuleStats(in_window, total, math.nan, math.nan, math.nan)
    return _RuleStats(
        in_window,
        total,
        float(mdev.quantile(0.5)),
        float(mdev.quantile(0.99)),
        float((mdev > BBR_S_THRESHOLD_MS).mean()),
    )


def _exp_bbr_s(ctx: Context) -> Section:
    end = 40.0 if ctx.quick else 120.0
    start = 20.0 if ctx.quick else 30.0
    others = ["bbr", "cubic", "bbr-s"]
    points: dict[str, dict[str, Any]] = {o: {"flows.1.cca": o, "duration": f"{end:g}s"} for o in others}
    # A lower threshold, shown for comparison only (the claims use the paper's 20 ms).
    alt = {"name": "bbr-s", "rtt_dev_threshold_ms": 5}
    for o in others:
        points[f"{o} (5 ms)"] = {
            "flows.0.cca": alt,
            "flows.1.cca": alt if o == "bbr-s" else o,
            "duration": f"{end:g}s",
        }
    noises = ["Linux delayed ACKs", "all four"] if ctx.quick else list(_BBR_S_NOISE)
    for n in noises:
        for o in others:
            points[f"{o}, {n}"] = {
                "flows.1.cca": o,
                "duration": f"{end:g}s",
                **_bbr_s_noise_overrides(_BBR_S_NOISE[n]),
            }
    res = ctx.sweep_labeled("bbr-s", "bbr-s.toml", points)
    g: dict[str, tuple[float, float]] = {}
    rule: dict[str, _RuleStats] = {}
    for o in points:
        ts = ctx.timeseries("bbr-s", res[o][0])
        g[o] = (
            statistics.fmean(_series(ts, "bbr-s", start, end)),
            statistics.fmean(_series(ts, "other", start, end)),
        )
        rule[o] = _bbr_s_rule_stats(ts, start, end)
    table = Table(
        [
            "other flow (BBR-S threshold; host noise)",
            "BBR-S (Mbit/s)",
            "other (Mbit/s)",
            "BBR-S share",
            "forced PROBE_RTTs (whole run)",
            "BBR-S mdev median / p99 (ms)",
            f"time mdev > {BBR_S_THRESHOLD_MS:g} ms",
        ]
    )
    for o in points:
        r = rule[o]
        table.add(
            o,
            g[o][0],
            g[o][1],
            pct(safe_div(g[o][0], sum(g[o]))),
            f"{r.forced:.0f} ({r.forced_total:.0f})",
            f"{fmt(r.mdev_median, 2)} / {fmt(r.mdev_p99, 1)}",
            pct(r.above),
        )
    fig = f"{PROTEUS} Fig. 14"
    base_bbr, base_cubic = rule["bbr"], rule["cubic"]

    def share(label: str) -> float:
        return safe_div(g[label][0], sum(g[label]))

    realistic = [n for n in noises if "10 ms" not in n]
    noisy = {o: [f"{o}, {n}" for n in realistic] for o in others}
    noisy_bbr = [rule[x] for x in noisy["bbr"]]
    yielded = [x for o in ("bbr", "cubic") for x in noisy[o] if share(x) <= 0.25]
    if yielded:
        verdict = (
            f"With {', '.join(yielded)} BBR-S yields (share at most 25 %): that noise does make "
            "it cross 20 ms for long enough."
        )
    else:
        verdict = (
            "None of them makes BBR-S yield, so the hypothesis that the missing ms-scale host "
            "noise is why it stays in here is refuted: the noise shows as brief mdev spikes above "
            "20 ms, which force short phases, never as the lasting deviation that would keep "
            "BBR-S aside."
        )
    stress = [f"{o}, delayed ACKs + 10 ms data jitter" for o in ("bbr", "cubic")]
    stress_text = (
        f" Even 10 ms of data jitter, ten times a dummynet tick, leaves BBR-S {pct(share(stress[0]))} "
        f"against BBR and {pct(share(stress[1]))} against CUBIC."
        if all(x in g for x in stress)
        else ""
    )
    pair_jain = _span([jain(g[x]) for x in noisy["bbr-s"]], lambda x: fmt(x, 3))
    noise_text = f"""
        Is it because the simulator's receiver ACKs every packet at once and its hosts and links
        add no timing noise, so that its RTT samples lack the ms-scale noise of real hosts? The
        table's host-noise rows test this: both flows get what a Linux host pair on Emulab
        plausibly has, Linux's delayed ACKs (every second segment, else after its 40 ms timer,
        TCP_DELACK_MIN), 1 ms of ACK batching and of data jitter (Emulab's delay nodes run
        dummynet, which releases packets on kernel ticks, 1 ms at HZ = 1000) and 1 ms of host send
        noise, each on top of the delayed ACKs and all four together. They raise BBR-S's mdev
        against BBR from a median of {fmt(base_bbr.mdev_median, 2)} ms to
        {_span([r.mdev_median for r in noisy_bbr], lambda x: fmt(x, 2))} ms and its 99th
        percentile from {fmt(base_bbr.mdev_p99, 1)} to
        {_span([r.mdev_p99 for r in noisy_bbr], lambda x: fmt(x, 1))} ms (above 20 ms in at most
        {pct(max(r.above for r in noisy_bbr))} of the 100 ms bins), and the rule fires
        {_span([r.forced for r in noisy_bbr], lambda x: f"{x:.0f}")} times over
        {start:g}–{end:g} s; yet BBR-S keeps {_span([share(x) for x in noisy["bbr"]], pct)}
        against BBR and {_span([share(x) for x in noisy["cubic"]], pct)} against CUBIC, and a
        BBR-S pair stays fair (Jain's index {pair_jain}). {verdict}{stress_text} (With delayed
        ACKs the earliest packet's RTT, the kernel's sample, includes the delayed-ACK wait, which
        the latest packet's RTT, the one BBR's min_rtt filter takes, hides.) Why the paper's BBR-S
        yielded so much is not explained here (no deviation trace is given).
        """
    reps = [
        Reproduction.at_most(
            "8a",
            fig,
            "BBR-S yields to BBR (BBR-S share)",
            "small (figure)",
            share("bbr"),
            0.25,
            pct,
            prose(
                f"""
                The rule works as §7.1 states it and is tested (PROBE_RTT at 4 packets, held 40
                ms and a round); what it rarely sees here is a deviation above 20 ms. The
                deviation is the kernel's `mdev_us`, computed per ACK as Linux's
                `tcp_rtt_estimator` does (4× the mean deviation, falling samples damped to an
                eighth) from the RTT of the earliest packet the ACK newly acknowledges (the
                kernel's `seq_rtt_us`); `rttvar_us`, the other kernel field, is floored at the 200
                ms minimum RTO and would make BBR-S yield always, alone too, which the paper's
                fair BBR-S pair rules out. Against BBR the BBR-S flow's mdev has a median of
                {fmt(base_bbr.mdev_median, 2)} ms and a 99th percentile of
                {fmt(base_bbr.mdev_p99, 1)} ms over {start:g}–{end:g} s, and the rule forced
                {base_bbr.forced:.0f} PROBE_RTT(s) in that time ({base_bbr.forced_total:.0f} in
                the whole run; Linux's estimator starts mdev at twice the first RTT sample, so
                BBR-S's first ACK forces one): once the two flows share the queue, the RTT moves
                by a few ms per round trip, smoothly, and the per-ACK samples follow it closely.
                {noise_text}
                A threshold of 5 ms (the table's 5 ms rows) makes BBR-S yield, to
                {pct(share("bbr (5 ms)"))} against BBR and {pct(share("cubic (5 ms)"))} against
                CUBIC, but then one of two BBR-S flows yields to the other too (Jain's index
                {fmt(jain(g["bbr-s (5 ms)"]), 3)}), against the paper's fair BBR-S pair: neither
                threshold tried reproduces all three panels of Fig. 14 here.
                """
            ),
        ),
        Reproduction.at_most(
            "8b",
            fig,
            "BBR-S yields to CUBIC (BBR-S share)",
            "small (figure)",
            share("cubic"),
            0.25,
            pct,
            prose(
                f"""
                As 8a: the rule forced {base_cubic.forced_total:.0f} PROBE_RTTs in the run,
                {base_cubic.forced:.0f} of them over {start:g}–{end:g} s (the rest at BBR-S's first
                ACK, as in 8a, and during CUBIC's start-up, whose slow-start overshoot swings the
                RTT); there BBR-S's mdev has a 99th percentile of {fmt(base_cubic.mdev_p99, 1)} ms.
                Each forced phase costs BBR-S about 40 ms and a round at 4 packets, after which its
                bandwidth filter brings it straight back to its share. With the host noise of 8a
                BBR-S keeps {_span([share(x) for x in noisy["cubic"]], pct)} against CUBIC, its
                mdev above 20 ms in at most {pct(max(rule[x].above for x in noisy["cubic"]))} of
                the bins.
                """
            ),
        ),
        Reproduction.at_least(
            "8c",
            fig,
            "BBR-S shares fairly with BBR-S (Jain's index)",
            "fair (figure)",
            jain(g["bbr-s"]),
            0.9,
            lambda x: fmt(x, 3),
        ),
    ]
    return Section(
        "8",
        "BBR-S",
        fig,
        "50 Mbit/s, 30 ms, 375 KB buffer; BBR-S starts alone, the other flow joins at 10 s; mean goodput "
        f"over {start:g}–{end:g} s (the paper's figure runs 200 s; its start times are not given). BBR-S is "
        "our BBR v1 forced into PROBE_RTT for at least 40 ms whenever the smoothed RTT deviation (Linux's "
        "`mdev_us`) exceeds 20 ms. Rows naming host noise give both flows Linux's delayed ACKs (every "
        "second segment, else a 40 ms timer) and the noise named (8a).",
        [ctx.rel(ctx.scenario("bbr-s.toml"))],
        "bbr-s",
        table,
        reps,
    )
