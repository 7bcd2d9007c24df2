"""Allegro §4.1.3, Fig. 6: an emulated satellite link (long RTT, random loss) against the buffer;
PCC against Hybla, Illinois and CUBIC."""

from __future__ import annotations

from polycc.reproduce.common import (
    AtLeast,
    Context,
    Reproduction,
    Section,
    Table,
    WithinFactor,
    fmt,
    num,
    pct,
    pct_exact,
    ratio,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL, PORTS_ON_MODEL, kernel_tcp_or_default
from polycc.reproduce.pcc.shared import (
    ALLEGRO,
    BOUND_POINTS,
    RATIO_FACTOR,
    SEEDS,
    kilobytes,
    median,
    megabytes,
    per_seed_goodput,
    seed_ratios,
)

SCENARIO = "satellite.toml"
FIGURE = f"{ALLEGRO} Fig. 6"
PCC = "pcc-allegro"
#: The small buffer (packets) claim 3a quotes.
SMALL = 5

# The criteria (issue 19), from Allegro §4.1.3, fixed before the runs.
#: 3a: "PCC achieves 90 % of optimal throughput even with only 7.5 KB buffer (5 packets)" (a bound).
CRIT_3A = AtLeast(0.9 - BOUND_POINTS / 100, paper=0.9)
#: 3b: "even with 1 MB buffer, the widely used TCP Hybla can only achieve 2.03 Mbps which is 17×
#: worse than PCC".
CRIT_3B = WithinFactor(17.0, RATIO_FACTOR)
#: 3c: "TCP Illinois ... performs 54× worse than PCC with 1 MB buffer".
CRIT_3C = WithinFactor(54.0, RATIO_FACTOR)


def _claims(
    g: dict[tuple[str, int], list[float]], ccas: list[str], big: int, capacity: float
) -> list[Reproduction]:
    reps = [
        Reproduction.judge(
            "3a",
            FIGURE,
            f"PCC reaches 90 % of optimal with a {kilobytes(SMALL)} ({SMALL}-packet) buffer",
            "90 %",
            [x / capacity for x in g[(PCC, SMALL)]],
            CRIT_3A,
            pct,
            "Optimal is the capacity here: simulated random loss happens before the bottleneck.",
        ),
        Reproduction.judge(
            "3b",
            FIGURE,
            f"Hybla far below PCC even with a {megabytes(big)} buffer (PCC / Hybla)",
            "17× (Hybla 2.03 Mbit/s)",
            seed_ratios(g[(PCC, big)], g[("hybla", big)]),
            CRIT_3B,
            ratio,
            f"Hybla gets {fmt(median(g[('hybla', big)]), 2)} Mbit/s here (median), the paper 2.03 Mbit/s.",
        ),
    ]
    if "illinois" in ccas:
        reps.append(
            Reproduction.judge(
                "3c",
                FIGURE,
                f"Illinois far below PCC with a {megabytes(big)} buffer (PCC / Illinois)",
                "54×",
                seed_ratios(g[(PCC, big)], g[("illinois", big)]),
                CRIT_3C,
                ratio,
            )
        )
    return reps


def run(ctx: Context) -> Section:
    buffers = [5, 667] if ctx.quick else [1, 5, 10, 50, 100, 300, 667]
    ccas = [PCC, "hybla"] if ctx.quick else [PCC, "hybla", "illinois", "cubic"]
    # quick: 60 s; at 800 ms RTT the start-up takes several seconds, and in 40 s runs its share
    # of the mean varied with the flow's random seed across the 80 % criterion (78.8–81.0 %).
    duration = "60s" if ctx.quick else "100s"
    points = {
        (c, b): {**kernel_tcp_or_default(c, "0"), "links.0.queue.size": f"{b}pkt", "duration": duration}
        for c in ccas
        for b in buffers
    }
    seeds = 2 if ctx.quick else SEEDS
    res = ctx.sweep_labeled("satellite", SCENARIO, points, seeds=seeds)
    g = {k: per_seed_goodput(v) for k, v in res.items()}
    table = Table(["buffer", *[f"{c} (Mbit/s, median of {seeds} seeds)" for c in ccas]])
    for b in buffers:
        table.add(f"{b} pkt ({kilobytes(b)})", *[median(g[(c, b)]) for c in ccas])
    file = ctx.scenario_file(SCENARIO)
    lo, big = buffers[0], buffers[-1]
    return Section(
        "3",
        "Satellite link",
        FIGURE,
        f"{num(file.rate_mbps())} Mbit/s, {num(file.rtt_ms())} ms RTT, {pct_exact(file.loss())} random loss "
        f"on data packets, drop-tail buffer from {lo} packet{'s' if lo != 1 else ''} to {big} packets "
        f"({megabytes(big)}); {duration} per run (paper: 100 s)."
        + (
            f" CUBIC runs on {LINUX_MODEL}, as the paper's kernel CUBIC; Hybla and Illinois, which "
            f"that model lacks, each as {PORTS_ON_MODEL}."
            if "cubic" in ccas
            else f" Hybla, which the Linux model lacks, runs as {PORTS_ON_MODEL}."
        ),
        [ctx.rel(ctx.scenario(SCENARIO))],
        "satellite",
        table,
        _claims(g, ccas, big, file.rate_mbps()),
    )
