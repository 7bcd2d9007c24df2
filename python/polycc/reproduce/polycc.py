"""PolyCC (Zhu et al., "PolyCC: Poly-Algorithmic Congestion Control", SIGCOMM'23 demo, seed text
003) reproduced in the simulator, plus one experiment of our own.

Each `_exp_*` function runs one experiment (scenario files in scenarios/papers/polycc/) and returns
its `Section`. The pass criteria are the paper's numbers with the tolerances of issue 19 (the
`CRIT_*` constants), fixed here before and independently of the results; every claim is measured
over `SEEDS` scenario seeds. `ctx.quick` selects shortened versions (shorter runs, fewer points
and seeds) used by the tests.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polycc.reproduce.common import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    MODE_COVERAGE,
    MODE_GAP_MIN_SHARE,
    MODE_GAP_OVER_SPREAD,
    MODE_MIN_RUNS,
    AtLeast,
    AtMost,
    Context,
    RangeWithinFactor,
    Reproduction,
    Section,
    Table,
    WithinFactor,
    all_alike,
    changed_verdicts,
    fmt,
    inflight_on_the_wire,
    judge_over_seeds,
    median,
    num,
    pct,
    prose,
    safe_div,
)
from polycc.reproduce.common import QUICK_SEEDS as QUICK_SEEDS
from polycc.reproduce.common import RATIO_FACTOR as RATIO_FACTOR
from polycc.reproduce.common import SEEDS as SEEDS
from polycc.reproduce.scenario_file import PACKET_BYTES

if TYPE_CHECKING:
    import numpy as np

TITLE = "PolyCC: poly-algorithmic congestion control (SIGCOMM'23 demo)"

#: §3.1 pool: BBR pilot, CUBIC copilot, cwnd = max{cwnd_bbr, cwnd_cubic}.
POLY_BBR_CUBIC: dict[str, Any] = {
    "name": "poly",
    "pilot": "bbr",
    "copilots": ["cubic"],
    "fuse": "max",
    "on": "cwnd",
}
#: §3.2 pool: BBR pilot, Copa copilot, r = min{r_bbr, r_copa} (pacing rate).
POLY_BBR_COPA: dict[str, Any] = {
    "name": "poly",
    "pilot": "bbr",
    "copilots": ["copa"],
    "fuse": "min",
    "on": "rate",
}

LABELS = {"bbr": "BBR v1", "bbr3": "BBR v3", "cubic": "CUBIC", "copa": "Copa", "poly": "PolyCC"}

#: Diagnostic of §3.2 (not the paper's setting): BBR v1 with ns-3's one-segment send quantum,
#: whose quantization budget (the floor its 3/4 phase drains to) is 3 packets instead of Linux's
#: 3 TSO bursts of 2 segments at 10 Mbit/s (VALIDATION.md D8).
BBR_QUANTUM_1: dict[str, Any] = {"name": "bbr", "send_quantum_packets": 1}
POLY_BBR_COPA_QUANTUM_1: dict[str, Any] = {**POLY_BBR_COPA, "pilot": BBR_QUANTUM_1}
QUANTUM_1_LABELS = {
    "bbr-q1": "BBR v1, 1-segment quantum (diagnostic)",
    "poly-q1": "PolyCC, its pilot with a 1-segment quantum (diagnostic)",
}


#: The criteria and verdicts before issue 19 (8 of 11 held; one seed), for the closing list.
OLD_CRITERIA: dict[str, tuple[str, bool]] = {
    "1a": ("0.8× .. 1.25×", True),
    "1b": ("0.8× .. 1.25×", True),
    "1c": (">= 1.5×", True),
    "1d": (">= 1.5×", False),
    "1e": (">= 1.5×", True),
    "1f": (">= 1.5×", True),
    "2a": ("<= 0.60×", False),
    "2b": ("<= 0.80×", False),
    "3a": ("<= 1.25×", True),
    "3b": (">= 35.0 %", True),
    "3c": (">= 15.0 %", True),
}


def closing(sections: Sequence[Section]) -> list[str]:
    """The section's closing list of changed verdicts (`common.changed_verdicts`); the causes are
    in each claim's note above."""
    return changed_verdicts(sections, OLD_CRITERIA, before="one seed, the old criteria in brackets")


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], list[Section]]] = [
        _exp_rtt_variance,
        lambda c: [_exp_bandwidth_halving(c)],
        lambda c: [_exp_mean_knob(c)],
    ]
    return [section for step in steps for section in step(ctx)]


# ---------------------------------------------------------------------------------------------
# Issue 19: the paper's numbers with stated tolerances, fixed here before the runs, and every claim
# over seeds (common.SeedSummary: the median with its bootstrap interval, or the modes).

#: §3.1: "when the RTT variance becomes fierce (e.g., ±70 ms, ±100 ms), PolyCC achieves 1.82 to
#: 10.35 times of goodput than BBR variants".
PAPER_HIGHER = (1.82, 10.35)
#: §3.2: "the convergence time is reduced by 54.1 % under bandwidth change than BBRv1, and reduced
#: by 32.8 % than BBRv2".
PAPER_FASTER_THAN_V1, PAPER_FASTER_THAN_V2 = 0.541, 0.328
#: §3.2, the motivation (cited from earlier work): "BBR spends 2 to 4 seconds to converge when the
#: available bandwidth halves" ...
PAPER_BBR_CONVERGENCE_S = (2.0, 4.0)
#: ... while Copa "is able to converge rapidly in less than 1 second".
PAPER_COPA_CONVERGENCE_S = 1.0

#: 1a / 1b: "PolyCC performs similarly to the BBR variants under slight RTT variance (e.g., ±20
#: ms)", no number. "Similar" is within ×1.2 of 1 either way: the largest band that stays below
#: where the paper's "higher" starts (1.82× / 1.5 = 1.21×, CRIT_HIGHER), so that no ratio is both
#: similar and higher. (Before issue 19: 0.8× .. 1.25×.)
CRIT_SIMILAR = WithinFactor(1.0, 1.2, paper_number=False)
#: 1c-1f: PolyCC / BBR v1 and PolyCC / BBR v3 at ±70 ms and at ±100 ms, each inside the paper's
#: 1.82–10.35× widened by ×1.5 at each end. (Before: >= 1.5×, open above.)
CRIT_HIGHER = RangeWithinFactor(*PAPER_HIGHER, RATIO_FACTOR)
#: 2a: PolyCC's convergence time over BBR v1's, 1 − 0.541 = 0.459, within ×1.5. (Before: <= 0.6.)
CRIT_2A = WithinFactor(1 - PAPER_FASTER_THAN_V1, RATIO_FACTOR)
#: 2b: over BBRv2's (ours: BBR v3), 1 − 0.328 = 0.672, within ×1.5. (Before: <= 0.8.)
CRIT_2B = WithinFactor(1 - PAPER_FASTER_THAN_V2, RATIO_FACTOR)
#: 2c (new with issue 19): BBR v1's own convergence time, the paper's 2–4 s widened by ×1.5.
CRIT_2C = RangeWithinFactor(*PAPER_BBR_CONVERGENCE_S, RATIO_FACTOR)
#: 2d (new with issue 19): Copa's, "less than 1 second": a bound read with the ratio tolerance,
#: at most 1.5 s.
CRIT_2D = AtMost(PAPER_COPA_CONVERGENCE_S * RATIO_FACTOR, paper=PAPER_COPA_CONVERGENCE_S)
#: 3a-3c are ours (the paper tries max and min only): the criteria fixed with the experiment,
#: before its first runs, kept. 3a: w = 0 alone keeps the median RTT within 25 % above the base
#: RTT (a standing queue of at most a quarter BDP; Vegas aims at a few packets) ...
CRIT_3A = AtMost(1.25, paper_number=False)
#: ... 3b: w = 1 takes at least 35 % of the link against one CUBIC (an even split is 50 %) ...
CRIT_3B = AtLeast(0.35, paper_number=False)
#: ... 3c: and the share grows by at least 15 points from w = 0 to w = 1.
CRIT_3C = AtLeast(0.15, paper_number=False)

