"""PolyCC (Zhu et al., "PolyCC: Poly-Algorithmic Congestion Control", SIGCOMM'23 demo, seed text
003) reproduced in the simulator, plus one experiment of our own.

Each `_exp_*` function runs one experiment (scenario files in scenarios/papers/polycc/) and returns
its `Section`. The pass criteria are the paper's claims with margins, fixed here before and
independently of the results. `ctx.quick` selects shortened versions used by the tests.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
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


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], list[Section]]] = [
        _exp_rtt_variance,
        lambda c: [_exp_bandwidth_halving(c)],
        lambda c: [_exp_mean_knob(c)],
    ]
    return [section for step in steps for section in step(ctx)]


def _first(rows: Sequence[Mapping[str, Any]], key: str) -> float:
    vals = [float(r[key]) for r in rows if r.get(key) is not None]
    return statistics.fmean(vals) if vals else math.nan


def _within(
    id: str, figure: str, claim: str, paper: str, value: float, lo: float, hi: float, why: str = ""
) -> Reproduction:
    """Holds when lo <= value <= hi."""
    holds = not math.isnan(value) and lo <= value <= hi
    return Reproduction(id, figure, claim, paper, ratio(value), holds, f"{lo}× .. {hi}×", why, value)


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


#: Why BBR v3 keeps its goodput at ±70 ms in section 1 (claims 1d and, in the full run, 1f).
_V3_WHY = prose(
    """
    Our BBR v3 has the ACK-aggregation allowance of Linux BBR v2/v3 (`extra_acked`: the cwnd
    grows by the bytes ACKed beyond the expected rate over the last 5–10 rounds, capped at
    100 ms of bandwidth), the heuristic §3.1 says BBRv2 applies. ACK bursts every 2d ms leave
    gaps of up to 140 ms at ±70 ms, which the allowance (capped at 100 ms, on top of the
    2·BDP window) covers, so v3 keeps most of its goodput there and collapses only at
    ±100 ms (gaps of 200 ms). The paper's BBRv2 (2023 gQUIC) already lost at ±70 ms; its
    allowance or cap evidently differed, or its RTT variance did: the paper does not say how
    it produced the variance. PolyCC beats BBR v1 by far more than the paper says because
    our aggregation holds every ACK for up to 2d ms, the worst case for BBR v1. Ours is pure
    ACK aggregation, FIFO, so no packet is reordered and no loss is declared spuriously;
    variance from per-packet delay jitter (netem-style) reorders packets, and a
    reordering-induced loss rate above BBR v2/v3's 2 % threshold cuts their inflight_hi
    while BBR v1 ignores loss.
    """
)


def _exp_rtt_variance(ctx: Context) -> list[Section]:
    main, at_70 = _exp_rtt_variance_aggregation(ctx)
    reordering, finding = _exp_rtt_variance_reordering(ctx, at_70)
    # The BBR v3 explanation (claims 1d, 1f) names reordering as the suspect; 1r's finding
    # completes it.
    main.reproductions = [
        dataclasses.replace(r, why=f"{r.why} {finding}") if r.why == _V3_WHY else r
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


def _deviation_sweep(
    ctx: Context,
    name: str,
    ccas: Mapping[str, Any],
    deviations: Sequence[int],
    duration: str,
    point: Callable[[int], dict[str, Any]],
) -> dict[str, dict[tuple[str, int], float]]:
    """Runs every CCA at every RTT deviation of scenario 1 (`point` sets the deviation) and
    returns each metric of `_DEVIATION_METRICS` by (CCA label, deviation)."""
    points = {
        (label, d): {"flows.0.cca": cca, "duration": duration, **point(d)}
        for label, cca in ccas.items()
        for d in deviations
    }
    res = ctx.sweep_labeled(name, "rtt-variance.toml", points)
    return {key: {k: _first(v, key) for k, v in res.items()} for key in _DEVIATION_METRICS}


def _deviation_table(
    ccas: Mapping[str, Any],
    deviations: Sequence[int],
    m: Mapping[str, Mapping[tuple[str, int], float]],
    extra_header: str | None = None,
    extra: Callable[[int], str] | None = None,
) -> Table:
    """One row per deviation: PolyCC's RTT range, each CCA's goodput, an optional extra column
    and PolyCC's goodput over BBR v1's and v3's."""
    g, rtt_min, rtt_p95 = (
        m["flow.sender.goodput_mbps"],
        m["flow.sender.rtt_ms.min"],
        m["flow.sender.rtt_ms.p95"],
    )
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
            ratio(safe_div(g[("poly", d)], g[("bbr", d)])),
            ratio(safe_div(g[("poly", d)], g[("bbr3", d)])),
        )
    return table


def _exp_rtt_variance_reordering(ctx: Context, aggregation_at_70: Mapping[str, float]) -> tuple[Section, str]:
    """Scenario 1 with the variance from reordering delay jitter: tests, instead of guessing,
    whether reordering is what cost the paper's BBRv2 its goodput at ±70 ms (claim 1d). Returns
    the section and its finding in one sentence for 1d's note."""
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
            " not explain a PolyCC far ahead of BBRv2 at ±70 ms."
        )
    notes = [
        prose(
            f"""
            The transport acknowledges late packets and counts a packet acknowledged after it
            was declared lost as a spurious loss; from the first one on it declares losses by
            time only, after the RTT plus RACK's reordering window (min RTT/4, grown by that
            much per round trip with spurious losses, at most srtt; RFC 8985), and it does not
            undo the controller's response (README, link `jitter`). A packet is delayed by up
            to 2d ms, about {2 * d * RTT_CAPACITY_MBPS / 12:.0f} packets at ±{d} ms, beyond
            the RTT of the least delayed ones; while 2d stays below the window (about srtt,
            itself biased towards the less delayed packets, whose ACKs give the RTT samples)
            few losses are spurious, and beyond it a steady share of packets is declared lost
            although the link drops {fmt(drops[("bbr3", d)], 0)} of BBR v3's packets at ±{d}
            ms.
            """
        ),
        prose(
            f"""
            At ±{d} ms BBR v3 sees {100 * v3_loss:.1f} % declared loss (its loss threshold is
            2 %) and delivers {fmt(g[("bbr3", d)], 1)} Mbit/s against
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
        notes.append(
            prose(
                f"""
                At ±{e} ms (packets delayed by up to {2 * e} ms) BBR v3 declares
                {100 * loss[("bbr3", e)]:.1f} % lost, below its 2 % threshold, and keeps
                {fmt(g[("bbr3", e)], 1)} Mbit/s against BBR v1's {fmt(g[("bbr", e)], 1)};
                CUBIC, which cuts its window by 30 % at every (spurious) loss and regrows slowly
                at this RTT, delivers {fmt(g[("cubic", e)], 1)} Mbit/s. Reordering hurts the
                controllers by how they answer single losses, CUBIC first, not BBR v3 more than
                BBR v1.
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
            runs of {duration}, as in 1. Not a claim of the paper: it tests the hypothesis of
            1d's explanation. ±100 ms is left out (a 0 ms propagation RTT).
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
    deviations = [20, 70] if ctx.quick else [0, 20, 40, 70, 100]
    ccas: dict[str, Any] = {"bbr": "bbr", "bbr3": "bbr3", "cubic": "cubic", "poly": POLY_BBR_CUBIC}
    if ctx.quick:
        del ccas["cubic"]
    duration = "15s" if ctx.quick else "30s"
    m = _deviation_sweep(ctx, "rtt-variance", ccas, deviations, duration, rtt_variance_point)
    g = m["flow.sender.goodput_mbps"]
    table = _deviation_table(ccas, deviations, m)
    fig = "Fig. 3(a)"
    reps = [
        _within(
            "1a",
            fig,
            "Similar goodput at ±20 ms: PolyCC / BBR v1",
            "similar",
            safe_div(g[("poly", 20)], g[("bbr", 20)]),
            0.8,
            1.25,
        ),
        _within(
            "1b",
            fig,
            "Similar goodput at ±20 ms: PolyCC / BBR v3",
            "similar",
            safe_div(g[("poly", 20)], g[("bbr3", 20)]),
            0.8,
            1.25,
        ),
    ]
    heavy = [d for d in deviations if d >= 70]
    for i, d in enumerate(heavy):
        for j, (bbr, label) in enumerate([("bbr", "BBR v1"), ("bbr3", "BBR v3")]):
            reps.append(
                Reproduction.at_least(
                    f"1{'cdef'[2 * i + j]}",
                    fig,
                    f"Higher goodput at ±{d} ms: PolyCC / {label}",
                    "1.82× .. 10.35×",
                    safe_div(g[("poly", d)], g[(bbr, d)]),
                    1.5,
                    ratio,
                    _V3_WHY if bbr == "bbr3" else "",
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
            aggregation effect §3.1 describes). At ±100 ms the propagation RTT is 1 ms (the
            simulator needs a positive one): samples over [1, 201] ms. No per-packet jitter is
            added. Runs of {duration};
            goodput over the whole run. PolyCC is `{POLY_BBR_CUBIC}`.
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
    x = np.asarray(inflight, dtype=float)
    if ts.size == 0:
        return math.nan
    x = np.where(np.isfinite(x), x, 0.0)
    csum = np.concatenate([[0.0], np.cumsum(x)])
    start = np.searchsorted(ts, ts - smooth_s + 1e-12, side="left")
    idx = np.arange(ts.size)
    smooth = (csum[idx + 1] - csum[start]) / (idx + 1 - start)
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
    points = {label: {"flows.0.cca": cca, "duration": duration} for label, cca in ccas.items()}
    res = ctx.sweep_labeled("bandwidth-halving", "bandwidth-halving.toml", points)
    conv: dict[str, float] = {}
    own: dict[str, float] = {}
    final: dict[str, float] = {}
    goodput_after: dict[str, float] = {}
    for label, rows in res.items():
        ts = ctx.timeseries("bandwidth-halving", rows[0])
        f = ts[ts["flow"] == "sender"]
        t, x = f["t_s"].to_numpy(), f["inflight_bytes"].to_numpy()
        conv[label] = convergence_time(t, x)
        # Diagnostic, not a claim: the level the flow settles at (mean of the last 5 s) and the
        # time to come within 10 % of that level by the same rule.
        level = float(f[f["t_s"] >= t[-1] - FINAL_S]["inflight_bytes"].mean())
        final[label] = level
        own[label] = convergence_time(t, x, target=level)
        late = f[f["t_s"] >= HALVING_AT_S]
        goodput_after[label] = float(late["goodput_mbps"].mean())

    # Diagnostic, not a claim: each CCA on a path that is 10 Mbit/s from the start (no halving),
    # to tell how far above the nominal new BDP its own steady state sits.
    steady_points = {
        label: {"flows.0.cca": cca, "duration": duration, "links.0.schedule.0.rate": "10Mbps"}
        for label, cca in ccas.items()
    }
    steady_res = ctx.sweep_labeled("bandwidth-constant", "bandwidth-halving.toml", steady_points)
    steady: dict[str, tuple[float, float, float]] = {}
    for label, rows in steady_res.items():
        ts = ctx.timeseries("bandwidth-constant", rows[0])
        f = ts[(ts["flow"] == "sender") & (ts["t_s"] >= HALVING_AT_S)]
        steady[label] = (
            float(f["inflight_bytes"].mean()) / NEW_BDP_BYTES,
            float(f["rtt_ms"].mean()),
            float(f["rtt_ms"].min()),
        )

    table = Table(
        [
            "CCA",
            "convergence time to ±10 % of the new BDP (s)",
            "final in-flight level / new BDP",
            "time to ±10 % of its own final level (s)",
            "goodput after the halving (Mbit/s)",
            "10 Mbit/s throughout: in-flight / new BDP, mean / min RTT (ms)",
        ]
    )
    for label in ccas:
        table.add(
            labels[label],
            fmt(conv[label], 2),
            fmt(final[label] / NEW_BDP_BYTES, 2),
            fmt(own[label], 2),
            goodput_after[label],
            f"{fmt(steady[label][0], 2)}, {fmt(steady[label][1], 1)} / {fmt(steady[label][2], 1)}",
        )
    fig = "Fig. 3(b)"
    own_ratio = {b: safe_div(own["poly"], own[b]) for b in ("bbr", "bbr3")}
    q1_ratio = safe_div(conv["poly-q1"], conv["bbr-q1"])
    budget_packets, budget_ms = v1_budget_floor(NEW_RATE_MBPS, tso_segs=2)
    q1_verdict = (
        "where both settle, PolyCC is faster, as in the paper"
        if q1_ratio <= 0.6
        else "where both settle, PolyCC is not faster than BBR v1"
    )
    conv_why = prose(
        f"""
        By the definition fixed beforehand neither BBR v1 nor PolyCC settles: both hold their
        bytes in flight at {fmt(final["bbr"] / NEW_BDP_BYTES, 2)}× and
        {fmt(final["poly"] / NEW_BDP_BYTES, 2)}× the nominal new BDP, at the edge of ±10 %, and
        the smoothed series crosses 1.10× at each probe. This is BBR v1's steady state on this
        path, not slow convergence and not an estimation error: on a path that is 10 Mbit/s
        from the start (last column) BBR v1 holds {fmt(steady["bbr"][0], 2)}× the nominal BDP
        with an RTT of {fmt(steady["bbr"][1], 1)} ms on average against
        {fmt(steady["bbr"][2], 1)} ms minimum, and its BtlBw never exceeds 10.000 Mbit/s
        (`tests/bbr.rs`, fixed-rate tests). The 1.2 ms of serialisation in the min RTT puts
        1.01× in flight with an empty queue. The gain cycle alone (5/4 for a round, 3/4 for a
        round, 1 for six) would add R/32 ≈ 3.2 ms of queue on average; the rest is Linux's
        quantization budget: the 3/4 phase (and DRAIN) stop as soon as in flight ≤
        `bbr_inflight(bw, 1)`, which is the BDP rounded up to packets plus 3 TSO bursts of 2
        segments (`bbr_min_tso_segs` above 1.2 Mbit/s), rounded up to an even count:
        {budget_packets:.1f} packets, {budget_ms:.1f} ms at 10 Mbit/s. The six 1.0 phases
        drain only the 1 % pacing margin (1 ms per round) of that, so the queue averages
        {fmt(steady["bbr"][1] - steady["bbr"][2], 1)} ms (bounded in the test by the sum of
        the two terms above and that sum less 6.1 ms of margin drain below). As a
        diagnostic, the rows with ns-3's one-segment quantum (budget 3 packets) sit at
        {fmt(final["bbr-q1"] / NEW_BDP_BYTES, 2)}× (BBR v1) and
        {fmt(final["poly-q1"] / NEW_BDP_BYTES, 2)}× (PolyCC) and converge in
        {fmt(conv["bbr-q1"], 2)} s and {fmt(conv["poly-q1"], 2)} s, a ratio of
        {fmt(q1_ratio, 2)}× ({q1_verdict}); that is not the Linux budget the paper's BBR has,
        so it does not decide the claim. The paper gives no buffer and no convergence definition, and we do
        not widen the band after the fact. BBR v1's own settling (to within ±10 % of its own
        final level) takes {fmt(own["bbr"], 1)} s instead of the paper's 2–4 s; by that
        diagnostic PolyCC settles in {fmt(own["poly"], 2)} s, {own_ratio["bbr"]:.2f}× BBR v1's
        and {own_ratio["bbr3"]:.2f}× BBR v3's time, in line with the paper's −54.1 % and
        −32.8 %, but that is not the criterion we fixed, so the claims are marked as not
        holding.
        """
    )
    reps = [
        Reproduction.at_most(
            "2a",
            fig,
            "Convergence time of PolyCC / BBR v1",
            "0.459× (−54.1 %)",
            safe_div(conv["poly"], conv["bbr"]),
            0.6,
            lambda v: f"{v:.2f}×",
            conv_why,
        ),
        Reproduction.at_most(
            "2b",
            fig,
            "Convergence time of PolyCC / BBR v3 (paper: BBR v2)",
            "0.672× (−32.8 %)",
            safe_div(conv["poly"], conv["bbr3"]),
            0.8,
            lambda v: f"{v:.2f}×",
            prose(
                """
                The paper compares with BBR v2; the simulator has BBR v3, whose bandwidth
                probing and loss/ECN response follow v2's design with tuned parameters. BBR v3
                itself settles (first column): it cruises with an empty queue, and its in
                flight is high only around its probes, whose UP phase lasts until the
                bandwidth has not grown for 3 rounds (draft-ietf-ccwg-bbr, BBRIsTimeToGoDown)
                and whose DOWN phase at 0.9 drains that queue over several rounds. The ratio is
                undefined because PolyCC, piloted by BBR v1, does not settle (see 2a).
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
            One flow, 20 Mbit/s and 100 ms base RTT, capacity halved to 10 Mbit/s at t = 5 s;
            drop-tail buffer 250 KB (one BDP at 20 Mbit/s; the paper does not give it); runs of
            {duration}, time series in 10 ms bins. Convergence time (defined before the runs):
            the bytes in flight, sampled every 10 ms and smoothed by a trailing {SMOOTH_S:.1f} s
            mean (one BBR gain cycle of 8 base RTTs, so its 1.25× / 0.75× probing averages out),
            must enter ±{BAND:.0%} of the new BDP (10 Mbit/s × 100 ms = {NEW_BDP_BYTES / 1e3:.0f}
            KB) and stay there for {HOLD_S:.0f} s; the time is from the halving to that entry.
            "–" means it never settled within the run. PolyCC is `{POLY_BBR_COPA}`. The last
            two columns are a diagnostic added after the first runs, not a claim: the level the
            bytes in flight settle at, and the time to come within ±10 % of that level by the
            same rule.
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


def _exp_mean_knob(ctx: Context) -> Section:
    weights = [0.0, 0.5, 1.0] if ctx.quick else [0.0, 0.25, 0.5, 0.75, 1.0]
    duration = "30s" if ctx.quick else "40s"
    ccas: dict[str, Any] = {
        f"poly w={w:g}": {
            "name": "poly",
            "pilot": "vegas",
            "copilots": ["cubic"],
            "fuse": "mean",
            "weights": [1.0 - w, w],
        }
        for w in weights
    }
    ccas["Vegas"] = "vegas"
    ccas["CUBIC"] = "cubic"
    points: dict[tuple[str, str], dict[str, Any]] = {}
    for label, cca in ccas.items():
        # Alone: the cross flow starts after the run ends.
        points[(label, "alone")] = {"flows.0.cca": cca, "flows.1.start": "1000s", "duration": duration}
        points[(label, "vs CUBIC")] = {"flows.0.cca": cca, "duration": duration}
    res = ctx.sweep_labeled("vegas-cubic-mean", "vegas-cubic-mean.toml", points)
    rtt = {k[0]: _first(v, "flow.poly.rtt_ms.p50") for k, v in res.items() if k[1] == "alone"}
    alone = {k[0]: _first(v, "flow.poly.goodput_mbps") for k, v in res.items() if k[1] == "alone"}
    share: dict[str, float] = {}
    for (label, mode), rows in res.items():
        if mode == "vs CUBIC":
            a, b = _first(rows, "flow.poly.goodput_mbps"), _first(rows, "flow.cross.goodput_mbps")
            share[label] = safe_div(a, a + b)

    table = Table(["flow", "alone: goodput (Mbit/s)", "alone: median RTT (ms)", "share against one CUBIC"])
    for label in ccas:
        table.add(label, alone[label], rtt[label], pct(share[label]))
    poly_labels = [f"poly w={w:g}" for w in weights]
    lo, hi = poly_labels[0], poly_labels[-1]
    reps = [
        Reproduction.at_most(
            "3a",
            "ours",
            "w = 0 (Vegas' window) keeps the queue short alone: median RTT / base RTT",
            "–",
            rtt[lo] / KNOB_BASE_RTT_MS,
            1.25,
            lambda v: f"{v:.2f}×",
        ),
        Reproduction.at_least(
            "3b",
            "ours",
            "w = 1 (CUBIC's window) competes with CUBIC: share of the link",
            "–",
            share[hi],
            0.35,
            pct,
        ),
        Reproduction.at_least(
            "3c",
            "ours",
            "The knob trades delay for share: share at w = 1 minus share at w = 0",
            "–",
            share[hi] - share[lo],
            0.15,
            pct,
        ),
    ]
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
            are the ends of the scale. The criteria are ours, fixed before the runs.
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
                {"" if monotone else "not "}monotone
                in w, and any CUBIC weight lets the window grow until the buffer overflows (the
                written-back mean restarts CUBIC's growth from the mean every ACK, and Vegas only
                subtracts one packet per RTT), so the low delay of w = 0 is lost as soon as w > 0.
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