#: Section 3's runs are deterministic (Vegas, CUBIC and the link draw nothing random: every seed
#: gives the same run). The knob for its labelled second rows (not counted): the PCC section's
#: host send-time noise on every sender, U[0, SEND_JITTER].
SEND_JITTER = "1ms"
SEND_JITTER_KNOB = "U[0, 1 ms] host send-time noise"


def seeds_for(ctx: Context) -> int:
    """Seeds per claim: SEEDS, QUICK_SEEDS in the quick versions."""
    return QUICK_SEEDS if ctx.quick else SEEDS


def per_seed(rows: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    """`key` of a sweep point's rows, one value per seed in seed order (NaN where missing)."""
    return [math.nan if r.get(key) is None else float(r[key]) for r in rows]


def seed_ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """a[i] / b[i] per seed (NaN where either is missing)."""
    return [safe_div(x, y) for x, y in zip(a, b, strict=True)]


def times_2(v: float) -> str:
    """A ratio to two decimals ("1.82×"), as the paper prints its range; a dash when missing."""
    return "–" if math.isnan(v) else "∞" if math.isinf(v) else f"{v:.2f}×"


def secs_2(v: float) -> str:
    """A time to two decimals ("4.36 s"), a dash when missing."""
    return "–" if math.isnan(v) else f"{v:.2f} s"


PREAMBLE = [
    prose(
        f"""
        **How the claims are judged (issue 19).** Each criterion is the paper's number with a
        tolerance stated in the criterion column, fixed in the code before the runs: a ratio the
        paper prints within ×{num(RATIO_FACTOR)} of it either way, a range it prints ("1.82 to
        10.35 times") widened by ×{num(RATIO_FACTOR)} at each end, a bound it prints ("less than 1
        second") exceeded by at most ×{num(RATIO_FACTOR)}; "similar", where it prints no number,
        within ×1.2 of 1 (the criterion's comment in the code justifies it). Section 3 is our
        own experiment: its criteria are ours, marked "no number in the paper". Every claim is
        measured over {SEEDS} scenario seeds and "ours" is the **median** over seeds with its
        {pct(CONFIDENCE, 0)} interval in brackets (bootstrap percentile interval of the median,
        {BOOTSTRAP_RESAMPLES} resamples); the verdict is taken on the median. An outcome of
        {MODE_MIN_RUNS} or more runs is **bimodal** when the largest gap between the sorted
        per-seed values is more than {num(MODE_GAP_OVER_SPREAD)}× the range of each side and more
        than {pct(MODE_GAP_MIN_SHARE, 0)} of the largest value (`polycc.reproduce.common.split_modes`);
        "ours" then lists each mode's median with its frequency, and the claim holds only if the
        modes whose median meets the criterion cover at least {pct(MODE_COVERAGE, 0)} of the
        runs. A seed without a value (a flow that never settles by the definition of section 2)
        is a mode of its own that never holds; "– (none of N seeds has a value)" is a claim
        without any value, which does not hold. What the seed changes here: BBR v1's and
        PolyCC's (its BBR pilot's) random PROBE_BW phase, BBR v3's random probe waits, and the
        delay jitter of section 1r; CUBIC, Copa and Vegas draw nothing random, so their runs are
        the same in every seed and their claims say "deterministic". Section 3 is deterministic
        throughout; its rows marked *with ... (ours, not the paper's setup)*, ids ending in
        "-jitter", repeat its claims with {SEND_JITTER_KNOB} on every sender (the PCC section's
        knob) and are not counted in the summary.
        """
    ),
    prose(
        """
        **Which stack carries which flow.** The paper implemented PolyCC in Chromium's QUIC
        (gQUIC, §3) and compared it with BBR from the same QUIC stack's CCA pool, not with kernel
        TCP: every flow here runs on polycc's QUIC transport, the default stack
        (`stack = "quic"`), and none on the simulator's Linux TCP model (issue 19).
        """
    ),
]


# ---------------------------------------------------------------------------------------------
# 1. Goodput under RTT variance (§3.1, Fig. 3(a))

MEAN_RTT_MS = 100
RTT_CAPACITY_MBPS = 20.0


#: The simulator needs a positive propagation RTT; at d = 100 ms it is 1 ms instead of 0, so the
#: samples range over [1, 201] ms (mean 101 ms).
MIN_PROPAGATION_MS = 1


def rtt_variance_point(deviation_ms: int) -> dict[str, Any]:
    """Overrides that give RTT samples over [100 − d, 100 + d] ms with mean 100 ms: propagation
    RTT 100 − d (at least 1 ms) and ACKs released together every 2d ms (see rtt-variance.toml)."""
    if not 0 <= deviation_ms <= MEAN_RTT_MS:
        raise ValueError(f"deviation {deviation_ms} ms outside 0..{MEAN_RTT_MS}")
    point: dict[str, Any] = {"flows.0.rtt": f"{max(MEAN_RTT_MS - deviation_ms, MIN_PROPAGATION_MS)}ms"}
    if deviation_ms > 0:
        point["links.0.ack_aggregation.interval"] = f"{2 * deviation_ms}ms"
    return point


def rtt_jitter_point(deviation_ms: int) -> dict[str, Any]:
    """Overrides that give RTT samples over [100 − d, 100 + d] ms with mean 100 ms from
    reordering per-packet delay jitter instead of ACK aggregation: propagation RTT 100 − d and
    each data packet delayed by U[0, 2d] after the bottleneck, free to overtake (netem-style)."""
    if not 0 < deviation_ms < MEAN_RTT_MS:
        raise ValueError(f"deviation {deviation_ms} ms outside 1..{MEAN_RTT_MS - 1}")
    return {
        "flows.0.rtt": f"{MEAN_RTT_MS - deviation_ms}ms",
        "links.0.jitter": {"max": f"{2 * deviation_ms}ms", "direction": "data", "reorder": True},
    }


#: Linux BBR's ACK-aggregation allowance (`extra_acked`), for the prose: max-filtered over two
#: windows of 5 rounds (`bbr_extra_acked_win_rounds`), capped at 100 ms of bandwidth
#: (`bbr_extra_acked_max_us`).
EXTRA_ACKED_WIN_ROUNDS = 5
EXTRA_ACKED_CAP_MS = 100
#: BBR v2/v3's loss threshold per round (`loss_thresh`, 2 %), above which inflight_hi is cut.
BBR3_LOSS_THRESH = 0.02
#: The deviations of section 1 the paper calls fierce (§3.1: "e.g., ±70 ms, ±100 ms").
FIERCE_MS = (70, 100)
#: The deviation the paper calls slight (§3.1: "e.g., ±20 ms").
SLIGHT_MS = 20


def _v3_why(g: Mapping[tuple[str, int], float], deviations: Sequence[int]) -> str:
    """Why BBR v3 keeps more goodput under ACK aggregation than the paper's BBRv2 (claims 1d, 1f),
    with section 1's medians."""
    fierce = [d for d in deviations if d in FIERCE_MS]
    kept = "; ".join(
        f"at ±{d} ms (gaps of up to {2 * d} ms) BBR v3 delivers {fmt(g[('bbr3', d)])} Mbit/s against "
        f"PolyCC's {fmt(g[('poly', d)])} and BBR v1's {fmt(g[('bbr', d)])}"
        for d in fierce
    )
    return prose(
        f"""
        Our BBR v3 has the ACK-aggregation allowance of Linux BBR v2/v3 (`extra_acked`: the cwnd
        grows by the bytes ACKed beyond the expected rate, max-filtered over the last
        {EXTRA_ACKED_WIN_ROUNDS}–{2 * EXTRA_ACKED_WIN_ROUNDS} rounds and capped at
        {EXTRA_ACKED_CAP_MS} ms of bandwidth), the heuristic §3.1 says BBRv2 applies. ACK bursts
        every 2d ms leave gaps of up to 2d ms, which the allowance, on top of the 2·BDP window,
        can cover up to about its cap: {kept}. The paper's BBRv2 (2023 gQUIC) already lost at
        ±70 ms; its allowance or cap evidently differed, or its RTT variance did: the paper does
        not say how it produced the variance. Ours is pure ACK aggregation, FIFO, so no packet is
        reordered and no loss is declared spuriously; variance from per-packet delay jitter
        (netem-style) reorders packets, and a reordering-induced loss rate above BBR v2/v3's
        {pct(BBR3_LOSS_THRESH, 0)} threshold cuts their inflight_hi while BBR v1 ignores loss.
        """
    )


def _v1_why(ratios: Sequence[float], d: int) -> str:
    """Why PolyCC's lead over BBR v1 at ±d ms lies where it does against the paper's range
    (claims 1c, 1e), with the claim's per-seed ratios."""
    r = median(ratios)
    if math.isnan(r) or CRIT_HIGHER.holds(r):
        return ""
    side = "above" if r > CRIT_HIGHER.hi else "below"
    return prose(
        f"""
        The median ratio, {times_2(r)}, lies {side} the paper's range widened by
        ×{num(RATIO_FACTOR)}. Our aggregation holds every ACK for up to {2 * d} ms and releases
        them together, the worst case for BBR v1, whose window (2·BtlBw·min RTT with a min RTT
        of {max(MEAN_RTT_MS - d, MIN_PROPAGATION_MS)} ms) is spent long before the next burst;
        the paper does not say how it produced its variance, and a milder aggregation would
        leave BBR v1 more.
        """
    )


def _v3_decay_why(ratios: Sequence[float], d: int) -> str:
    """Why PolyCC's lead over BBR v3 at ±d ms lies above the paper's range, where it does."""
    r = median(ratios)
    if math.isnan(r) or r <= CRIT_HIGHER.hi:
        return ""
    return prose(
        f"""
        At ±{d} ms BBR v3's bandwidth estimate decays through the run in every seed (each
        probe delivers no more than the bursts let through, and the max filter forgets the
        older, larger samples), so its mean over the run rests on when the decay starts: on
        the same runs with the default stack counting whole packets instead of QUIC's UDP
        payload it started seconds later and BBR v3 averaged 4.4 Mbit/s, 4× less than
        PolyCC, against 0.9 Mbit/s now.
        """
    )


def _exp_rtt_variance(ctx: Context) -> list[Section]:
    main, at_70 = _exp_rtt_variance_aggregation(ctx)
    reordering, finding = _exp_rtt_variance_reordering(ctx, at_70)
    # The BBR v3 explanation (claims 1d, 1f) names reordering as the suspect; 1r's finding
    # completes it.
    main.reproductions = [
        dataclasses.replace(r, why=f"{r.why} {finding}") if r.id in ("1d", "1f") else r
        for r in main.reproductions
    ]
    return [main, reordering]


#: The summary columns the two RTT-variance sections read from each run.
_DEVIATION_METRICS = (
    "flow.sender.goodput_mbps",
    "flow.sender.loss_rate",
    "flow.sender.packets_sent",
    "flow.sender.spurious_losses",
    "link.bottleneck.drops",
    "flow.sender.rtt_ms.min",
    "flow.sender.rtt_ms.p95",
)


@dataclasses.dataclass(frozen=True)
class _DeviationRuns:
    """Each metric of `_DEVIATION_METRICS` by (CCA label, deviation): per seed, and the median."""

    seeds: dict[str, dict[tuple[str, int], list[float]]]

    def __getitem__(self, key: str) -> dict[tuple[str, int], float]:
        return {k: median(v) for k, v in self.seeds[key].items()}


def _deviation_sweep(
    ctx: Context,
    name: str,
    ccas: Mapping[str, Any],
    deviations: Sequence[int],
    duration: str,
    point: Callable[[int], dict[str, Any]],
) -> _DeviationRuns:
    """Runs every CCA at every RTT deviation of scenario 1 (`point` sets the deviation) over the
    seeds and returns each metric of `_DEVIATION_METRICS` by (CCA label, deviation)."""
    points = {
        (label, d): {"flows.0.cca": cca, "duration": duration, **point(d)}
        for label, cca in ccas.items()
        for d in deviations
    }
    res = ctx.sweep_labeled(name, "rtt-variance.toml", points, seeds=seeds_for(ctx))
    return _DeviationRuns({key: {k: per_seed(v, key) for k, v in res.items()} for key in _DEVIATION_METRICS})


def _deviation_table(
    ccas: Mapping[str, Any],
    deviations: Sequence[int],
    m: _DeviationRuns,
    extra_header: str | None = None,
    extra: Callable[[int], str] | None = None,
) -> Table:
    """One row per deviation: PolyCC's RTT range, each CCA's goodput, an optional extra column
    and PolyCC's goodput over BBR v1's and v3's (medians over seeds; the ratios the medians of the
    per-seed ratios)."""
    g, rtt_min, rtt_p95 = (
        m["flow.sender.goodput_mbps"],
        m["flow.sender.rtt_ms.min"],
        m["flow.sender.rtt_ms.p95"],
    )
    gs = m.seeds["flow.sender.goodput_mbps"]
    table = Table(
        [
            "RTT deviation",
            "RTT min / p95 (ms, PolyCC)",
            *[f"{LABELS[c]} goodput (Mbit/s)" for c in ccas],
            *([extra_header] if extra_header else []),
            "PolyCC / BBR v1",
            "PolyCC / BBR v3",
        ]
    )
    for d in deviations:
        table.add(
            f"±{d} ms",
            f"{fmt(rtt_min[('poly', d)])} / {fmt(rtt_p95[('poly', d)])}",
            *[g[(c, d)] for c in ccas],
            *([extra(d)] if extra else []),
            times_2(median(seed_ratios(gs[("poly", d)], gs[("bbr", d)]))),
            times_2(median(seed_ratios(gs[("poly", d)], gs[("bbr3", d)]))),
        )
    return table


def _exp_rtt_variance_reordering(ctx: Context, aggregation_at_70: Mapping[str, float]) -> tuple[Section, str]:
    """Scenario 1 with the variance from reordering delay jitter: tests, instead of guessing,
    whether reordering is what cost the paper's BBRv2 its goodput at ±70 ms (claim 1d). Returns
    the section and its finding in one sentence for 1d's note (medians over seeds)."""
    deviations = [70] if ctx.quick else [20, 40, 70, 90]
    ccas: dict[str, Any] = {"bbr": "bbr", "bbr3": "bbr3", "cubic": "cubic", "poly": POLY_BBR_CUBIC}
    duration = "15s" if ctx.quick else "30s"
    m = _deviation_sweep(ctx, "rtt-variance-reordering", ccas, deviations, duration, rtt_jitter_point)
    g, loss, drops = m["flow.sender.goodput_mbps"], m["flow.sender.loss_rate"], m["link.bottleneck.drops"]
    sent, spurious = m["flow.sender.packets_sent"], m["flow.sender.spurious_losses"]
    table = _deviation_table(
        ccas,
        deviations,
        m,
        "declared loss, BBR v3 (spurious share; link drops)",
        lambda d: (
            f"{100 * loss[('bbr3', d)]:.1f} % ({_spurious_share(loss, sent, spurious, ('bbr3', d))};"
            f" {fmt(drops[('bbr3', d)], 0)})"
        ),
    )
    d = 70
    v3_loss = loss[("bbr3", d)]
    kept = {c: g[(c, d)] >= 0.5 * aggregation_at_70.get(c, math.nan) for c in ("bbr", "bbr3", "poly")}
    if kept["bbr3"]:
        finding = (
            f"with reordering jitter of ±{d} ms BBR v3 keeps"
            f" {fmt(g[('bbr3', d)], 1)} Mbit/s, so reordering alone does not reproduce the"
            " paper's BBRv2 collapse either."
        )
    elif kept["poly"]:
        finding = (
            f"with reordering jitter of ±{d} ms BBR v3 falls to"
            f" {fmt(g[('bbr3', d)], 1)} Mbit/s on {100 * v3_loss:.1f} % declared (spurious) loss"
            f" while PolyCC keeps {fmt(g[('poly', d)], 1)} Mbit/s: reordering can explain the"
            " paper's result."
        )
    else:
        finding = (
            f"with reordering jitter of ±{d} ms BBR v3 falls to"
            f" {fmt(g[('bbr3', d)], 1)} Mbit/s on {100 * v3_loss:.1f} % declared (spurious) loss,"
            f" but PolyCC falls too ({fmt(g[('poly', d)], 1)} Mbit/s), and BBR v1 delivers"
            f" {fmt(g[('bbr', d)], 1)} Mbit/s: reordering hurts every controller here, so it does"
            f" not explain a PolyCC far ahead of BBRv2 at ±{d} ms."
        )
    notes = [
        prose(
            f"""
            The transport acknowledges late packets and counts a packet acknowledged after it
            was declared lost as a spurious loss; from the first one on it declares losses by
            time only, after the RTT plus RACK's reordering window (min RTT/4, grown by that
            much per round trip with spurious losses, at most srtt; RFC 8985), and it does not
            undo the controller's response (README, link `jitter`). A packet is delayed by up
            to 2d ms, about {2 * d * RTT_CAPACITY_MBPS * 1e3 / (8 * PACKET_BYTES):.0f} packets
            at ±{d} ms, beyond the RTT of the least delayed ones; while 2d stays below the window
            (about srtt, itself biased towards the less delayed packets, whose ACKs give the RTT
            samples) few losses are spurious, and beyond it a steady share of packets is declared
            lost although the link drops {fmt(drops[("bbr3", d)], 0)} of BBR v3's packets at ±{d}
            ms (medians over seeds).
            """
        ),
        prose(
            f"""
            At ±{d} ms BBR v3 sees {100 * v3_loss:.1f} % declared loss (its loss threshold is
            {pct(BBR3_LOSS_THRESH, 0)}) and delivers {fmt(g[("bbr3", d)], 1)} Mbit/s against
            {fmt(aggregation_at_70.get("bbr3"), 1)} Mbit/s with ACK aggregation (section 1);
            BBR v1, which ignores loss, delivers {fmt(g[("bbr", d)], 1)} Mbit/s against
            {fmt(aggregation_at_70.get("bbr"), 1)} Mbit/s there (its window, 2·BtlBw·min RTT
            with a min RTT of 100 − d ms, starves it under either kind of variance), and PolyCC
            {fmt(g[("poly", d)], 1)} against {fmt(aggregation_at_70.get("poly"), 1)} Mbit/s.
            {finding[0].upper()}{finding[1:]}
            """
        ),
    ]
    if 40 in deviations:
        e = 40
        worse = (
            "CUBIC first, not BBR v3 more than BBR v1"
            if g[("bbr3", e)] >= g[("bbr", e)]
            else ("and BBR v3 more than BBR v1 here")
        )
        notes.append(
            prose(
                f"""
                At ±{e} ms (packets delayed by up to {2 * e} ms) BBR v3 declares
                {100 * loss[("bbr3", e)]:.1f} % lost
                ({"below" if loss[("bbr3", e)] < BBR3_LOSS_THRESH else "above"} its
                {pct(BBR3_LOSS_THRESH, 0)} threshold) and keeps {fmt(g[("bbr3", e)], 1)} Mbit/s
                against BBR v1's {fmt(g[("bbr", e)], 1)}; CUBIC, which cuts its window by 30 % at
                every (spurious) loss and regrows slowly at this RTT, delivers
                {fmt(g[("cubic", e)], 1)} Mbit/s. Reordering hurts the controllers by how they
                answer single losses, {worse}.
                """
            )
        )
    return Section(
        id="1r",
        title="Goodput under RTT variance from reordering delay jitter (ours, a variant of 1)",
        figure="Fig. 3(a), variant",
        setup=prose(
            f"""
            Scenario 1 with the RTT variance produced the other common way, by per-packet delay
            jitter that reorders, as netem's `delay D J` does: the flow's propagation RTT is
            100 − d ms and each data packet is delayed by U[0, 2d] ms after the bottleneck, free
            to overtake the packets ahead of it (`jitter = {{ max = "2d", direction = "data",
            reorder = true }}`), so RTT samples range over [100 − d, 100 + d] ms with mean
            100 ms; ACKs are not aggregated. {RTT_CAPACITY_MBPS:.0f} Mbit/s, one-BDP buffer,
            runs of {duration}, as in 1, over {seeds_for(ctx)} seeds (the jitter is drawn from
            the seed); the table gives medians over seeds. Not a claim of the paper: it tests the
            hypothesis of 1d's explanation. ±100 ms is left out (a 0 ms propagation RTT).
            """
        ),
        scenarios=[ctx.rel(ctx.scenario("rtt-variance.toml"))],
        results="rtt-variance-reordering",
        table=table,
        reproductions=[],
        notes=notes,
    ), f"Section 1r tests that hypothesis: {finding}"


def _spurious_share(
    loss: Mapping[Any, float],
    sent: Mapping[Any, float],
    spurious: Mapping[Any, float],
    key: Any,
) -> str:
    """The share of a run's declared losses that were spurious, as text."""
    declared = loss[key] * sent[key]
    return f"{100 * spurious[key] / declared:.0f} % spurious" if declared > 0 else "none"


def _exp_rtt_variance_aggregation(ctx: Context) -> tuple[Section, dict[str, float]]:
    deviations = [SLIGHT_MS, 70] if ctx.quick else [0, SLIGHT_MS, 40, *FIERCE_MS]
    ccas: dict[str, Any] = {"bbr": "bbr", "bbr3": "bbr3", "cubic": "cubic", "poly": POLY_BBR_CUBIC}
    if ctx.quick:
        del ccas["cubic"]
    duration = "15s" if ctx.quick else "30s"
    seeds = seeds_for(ctx)
    m = _deviation_sweep(ctx, "rtt-variance", ccas, deviations, duration, rtt_variance_point)
    g, gs = m["flow.sender.goodput_mbps"], m.seeds["flow.sender.goodput_mbps"]
    table = _deviation_table(ccas, deviations, m)
    fig = "Fig. 3(a)"
    v3_why = _v3_why(g, deviations)
    reps = [
        judge_over_seeds(
            f"1{'ab'[j]}",
            fig,
            f"Similar goodput at ±{SLIGHT_MS} ms: PolyCC / {label}",
            "similar",
            seed_ratios(gs[("poly", SLIGHT_MS)], gs[(bbr, SLIGHT_MS)]),
            CRIT_SIMILAR,
            times_2,
        )
        for j, (bbr, label) in enumerate([("bbr", "BBR v1"), ("bbr3", "BBR v3")])
    ]
    heavy = [d for d in deviations if d in FIERCE_MS]
    for i, d in enumerate(heavy):
        for j, (bbr, label) in enumerate([("bbr", "BBR v1"), ("bbr3", "BBR v3")]):
            ratios = seed_ratios(gs[("poly", d)], gs[(bbr, d)])
            reps.append(
                judge_over_seeds(
                    f"1{'cdef'[2 * i + j]}",
                    fig,
                    f"Higher goodput at ±{d} ms: PolyCC / {label}",
                    f"{times_2(PAPER_HIGHER[0])} .. {times_2(PAPER_HIGHER[1])}",
                    ratios,
                    CRIT_HIGHER,
                    times_2,
                    (v3_why + _v3_decay_why(ratios, d)) if bbr == "bbr3" else _v1_why(ratios, d),
                )
            )
    figure = ctx.out / "rtt-variance" / "goodput-vs-deviation.png"
    if ctx.plots:
        _plot_lines(
            figure,
            "PolyCC Fig. 3(a): goodput vs RTT deviation (20 Mbit/s, mean RTT 100 ms)",
            "RTT deviation ± (ms)",
            "goodput (Mbit/s)",
            {LABELS[c]: (deviations, [g[(c, d)] for d in deviations]) for c in ccas},
        )
    section = Section(
        id="1",
        title="Goodput under RTT variance from ACK aggregation",
        figure=fig,
        setup=prose(
            f"""
            One flow on a {RTT_CAPACITY_MBPS:.0f} Mbit/s bottleneck with a drop-tail buffer of one
            BDP at the mean RTT (250 KB); the paper gives neither. RTT deviation ±d is produced by
            ACK aggregation alone: the flow's propagation RTT is 100 − d ms and the bottleneck's
            reverse direction releases the ACKs waiting for it together at every multiple of 2d ms,
            so a packet's RTT is 100 − d ms plus a wait spread over [0, 2d): samples range over
            [100 − d, 100 + d] ms with mean 100 ms, and ACKs arrive in bursts every 2d ms (the
            aggregation effect §3.1 describes). At ±100 ms the propagation RTT is
            {MIN_PROPAGATION_MS} ms (the simulator needs a positive one): samples over
            [{MIN_PROPAGATION_MS}, {2 * MEAN_RTT_MS + MIN_PROPAGATION_MS}] ms. No per-packet
            jitter is added, so the path draws nothing random: the seed changes only the BBR
            pilots' random PROBE_BW phase and BBR v3's probe waits (CUBIC's runs are the same in
            every seed). Runs of {duration}, {seeds} seeds each; goodput over the whole run,
            medians over seeds in the table, the ratios there and in the claims per seed.
            PolyCC is `{POLY_BBR_CUBIC}`.
            """
        ),
        scenarios=[ctx.rel(ctx.scenario("rtt-variance.toml"))],
        results="rtt-variance",
        table=table,
        reproductions=reps,
        notes=[
            f"Figure: `rtt-variance/{figure.name}` in the results directory (goodput against deviation).",
            prose(
                """
                Why BBR collapses: its window is 2·BtlBw·min_RTT and min_RTT is the propagation
                RTT 100 − d, so with ACKs held for up to 2d ms the window is spent long before the
                next burst of ACKs arrives and the sender idles; CUBIC's window grows until the
                buffer overflows and covers the ACK gaps. PolyCC sends with max(cwnd) and BBR's
                pacing, so it keeps sending through the gaps.
                """
            ),
        ],
    )
    return section, {c: g[(c, d)] for (c, d) in g if d == 70}


# ---------------------------------------------------------------------------------------------
# 2. Convergence when the bandwidth halves (§3.2, Fig. 3(b))

HALVING_AT_S = 5.0
NEW_RATE_MBPS = 10.0
BASE_RTT_S = 0.100
#: The new BDP the bytes in flight should settle at: 10 Mbit/s × 100 ms.
NEW_BDP_BYTES = NEW_RATE_MBPS * 1e6 / 8 * BASE_RTT_S
#: "within 10 % of the new BDP" (the issue's definition of settled).
BAND = 0.10
#: Smoothing of the in-flight series before the band test: one BBR gain cycle (8 round trips of
#: the 100 ms base RTT), so BBR's 1.25× / 0.75× probing phases average out instead of counting as
#: leaving the band.
SMOOTH_S = 0.8
#: The smoothed series must stay in the band this long to count as settled (20 base RTTs).
HOLD_S = 2.0
#: The diagnostic "final level" is the mean bytes in flight over the run's last 5 s.
FINAL_S = 5.0


def smoothed(
    t: np.ndarray | Sequence[float], x: np.ndarray | Sequence[float], smooth_s: float = SMOOTH_S
) -> np.ndarray:
    """The trailing mean of the samples `x` (one per bin at its start time `t`) over `smooth_s`;
    missing samples count as 0."""
    import numpy as np

    ts = np.asarray(t, dtype=float)
    v = np.asarray(x, dtype=float)
    v = np.where(np.isfinite(v), v, 0.0)
    csum = np.concatenate([[0.0], np.cumsum(v)])
    start = np.searchsorted(ts, ts - smooth_s + 1e-12, side="left")
    idx = np.arange(ts.size)
    return np.asarray((csum[idx + 1] - csum[start]) / (idx + 1 - start))


def convergence_time(
    t: np.ndarray | Sequence[float],
    inflight: np.ndarray | Sequence[float],
    *,
    change_s: float = HALVING_AT_S,
    target: float = NEW_BDP_BYTES,
    band: float = BAND,
    smooth_s: float = SMOOTH_S,
    hold_s: float = HOLD_S,
) -> float:
    """Convergence time after a capacity change, in seconds.

    The bytes-in-flight samples (one per bin, at the bin's start time `t`) are smoothed by a
    trailing mean over `smooth_s`; the flow has converged at the first sample time t* ≥ `change_s`
    from which the smoothed value stays within ±`band` of `target` for at least `hold_s`. Returns
    t* − `change_s`, or NaN when that never happens before the run ends (the hold must fit)."""
    import numpy as np

    ts = np.asarray(t, dtype=float)
    if ts.size == 0:
        return math.nan
    smooth = smoothed(ts, inflight, smooth_s)
    inside = np.abs(smooth - target) <= band * target
    end = ts[-1]
    for k in np.flatnonzero(ts >= change_s):
        if ts[k] + hold_s > end:
            break
        window = (ts >= ts[k]) & (ts <= ts[k] + hold_s)
        if inside[window].all():
            return float(ts[k] - change_s)
    return math.nan


def v1_budget_floor(rate_mbps: float, *, tso_segs: int) -> tuple[float, float]:
    """Standing queue BBR v1's 3/4 phase drains to on a `rate_mbps` link with the 100 ms base
    RTT: Linux `bbr_inflight(bw, 1)` (BDP rounded up to packets, plus 3 bursts of `tso_segs`,
    rounded up to even) less the path's own BDP; as (packets, ms)."""
    bytes_per_s = rate_mbps * 1e6 / 8
    min_rtt = BASE_RTT_S + PACKET_BYTES / bytes_per_s
    bdp = bytes_per_s * min_rtt / PACKET_BYTES
    target = math.ceil((math.ceil(bdp) + 3 * tso_segs) / 2) * 2
    packets = target - bdp
    return packets, packets * PACKET_BYTES / bytes_per_s * 1e3


#: Linux `bbr_pacing_margin_percent`: BBR v1 paces 1 % below its estimate; the six 1.0 phases of
#: a gain cycle drain at most this share of min RTT each.
PACING_MARGIN = 0.01
#: The gain cycle's phases at gain 1.0 (8 phases: 5/4, 3/4, then six at 1).
CRUISE_PHASES = 6
#: Linux `bbr_min_tso_segs` above 1.2 Mbit/s: the quantization budget's burst, in segments.
LINUX_TSO_SEGS = 2


@dataclasses.dataclass(frozen=True)
class _Halving:
    """Section 2's per-seed measures by CCA label: the convergence time to the new BDP (`conv`,
    NaN: never settled), the final in-flight level over the new BDP (`final`), the time to its own
    final level (`own`), the goodput after the halving, and on a path that is 10 Mbit/s
    throughout: in flight over the new BDP, the mean and min RTT, and the largest BtlBw."""

    conv: dict[str, list[float]]
    #: Diagnostic: the first time the smoothed series is inside the band (no hold), and its
    #: lowest value after the halving over the new BDP.
    first_entry: dict[str, list[float]]
    lowest: dict[str, list[float]]
    #: Diagnostic: the raw (unsmoothed) in flight's lowest value after the halving over the new
    #: BDP, and the largest velocity a controller with one reports (Copa's `cc_velocity`).
    lowest_raw: dict[str, list[float]]
    max_velocity: dict[str, list[float]]
    final: dict[str, list[float]]
    own: dict[str, list[float]]
    goodput_after: dict[str, list[float]]
    steady_level: dict[str, list[float]]
    steady_rtt: dict[str, list[float]]
    steady_min_rtt: dict[str, list[float]]
    steady_max_btl_bw: dict[str, list[float]]


def settled_cell(values: Sequence[float]) -> str:
    """A convergence time over seeds for the table: the median of the seeds that settled and how
    many did ("6.16 (5/5)", "– (0/5)")."""
    k = sum(not math.isnan(v) for v in values)
    return f"{fmt(median(values), 2)} ({k}/{len(values)})"


def _settled(values: Sequence[float]) -> str:
    """How many seeds settled, for prose ("in 0 of 5 seeds")."""
    return f"in {sum(not math.isnan(v) for v in values)} of {len(values)} seeds"


def _settled_after(values: Sequence[float]) -> str:
    """How many seeds settled and, if any did, their median time ("in 5 of 5 seeds, after 6.16 s
    (median)")."""
    k = sum(not math.isnan(v) for v in values)
    return _settled(values) + (f", after {fmt(median(values), 2)} s (median)" if k else "")


def _halving_runs(ctx: Context, ccas: Mapping[str, Any], duration: str) -> _Halving:
    seeds = seeds_for(ctx)
    points = {label: {"flows.0.cca": cca, "duration": duration} for label, cca in ccas.items()}
    res = ctx.sweep_labeled("bandwidth-halving", "bandwidth-halving.toml", points, seeds=seeds)
    h = _Halving({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})
    per_run = ("conv", "first_entry", "lowest", "lowest_raw", "max_velocity", "final", "own", "goodput_after")
    for label, rows in res.items():
        for key in per_run:
            getattr(h, key)[label] = []
        for row in rows:
            ts = ctx.timeseries("bandwidth-halving", row)
            f = ts[ts["flow"] == "sender"]
            wire = inflight_on_the_wire(f)
            t, x = f["t_s"].to_numpy(), f[wire].to_numpy()
            h.conv[label].append(convergence_time(t, x))
            h.first_entry[label].append(convergence_time(t, x, hold_s=0.0))
            h.lowest[label].append(float(smoothed(t, x)[t >= HALVING_AT_S].min()) / NEW_BDP_BYTES)
            after = f[f["t_s"] >= HALVING_AT_S]
            h.lowest_raw[label].append(float(after[wire].min()) / NEW_BDP_BYTES)
            velocity = after.get("cc_velocity")
            h.max_velocity[label].append(
                math.nan if velocity is None or velocity.isna().all() else float(velocity.max())
            )
            # Diagnostic, not a claim: the level the flow settles at (mean of the last 5 s) and
            # the time to come within 10 % of that level by the same rule.
            level = float(f[f["t_s"] >= t[-1] - FINAL_S][wire].mean())
            h.final[label].append(level / NEW_BDP_BYTES)
            h.own[label].append(convergence_time(t, x, target=level))
            h.goodput_after[label].append(float(f[f["t_s"] >= HALVING_AT_S]["goodput_mbps"].mean()))

    # Diagnostic, not a claim: each CCA on a path that is 10 Mbit/s from the start (no halving),
    # to tell how far above the nominal new BDP its own steady state sits.
    steady_points = {
        label: {"flows.0.cca": cca, "duration": duration, "links.0.schedule.0.rate": f"{NEW_RATE_MBPS:g}Mbps"}
        for label, cca in ccas.items()
    }
    steady_res = ctx.sweep_labeled("bandwidth-constant", "bandwidth-halving.toml", steady_points, seeds=seeds)
    for label, rows in steady_res.items():
        for key in ("steady_level", "steady_rtt", "steady_min_rtt", "steady_max_btl_bw"):
            getattr(h, key)[label] = []
        for row in rows:
            ts = ctx.timeseries("bandwidth-constant", row)
            f = ts[(ts["flow"] == "sender") & (ts["t_s"] >= HALVING_AT_S)]
            h.steady_level[label].append(float(f[inflight_on_the_wire(f)].mean()) / NEW_BDP_BYTES)
            h.steady_rtt[label].append(float(f["rtt_ms"].mean()))
            h.steady_min_rtt[label].append(float(f["rtt_ms"].min()))
            bw = f.get("cc_btl_bw_mbps")
            h.steady_max_btl_bw[label].append(math.nan if bw is None or bw.isna().all() else float(bw.max()))
    return h


def _exp_bandwidth_halving(ctx: Context) -> Section:
    ccas: dict[str, Any] = {
        "bbr": "bbr",
        "bbr3": "bbr3",
        "copa": "copa",
        "poly": POLY_BBR_COPA,
        "bbr-q1": BBR_QUANTUM_1,
        "poly-q1": POLY_BBR_COPA_QUANTUM_1,
    }
    labels = {**LABELS, **QUANTUM_1_LABELS}
    duration = "15s" if ctx.quick else "20s"
    seeds = seeds_for(ctx)
    h = _halving_runs(ctx, ccas, duration)
    med = {
        key: {label: median(v) for label, v in getattr(h, key).items()}
        for key in (
            "final",
            "own",
            "goodput_after",
            "steady_level",
            "steady_rtt",
            "steady_min_rtt",
        )
    }
    final, own, steady_level = med["final"], med["own"], med["steady_level"]
    steady_rtt, steady_min_rtt = med["steady_rtt"], med["steady_min_rtt"]

    table = Table(
        [
            "CCA",
            "convergence time to ±10 % of the new BDP (s; seeds that settled)",
            "final in-flight level / new BDP",
            "time to ±10 % of its own final level (s)",
            "goodput after the halving (Mbit/s)",
            "10 Mbit/s throughout: in-flight / new BDP, mean / min RTT (ms)",
        ]
    )
    for label in ccas:
        table.add(
            labels[label],
            settled_cell(h.conv[label]),
            fmt(final[label], 2),
            fmt(own[label], 2),
            med["goodput_after"][label],
            f"{fmt(steady_level[label], 2)}, {fmt(steady_rtt[label], 1)} / {fmt(steady_min_rtt[label], 1)}",
        )
    fig = "Fig. 3(b)"
    own_ratio = {b: median(seed_ratios(h.own["poly"], h.own[b])) for b in ("bbr", "bbr3")}
    q1_ratio = median(seed_ratios(h.conv["poly-q1"], h.conv["bbr-q1"]))
    budget_packets, budget_ms = v1_budget_floor(NEW_RATE_MBPS, tso_segs=LINUX_TSO_SEGS)
    serialisation_ms = PACKET_BYTES * 8 / (NEW_RATE_MBPS * 1e6) * 1e3
    min_rtt_ms = BASE_RTT_S * 1e3 + serialisation_ms
    gain_cycle_ms = min_rtt_ms / 32
    margin_drain_ms = CRUISE_PHASES * PACING_MARGIN * min_rtt_ms
    max_btl_bw = max((v for v in h.steady_max_btl_bw["bbr"] if not math.isnan(v)), default=math.nan)
    if math.isnan(q1_ratio):
        q1_verdict = "no seed in which both settle gives a ratio"
    elif CRIT_2A.holds(q1_ratio):
        q1_verdict = "where both settle, PolyCC is faster by about the paper's margin"
    elif q1_ratio < CRIT_2A.lo:
        q1_verdict = "where both settle, PolyCC is faster than the paper says"
    else:
        q1_verdict = (
            f"where both settle, PolyCC is not faster by the paper's margin, {times_2(CRIT_2A.hi)} at most"
        )
    own_meets = [
        f"{'meets' if crit.holds(own_ratio[b]) else 'misses'} the paper's −{pct(faster)}"
        for b, crit, faster in (
            ("bbr", CRIT_2A, PAPER_FASTER_THAN_V1),
            ("bbr3", CRIT_2B, PAPER_FASTER_THAN_V2),
        )
    ]
    own_verdict = f"which {own_meets[0]} and {own_meets[1]} within ×{num(RATIO_FACTOR)}"
    conv_why = prose(
        f"""
        By the definition fixed beforehand BBR v1 settles {_settled(h.conv["bbr"])} and PolyCC
        {_settled(h.conv["poly"])}: their bytes in flight end at {fmt(final["bbr"], 2)}× and
        {fmt(final["poly"], 2)}× the nominal new BDP (medians over seeds), against the band's edge
        at {fmt(1 + BAND, 2)}×, which the smoothed series crosses at each probe. This is BBR v1's
        steady state on this path, not slow convergence and not an estimation error: on a path
        that is {NEW_RATE_MBPS:g} Mbit/s from the start (last column) BBR v1 holds
        {fmt(steady_level["bbr"], 2)}× the nominal BDP with an RTT of {fmt(steady_rtt["bbr"], 1)}
        ms on average against {fmt(steady_min_rtt["bbr"], 1)} ms minimum, and its BtlBw never
        exceeds {fmt(max_btl_bw, 3)} Mbit/s in any seed (`tests/bbr.rs`, fixed-rate tests). The
        {fmt(serialisation_ms, 1)} ms of serialisation in the min RTT puts
        {fmt(min_rtt_ms / (BASE_RTT_S * 1e3), 2)}× in flight with an empty queue. The gain cycle
        alone (5/4 for a round, 3/4 for a round, 1 for six) would add R/32 ≈ {fmt(gain_cycle_ms, 1)}
        ms of queue on average; the rest is Linux's quantization budget: the 3/4 phase (and
        DRAIN) stop as soon as in flight ≤ `bbr_inflight(bw, 1)`, which is the BDP rounded up to
        packets plus 3 TSO bursts of {LINUX_TSO_SEGS} segments (`bbr_min_tso_segs` above 1.2
        Mbit/s), rounded up to an even count: {budget_packets:.1f} packets, {budget_ms:.1f} ms at
        {NEW_RATE_MBPS:g} Mbit/s. The six 1.0 phases drain only the {pct(PACING_MARGIN, 0)} pacing
        margin ({fmt(PACING_MARGIN * min_rtt_ms, 1)} ms per round) of that, so the queue averages
        {fmt(steady_rtt["bbr"] - steady_min_rtt["bbr"], 1)} ms (bounded in the test by the sum of
        the two terms above and that sum less {fmt(margin_drain_ms, 1)} ms of margin drain
        below). As a diagnostic, the rows with ns-3's one-segment quantum (budget 3 packets) sit
        at {fmt(final["bbr-q1"], 2)}× (BBR v1) and {fmt(final["poly-q1"], 2)}× (PolyCC) and
        settle {_settled_after(h.conv["bbr-q1"])} and {_settled_after(h.conv["poly-q1"])}, a
        median ratio of {times_2(q1_ratio)} ({q1_verdict}); that is not the Linux budget the paper's BBR
        has, so it does not decide the claim. The paper gives no buffer and no convergence
        definition, and we do not widen the band after the fact. BBR v1's own settling (to within
        ±10 % of its own final level) takes {fmt(own["bbr"], 1)} s (median) against the paper's
        {num(PAPER_BBR_CONVERGENCE_S[0])}–{num(PAPER_BBR_CONVERGENCE_S[1])} s; by that
        diagnostic PolyCC settles in {fmt(own["poly"], 2)} s, {times_2(own_ratio["bbr"])} BBR
        v1's and {times_2(own_ratio["bbr3"])} BBR v3's time (medians of the per-seed ratios),
        {own_verdict}, but that is not the criterion we fixed, and the claims are judged on it.
        """
    )
    copa_lowest = median(h.lowest["copa"])
    copa_swing = (
        f"and then fall to {fmt(copa_lowest, 2)}× the new BDP, out of the band below, before they"
        f" settle. Copa's telemetry shows the swing: it moves its window by v/(δ·cwnd) per ACK and"
        f" doubles the velocity v every round trip once it has moved the same way for 3 (Copa §2.1), so"
        f" it drains the queue the halving left slowly at first, then fast with v up to"
        f" {fmt(median(h.max_velocity['copa']), 0)} (median of each seed's largest), overshoots"
        f" to {fmt(median(h.lowest_raw['copa']), 2)}× the new BDP in flight (unsmoothed) and"
        " swings back up the same way before it settles"
        if copa_lowest < 1 - BAND
        else "and stay at or above the band's lower edge"
    )
    # What the definition itself costs: a flow whose bytes in flight fell at once from the old BDP
    # to the new one reads as settled only once the trailing mean has let the old level go.
    step_t = [i * 0.01 for i in range(int(3 * HALVING_AT_S / 0.01))]
    step = [2 * NEW_BDP_BYTES if t < HALVING_AT_S else NEW_BDP_BYTES for t in step_t]
    ideal = (
        f"By the definition an ideal flow, whose bytes in flight fell at once from the old BDP to"
        f" the new one, reads as settled {fmt(convergence_time(step_t, step), 2)} s after the"
        f" halving (the trailing {SMOOTH_S:g} s mean's lag)."
    )
    reps = [
        judge_over_seeds(
            "2a",
            fig,
            "Convergence time of PolyCC / BBR v1",
            f"{times_2(1 - PAPER_FASTER_THAN_V1)} (−{pct(PAPER_FASTER_THAN_V1)})",
            seed_ratios(h.conv["poly"], h.conv["bbr"]),
            CRIT_2A,
            times_2,
            conv_why,
        ),
        judge_over_seeds(
            "2b",
            fig,
            "Convergence time of PolyCC / BBR v3 (paper: BBR v2)",
            f"{times_2(1 - PAPER_FASTER_THAN_V2)} (−{pct(PAPER_FASTER_THAN_V2)})",
            seed_ratios(h.conv["poly"], h.conv["bbr3"]),
            CRIT_2B,
            times_2,
            prose(
                f"""
                The paper compares with BBR v2; the simulator has BBR v3, whose bandwidth
                probing and loss/ECN response follow v2's design with tuned parameters. BBR v3
                settles {_settled_after(h.conv["bbr3"])}; it cruises with an empty queue, and
                its in flight is high only around its probes, whose UP phase lasts until the
                bandwidth has not grown for 3 rounds (draft-ietf-ccwg-bbr, BBRIsTimeToGoDown)
                and whose DOWN phase at 0.9 drains that queue over several rounds. A seed's
                ratio has a value only where PolyCC, piloted by BBR v1, settles too
                ({_settled(h.conv["poly"])}, see 2a).
                """
            ),
        ),
        judge_over_seeds(
            "2c",
            fig,
            "BBR v1's convergence time after the halving (§3.2, cited from earlier work)",
            f"{num(PAPER_BBR_CONVERGENCE_S[0])}–{num(PAPER_BBR_CONVERGENCE_S[1])} s",
            h.conv["bbr"],
            CRIT_2C,
            secs_2,
            prose(
                f"""
                New with issue 19. By the fixed definition BBR v1 settles
                {_settled(h.conv["bbr"])} (see 2a for why it stays at the band's edge); to within
                ±10 % of its own final level it takes {fmt(own["bbr"], 2)} s (median). {ideal}
                The kernel's BBR v1 on the same scenario in the testbed is measured in the section
                after this paper's ("PolyCC's convergence premise on the real kernel").
                """
            ),
        ),
        judge_over_seeds(
            "2d",
            fig,
            "Copa's convergence time after the halving (§3.2)",
            f"< {secs_2(PAPER_COPA_CONVERGENCE_S)}",
            h.conv["copa"],
            CRIT_2D,
            secs_2,
            prose(
                f"""
                New with issue 19. Copa settles {_settled(h.conv["copa"])}, at
                {fmt(final["copa"], 2)}× the new BDP (median), and to within ±10 % of its own
                final level in {fmt(own["copa"], 2)} s. Its smoothed bytes in flight first enter
                the band {fmt(median(h.first_entry["copa"]), 2)} s after the halving (median)
                {copa_swing}. The paper's "less than 1 second" is cited for Copa's per-ACK rate
                control, without a definition of convergence. {ideal}
                """
            ),
        ),
    ]
    return Section(
        id="2",
        title="Convergence when the bottleneck halves",
        figure=fig,
        setup=prose(
            f"""
            One flow, 20 Mbit/s and 100 ms base RTT, capacity halved to {NEW_RATE_MBPS:g} Mbit/s
            at t = {HALVING_AT_S:g} s; drop-tail buffer 250 KB (one BDP at 20 Mbit/s; the paper
            does not give it); runs of {duration}, {seeds} seeds each, time series in 10 ms bins.
            Convergence time (defined before the runs): the bytes in flight, sampled every 10 ms
            and smoothed by a trailing {SMOOTH_S:.1f} s mean (one BBR gain cycle of 8 base RTTs,
            so its 1.25× / 0.75× probing averages out), must enter ±{BAND:.0%} of the new BDP
            ({NEW_RATE_MBPS:g} Mbit/s × 100 ms = {NEW_BDP_BYTES / 1e3:.0f} KB) and stay there for
            {HOLD_S:.0f} s; the time is from the halving to that entry. "–" means it never settled
            within the run; the first column gives the median of the seeds that settled and how
            many did, the others medians over seeds. The seed changes BBR's random PROBE_BW phase
            and BBR v3's probe waits; Copa draws nothing random. PolyCC is `{POLY_BBR_COPA}`. The
            third and fourth columns are a diagnostic added after the first runs, not a claim: the
            level the bytes in flight settle at, and the time to come within ±10 % of that level
            by the same rule; so is the last, each CCA on a path that is {NEW_RATE_MBPS:g} Mbit/s
            throughout.
            """
        ),
        scenarios=[ctx.rel(ctx.scenario("bandwidth-halving.toml"))],
        results="bandwidth-halving",
        table=table,
        reproductions=reps,
    )


# ---------------------------------------------------------------------------------------------
# 3. Our own: weighted mean of Vegas and CUBIC as a delay / competitiveness knob

KNOB_BASE_RTT_MS = 40.0


def _mean_knob_cca(w: float) -> dict[str, Any]:
    """The pool of section 3 at CUBIC weight `w`."""
    return {"name": "poly", "pilot": "vegas", "copilots": ["cubic"], "fuse": "mean", "weights": [1.0 - w, w]}


@dataclasses.dataclass(frozen=True)
class _MeanKnob:
    """Section 3's per-seed measures by flow label: alone, the median RTT and goodput; against one
    CUBIC, the flow's share of the total goodput."""

    rtt: dict[str, list[float]]
    alone: dict[str, list[float]]
    share: dict[str, list[float]]


def _mean_knob_runs(
    ctx: Context, name: str, ccas: Mapping[str, Any], duration: str, extra: Mapping[str, Any]
) -> _MeanKnob:
    points: dict[tuple[str, str], dict[str, Any]] = {}
    for label, cca in ccas.items():
        # Alone: the cross flow starts after the run ends.
        alone = {"flows.0.cca": cca, "flows.1.start": "1000s", "duration": duration}
        points[(label, "alone")] = {**alone, **extra}
        points[(label, "vs CUBIC")] = {"flows.0.cca": cca, "duration": duration, **extra}
    res = ctx.sweep_labeled(name, "vegas-cubic-mean.toml", points, seeds=seeds_for(ctx))
    m = _MeanKnob({}, {}, {})
    for (label, mode), rows in res.items():
        if mode == "alone":
            m.rtt[label] = per_seed(rows, "flow.poly.rtt_ms.p50")
            m.alone[label] = per_seed(rows, "flow.poly.goodput_mbps")
        else:
            a, b = per_seed(rows, "flow.poly.goodput_mbps"), per_seed(rows, "flow.cross.goodput_mbps")
            m.share[label] = [safe_div(x, x + y) for x, y in zip(a, b, strict=True)]
    return m


def _mean_knob_claims(m: _MeanKnob, lo: str, hi: str, knob: str = "") -> list[Reproduction]:
    """3a-3c (ours) on the runs `m`: w = 0 is `lo`, w = 1 is `hi`."""
    suffix = "-jitter" if knob else ""
    return [
        judge_over_seeds(
            "3a" + suffix,
            "ours",
            "Ours: w = 0 (Vegas' window) keeps the queue short alone: median RTT / base RTT",
            "–",
            [v / KNOB_BASE_RTT_MS for v in m.rtt[lo]],
            CRIT_3A,
            times_2,
            knob=knob,
        ),
        judge_over_seeds(
            "3b" + suffix,
            "ours",
            "Ours: w = 1 (CUBIC's window) competes with CUBIC: share of the link",
            "–",
            m.share[hi],
            CRIT_3B,
            pct,
            knob=knob,
        ),
        judge_over_seeds(
            "3c" + suffix,
            "ours",
            "Ours: the knob trades delay for share: share at w = 1 minus share at w = 0",
            "–",
            [a - b for a, b in zip(m.share[hi], m.share[lo], strict=True)],
            CRIT_3C,
            pct,
            knob=knob,
        ),
    ]


def _exp_mean_knob(ctx: Context) -> Section:
    weights = [0.0, 0.5, 1.0] if ctx.quick else [0.0, 0.25, 0.5, 0.75, 1.0]
    duration = "30s" if ctx.quick else "40s"
    seeds = seeds_for(ctx)
    ccas: dict[str, Any] = {f"poly w={w:g}": _mean_knob_cca(w) for w in weights}
    ccas["Vegas"] = "vegas"
    ccas["CUBIC"] = "cubic"
    m = _mean_knob_runs(ctx, "vegas-cubic-mean", ccas, duration, {})
    poly_labels = [f"poly w={w:g}" for w in weights]
    lo, hi = poly_labels[0], poly_labels[-1]
    # The knob rows: the two ends of the scale with every sender's send-time noise.
    ends = {lo: ccas[lo], hi: ccas[hi]}
    mj = _mean_knob_runs(
        ctx, "vegas-cubic-mean-send-jitter", ends, duration, {"flows.*.send_jitter": SEND_JITTER}
    )
    rtt = {k: median(v) for k, v in m.rtt.items()}
    share = {k: median(v) for k, v in m.share.items()}
    all_deterministic = all(all_alike(v) for d in (m.rtt, m.alone, m.share) for v in d.values())

    table = Table(["flow", "alone: goodput (Mbit/s)", "alone: median RTT (ms)", "share against one CUBIC"])
    for label in ccas:
        table.add(label, median(m.alone[label]), rtt[label], pct(share[label]))
    for label in ends:
        table.add(
            f"{label}, with send jitter (knob)",
            median(mj.alone[label]),
            median(mj.rtt[label]),
            pct(median(mj.share[label])),
        )
    reps = [*_mean_knob_claims(m, lo, hi), *_mean_knob_claims(mj, lo, hi, SEND_JITTER_KNOB)]
    monotone = all(rtt[a] <= rtt[b] for a, b in itertools.pairwise(poly_labels))
    figure = ctx.out / "vegas-cubic-mean" / "share-vs-delay.png"
    if ctx.plots:
        _plot_lines(
            figure,
            "PolyCC mean(Vegas, CUBIC): weight w of CUBIC",
            "weight of CUBIC w",
            "share vs CUBIC (%) / median RTT alone (ms)",
            {
                "share against one CUBIC (%)": (weights, [100 * share[x] for x in poly_labels]),
                "median RTT alone (ms)": (weights, [rtt[x] for x in poly_labels]),
            },
        )
    seeds_text = (
        f"the {seeds} seeds give the same runs (Vegas, CUBIC and the link draw nothing random),"
        " so the outcome is deterministic"
        if all_deterministic
        else f"medians over {seeds} seeds"
    )
    return Section(
        id="3",
        title="Our experiment: a weighted mean of Vegas and CUBIC",
        figure="ours",
        setup=prose(
            f"""
            Not in the paper, which tries max and min only. Pool: pilot Vegas, copilot CUBIC,
            fused window (1 − w)·cwnd_vegas + w·cwnd_cubic written back to both every ACK.
            20 Mbit/s, {KNOB_BASE_RTT_MS:.0f} ms base RTT, drop-tail buffer of two BDPs (200 KB).
            Each weight runs alone (median RTT, goodput) and against one CUBIC flow started at
            the same time (share of the total goodput), {duration} each; Vegas and CUBIC alone
            are the ends of the scale; {seeds_text}. The rows "with send jitter (knob)" run the
            ends of the scale with {SEND_JITTER_KNOB} on every sender (medians over {seeds}
            seeds; claims 3a-3c-jitter, not counted). The criteria are ours, fixed before the
            first runs.
            """
        ),
        scenarios=[ctx.rel(ctx.scenario("vegas-cubic-mean.toml"))],
        results="vegas-cubic-mean",
        table=table,
        reproductions=reps,
        notes=[
            f"Figure: `vegas-cubic-mean/{figure.name}` in the results directory.",
            prose(
                f"""
                Between the ends the knob is coarse: the median RTT alone is
                {"" if monotone else "not "}monotone in w
                ({", ".join(f"{fmt(rtt[x])} ms" for x in poly_labels)} for w =
                {", ".join(f"{w:g}" for w in weights)}), and any CUBIC weight lets the window grow
                until the buffer overflows (the written-back mean restarts CUBIC's growth from the
                mean every ACK, and Vegas only subtracts one packet per RTT), so the low delay of
                w = 0 goes as soon as w > 0.
                """
            ),
        ],
    )


def _plot_lines(
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    lines: Mapping[str, tuple[Sequence[float], Sequence[float]]],
) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from polycc.plots import _LOCK, line_axes

    fig = Figure(figsize=(7, 4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    line_axes(ax, xlabel, lines)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="medium")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK:
        fig.savefig(path, dpi=100)
