"""Janus (Zhou, Choffnes & Chowdhury, IEEE TMC 2018, seed text 004): application-aware switching
between a conservative (Vegas) and an aggressive (CUBIC) CCA, reproduced in the simulator.

Each `_exp_*` function runs one experiment (scenario files in scenarios/papers/janus/) and returns
its `Section`. The pass criteria are the paper's numbers with issue 19's tolerances, fixed in
`janus_criteria` before and independently of the results; every claim is measured over
`janus_criteria.SEEDS` scenario seeds. `ctx.quick` selects shortened versions (shorter runs, fewer
settings, two seeds) for the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from polycc.reproduce.common import (
    Context,
    Reproduction,
    Section,
    Table,
    fmt,
    judge_over_seeds,
    mbps,
    median,
    ms,
    num,
    pct,
    prose,
    ratio,
    safe_div,
    seconds,
    span,
)
from polycc.reproduce.janus_criteria import (
    BOUND_POINTS,
    CRIT_1A,
    CRIT_1B,
    CRIT_1C,
    CRIT_1D,
    CRIT_2A,
    CRIT_2B,
    CRIT_2C,
    CRIT_2D,
    CRIT_2E,
    CRIT_3A,
    CRIT_3B,
    CRIT_3C,
    CRIT_3D,
    CRIT_3E,
    CRIT_3F,
    CRIT_3G,
    CRIT_4A,
    CRIT_4B,
    CRIT_4C,
    CRIT_5A,
    CRIT_5B,
    CRIT_5C,
    CRIT_6A,
    CRIT_6B,
    CRIT_7A,
    CRIT_7B,
    CRIT_7C,
    CRIT_7D,
    CRIT_7E,
    CRIT_7F,
    GAMMA,
    JITTER_SUFFIX,
    PAYLOAD_SHARE,
    PREAMBLE,
    RMIN_MBPS,
    SEEDS,
    SEND_JITTER,
    SEND_JITTER_KNOB,
    closing,
)
from polycc.reproduce.janus_pages import exp_page_load
from polycc.reproduce.janus_rmin_sweep import exp_rmin_sweep
from polycc.reproduce.janus_video import exp_rebuffering
from polycc.reproduce.kernel_tcp import LINUX_CCA, kernel_tcp_flows
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, rate_mbps, size_text
from polycc.reproduce.timeseries import column as _col
from polycc.reproduce.timeseries import flow_mean as _mean

if TYPE_CHECKING:
    from polycc.api import RunResult

__all__ = ["GAMMA", "PREAMBLE", "TITLE", "closing", "experiments"]

TITLE = "Janus: application-aware switching between Vegas and CUBIC (IEEE TMC 2018)"

#: The overrides of the labelled knob rows: the send-time noise on every flow.
JITTER = {"flows.*.send_jitter": SEND_JITTER}


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        _exp_switching,
        _exp_mmf,
        _exp_web_delay,
        _exp_bulk,
        _exp_delay_increase,
        _exp_rmin,
        _exp_variants,
        exp_rebuffering,
        exp_page_load,
        exp_rmin_sweep,
    ]
    return [step(ctx) for step in steps]


def _seeds(ctx: Context) -> int:
    return 2 if ctx.quick else SEEDS


def _last(r: RunResult, flow: str, col: str, t: float) -> float:
    """The last finite value of `col` in bins starting before `t`."""
    _, v = _col(r, flow, col, 0.0, t)
    v = v[np.isfinite(v)]
    return float(v[-1]) if v.size else math.nan


def _flows(r: RunResult) -> list[str]:
    return [str(f["id"]) for f in r.summary["flows"]]


def _backlog_packets(r: RunResult, flow: str, t0: float, t1: float) -> float:
    """The flow's own packets in the bottleneck queue over [t0, t1): its wire rate times the
    queueing delay (mean RTT over the run's smallest RTT), in 1500-byte packets. A Vegas flow
    holds this between alpha = 2 and beta = 4."""
    rtt_min = min(float(f["rtt_ms"]["min"]) for f in r.summary["flows"] if f["rtt_ms"]["min"])
    queue_s = (_mean(r, flow, "rtt_ms", t0, t1) - rtt_min) / 1e3
    return _mean(r, flow, "throughput_mbps", t0, t1) * 1e6 / 8 / PACKET_BYTES * queue_s


def _frozen_since(r: RunResult, flows: Sequence[str], t0: float, t1: float) -> float:
    """The first time after which no flow's window changes until `t1` (NaN if one still
    changes in its last bin)."""
    last = t0
    for f in flows:
        t, w = _col(r, f, "cwnd_bytes", t0, t1)
        changed = t[1:][np.diff(w) != 0]
        if changed.size:
            last = max(last, float(changed[-1]))
    return last if last < t1 - 0.5 else math.nan


def _settle_time(
    r: RunResult,
    flows: Sequence[str],
    t0: float,
    t1: float,
    band: float,
    reference: dict[str, float] | None = None,
) -> float:
    """Seconds after `t0` from which every flow's 1-s mean goodput stays within `band` of its
    `reference` (default: its own mean over the last third of [t0, t1)); NaN if it never does."""
    final = reference or {f: _mean(r, f, "goodput_mbps", t1 - (t1 - t0) / 3, t1) for f in flows}
    whole_s = np.arange(math.floor(t0), math.ceil(t1))
    ok = np.ones(len(whole_s), dtype=bool)
    for f in flows:
        for k, s in enumerate(whole_s):
            m = _mean(r, f, "goodput_mbps", float(s), float(s) + 1)
            if not (abs(m - final[f]) <= band * final[f]):
                ok[k] = False
    # The first second after which all later seconds are within the band.
    for k in range(len(whole_s)):
        if ok[k:].all():
            return float(whole_s[k] - t0)
    return math.nan


def _time_to_reach(r: RunResult, flow: str, t0: float, t1: float, level: float) -> float:
    """Seconds from `t0` to the start of the first 1-s window (in whole bins, before `t1`) over
    which the flow's mean goodput is at least `level`; NaN if none."""
    t, v = _col(r, flow, "goodput_mbps", t0, t1)
    if t.size < 2:
        return math.nan
    per = max(1, round(1.0 / float(t[1] - t[0])))
    v = np.nan_to_num(v, nan=0.0)
    means = np.convolve(v, np.ones(per) / per, mode="valid")
    hit = np.flatnonzero(means >= level)
    return float(t[hit[0]] - t0) if hit.size else math.nan


def _two(v: float) -> str:
    """A ratio to two decimals ("0.55")."""
    return fmt(v, 2)


def _or_inf(x: float) -> float:
    """A time never reached (NaN) as infinitely late, for differences of times."""
    return math.inf if math.isnan(x) else x


def _signed_seconds(v: float) -> str:
    return "–" if math.isnan(v) else ("−∞" if v == -math.inf else "∞" if math.isinf(v) else f"{v:+.1f} s")


# ---------------------------------------------------------------------------------------------
# 1. Two-stage switching (§4.3, Fig. 6)


def _switching_setup(file: ScenarioFile) -> str:
    burst = file.flow("burst")
    return (
        f"One flow wanting {num(rate_mbps(file.flow('janus')['intent']['target_rate']))} Mbit/s on "
        f"{num(file.rate_mbps())} Mbit/s, RTT {num(file.rtt_ms())} ms, {size_text(file.buffer())} buffer "
        f"(the paper's defaults; Fig. 6 gives neither), {num(file.duration_s())} s; cross traffic: "
        f"unresponsive Poisson arrivals at {num(rate_mbps(burst['traffic']['rate']))} Mbit/s from "
        f"{num(file.start_s('burst'))} s to {num(file.stop_s('burst'))} s (the paper says only 'bursty'). "
        "The table gives the median over the seeds."
    )


#: Fig. 6's cross traffic, s (switching.toml's burst flow).
BURST = (6.0, 8.0)
#: A tau whose first Algorithm 1 interval (tau·gamma/(1 − gamma) = 250 RTTs, 15 s at 60 ms) outlasts
#: the switching run: R' is never lowered (1c's diagnostic).
NO_REDUCTION_TAU = 1000.0


@dataclass(frozen=True)
class Switching:
    """What Fig. 6 shows of one run of `switching.toml` (flow "janus")."""

    #: When the first conservative stage began, s.
    first_conservative: float
    aggressive_in_burst: bool
    #: When the flow was conservative again after the burst, s (NaN: never).
    back: float
    #: Whether it stayed conservative from the next whole second on.
    stays: bool
    #: Algorithm 1's lowest R' during the burst, Mbit/s.
    lowest_target: float
    goodput_after: float
    rtt_after: float
    #: When it first turned aggressive after the burst began, s (NaN: never).
    aggressive_at: float = math.nan


def switching_outcome(r: RunResult, burst: tuple[float, float] = BURST) -> Switching:
    start, end = burst
    t, stage = _col(r, "janus", "cc_stage", 0.0, 15.0)
    conservative = t[stage == 0.0]
    after = t[(t >= end) & (stage == 0.0)]
    back = float(after[0]) if after.size else math.nan
    in_burst = (t >= start) & (t < end + 1.0)
    aggressive = t[(t >= start) & (stage == 1.0)]
    targets = _col(r, "janus", "cc_target_rate_mbps", start, end + 2.0)[1]
    return Switching(
        first_conservative=float(conservative[0]) if conservative.size else math.nan,
        aggressive_in_burst=bool((stage[in_burst] == 1.0).any()),
        back=back,
        stays=bool((stage[t >= math.ceil(back)] == 0.0).all()) if after.size else False,
        lowest_target=float(np.nanmin(targets)) if np.isfinite(targets).any() else math.nan,
        goodput_after=_mean(r, "janus", "goodput_mbps", 11.0, 15.0),
        rtt_after=_mean(r, "janus", "rtt_ms", 11.0, 15.0),
        aggressive_at=float(aggressive[0]) if aggressive.size else math.nan,
    )


def path_rtt_ms(file: ScenarioFile) -> float:
    """The path's RTT with nothing queued: propagation plus one full packet's serialisation."""
    return file.rtt_ms() + PACKET_BYTES * 8 / (file.rate_mbps() * 1e3)


def _exp_switching(ctx: Context) -> Section:
    runs = ctx.run_seeds("switching", "switching.toml", seeds=_seeds(ctx))
    file = ctx.scenario_file("switching.toml")
    burst = (file.start_s("burst"), file.stop_s("burst"))
    path_ms = path_rtt_ms(file)
    serialisation_ms = path_ms - file.rtt_ms()
    outs = [switching_outcome(r, burst) for r in runs]
    first = [o.first_conservative for o in outs]
    turned = [o.aggressive_at - burst[0] for o in outs]
    back = [o.back - burst[1] if o.stays else math.nan for o in outs]
    queue = [o.rtt_after - path_ms for o in outs]
    lowest = median([o.lowest_target for o in outs])
    # Diagnostic: Algorithm 1 kept from lowering R' during the burst (its first interval,
    # tau·gamma/(1 − gamma) RTTs, longer than the run), so the flow returns at P_avg > R.
    back_at_r: list[float] = []
    if not ctx.quick:
        held = ctx.run_seeds(
            f"switching-tau{num(NO_REDUCTION_TAU)}",
            "switching.toml",
            {"flows.0.cca": {"name": "janus", "tau": NO_REDUCTION_TAU}},
            seeds=len(runs),
        )
        back_at_r = [
            o.back - burst[1] if o.stays else math.nan for o in (switching_outcome(r, burst) for r in held)
        ]
    table = Table(["quantity", f"median of {len(runs)} seeds"])
    table.add("first conservative stage at", seconds(median(first)))
    table.add(
        f"aggressive from (cross traffic {num(burst[0])}–{num(burst[1])} s)",
        seconds(median(turned) + burst[0]),
    )
    table.add("back to conservative (and staying) at", seconds(median(back) + burst[1]))
    table.add("R' lowest during the burst", mbps(lowest))
    table.add("goodput 11–15 s", mbps(median([o.goodput_after for o in outs])))
    table.add(
        f"RTT 11–15 s (path: {num(file.rtt_ms())} ms + {num(serialisation_ms)} ms serialisation)",
        ms(median([o.rtt_after for o in outs])),
    )
    fig = "Fig. 6"
    secs2 = lambda v: seconds(v, 2)  # noqa: E731
    reps = [
        judge_over_seeds(
            "1a",
            fig,
            "a new flow turns conservative once its sample throughput reaches R "
            f"({num(rate_mbps(file.flow('janus')['intent']['target_rate']))} Mbit/s; s from its start)",
            "around 0.7 s",
            first,
            CRIT_1A,
            secs2,
            prose(
                f"""
                Ours is faster: rate control sets ssthresh = R·D_p at the first RTT sample, so slow
                start carries the window straight to the target; the paper's Linux CUBIC started
                with HyStart and delayed ACKs. Before {num(burst[0])} s nothing in the run draws
                from the seed (the Poisson cross traffic starts then), so this is one run.
                """
            ),
        ),
        judge_over_seeds(
            "1b",
            fig,
            f"bursty cross traffic ({num(burst[0])}–{num(burst[1])} s) drops P_avg below (1 − gamma)·R: "
            "Janus turns aggressive during it (s from the burst's start)",
            f"aggressive from within {num(burst[0])}–{num(burst[1])} s",
            turned,
            CRIT_1B,
            secs2,
        ),
        judge_over_seeds(
            "1c",
            fig,
            "after the burst, back to conservative once P_avg > R, and stays "
            f"(s after the burst ends at {num(burst[1])} s)",
            f"around 10 s, i.e. {num(10.0 - burst[1])} s after",
            back,
            CRIT_1C,
            secs2,
            prose(
                f"""
                Ours returns sooner: Algorithm 1 lowered R' to {mbps(lowest)} (median) during the
                burst, and P_avg passes the lowered target soon after the burst ends; the paper's
                trace shows no R' (Fig. 6 illustrates §4.3's switching, before §5's Algorithm 1
                is introduced, so its flow may have returned only at R).
                """
            )
            + (
                " "
                + prose(
                    f"""
                    Diagnostic (runs switching-tau{num(NO_REDUCTION_TAU)}, not counted): with
                    Algorithm 1's first interval stretched beyond the burst (tau =
                    {num(NO_REDUCTION_TAU)}), R' stays at R and the flow is back
                    {seconds(median(back_at_r), 2)} after the burst (median), still faster than the
                    paper's 2 s, in which P took about 1 s after the burst to reach its bottom
                    (EWMA smoothing, §4.3) before it climbed back to R.
                    """
                )
                if back_at_r
                else ""
            )
            + " The values fall on the scenario's 50-ms bins: two modes one bin apart.",
        ),
        judge_over_seeds(
            "1d",
            f"{fig}, §4.4",
            "buffer clearing: no standing queue in the conservative stage after the switch "
            f"(RTT 11–15 s above the {num(path_ms)} ms path)",
            "Vegas alone keeps the aggressive stage's queue",
            queue,
            CRIT_1D,
            ms,
        ),
    ]
    return Section(
        "1",
        "Two-stage switching",
        fig,
        _switching_setup(file),
        [ctx.rel(ctx.scenario("switching.toml"))],
        "switching*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 2. Max-min fairness (§8.1, Figs. 11-12)


def mmf_shares(capacity: float, demands: dict[str, float]) -> dict[str, float]:
    """Max-min fair allocation of `capacity` to `demands` (progressive filling)."""
    left = dict(demands)
    share: dict[str, float] = {}
    cap = capacity
    while left:
        fair = cap / len(left)
        sat = {k: d for k, d in left.items() if d <= fair}
        if not sat:
            for k in left:
                share[k] = fair
            break
        for k, d in sat.items():
            share[k] = d
            cap -= d
            del left[k]
    return share


#: The window over which section 2 compares throughput with the max-min fair shares (all four
#: flows present since 30 s; the paper's Figs. 11-12 settle within 10 s).
MMF_WINDOW = (40.0, 60.0)


def mmf_targets(file: ScenarioFile) -> dict[str, float]:
    """Each flow's target rate (Mbit/s) in a max-min scenario file, by flow id."""
    return {str(f["id"]): rate_mbps(f["intent"]["target_rate"]) for f in file.doc["flows"]}


def mmf_deviation(
    r: RunResult, reference: dict[str, float], window: tuple[float, float] = MMF_WINDOW
) -> float:
    """The largest relative deviation of a flow's mean throughput over `window` from its
    `reference` share (Mbit/s, by flow id)."""
    return max(abs(_mean(r, f, "throughput_mbps", *window) - ref) / ref for f, ref in reference.items())


def _allocation(shares: Sequence[float]) -> str:
    """Shares as prose, a run of three or more equal ones as "v × n" ("7.5, 7.5, 6, 4", "5.33 × 3, 4")."""
    runs: list[list[float]] = []
    for s in shares:
        if runs and math.isclose(runs[-1][0], s):
            runs[-1].append(s)
        else:
            runs.append([s])
    words = [f"{round(r[0], 2):g}" for r in runs]
    return ", ".join(
        f"{w} × {len(r)}" if len(r) >= 3 else ", ".join([w] * len(r))
        for w, r in zip(words, runs, strict=True)
    )


def _mmf_setup(file: ScenarioFile, other: ScenarioFile, window: tuple[float, float]) -> str:
    """Section 2's setup from the two scenario files (the same flows on two capacities)."""
    targets = mmf_targets(file)
    caps = [file.rate_mbps(), other.rate_mbps()]
    allocation = "; ".join(
        f"{num(c)} Mbit/s: {_allocation([mmf_shares(c, targets)[f] for f in targets])}" for c in caps
    )
    return (
        f"Flows wanting {', '.join(num(t) for t in targets.values())} Mbit/s start at "
        f"{', '.join(num(file.start_s(f)) for f in targets)} s on {num(caps[0])} (and {num(caps[1])}) "
        f"Mbit/s, RTT {num(file.rtt_ms())} ms, {size_text(file.buffer())} buffer, and leave together at "
        f"{num(file.duration_s())} s. Throughput (wire bytes, as Janus measures P) averaged over "
        f"{num(window[0])}–{num(window[1])} s against the analytic max-min fair allocation ({allocation}); "
        "CUBIC and PCC-tp (pcc-allegro) against the equal share. The paper's flow start times are not "
        "given exactly (the last at 32 s)."
    )


def _baseline(ctx: Context, scenario: str, cca: str) -> dict[str, Any]:
    """Overrides running every flow of `scenario` with `cca`: CUBIC as the paper's testbed ran it,
    the Linux kernel's (issue 19), without the flows' intents, which the kernel's controllers do
    not take; Janus and PCC as polycc's, on the default stack."""
    if cca in LINUX_CCA:
        return kernel_tcp_flows(ctx.scenario_file(scenario).doc["flows"], cca)
    return {"flows.*.cca": cca}


def _exp_mmf(ctx: Context) -> Section:
    # The same four flows on two capacities (the scenario files'), `big` and `small`.
    big, small = (ctx.scenario_file(f).rate_mbps() for f in ("mmf-25.toml", "mmf-20.toml"))
    targets = mmf_targets(ctx.scenario_file("mmf-25.toml"))
    settings: list[tuple[str, str, float, Any]] = [("janus", "mmf-25.toml", big, "janus")]
    if not ctx.quick:
        settings += [
            ("janus", "mmf-20.toml", small, "janus"),
            ("cubic", "mmf-25.toml", big, "cubic"),
            ("pcc-tp", "mmf-25.toml", big, "pcc-allegro"),
        ]
    window = MMF_WINDOW
    n = _seeds(ctx)
    table = Table(
        [
            "protocol",
            "capacity",
            *[f"{f} (MMF)" for f in targets],
            "largest deviation",
            "settles after 30 s",
        ]
    )
    dev: dict[tuple[str, float], list[float]] = {}
    dev_j: dict[float, list[float]] = {}  # Janus with the knob, per capacity
    settle: dict[tuple[str, float], list[float]] = {}
    first_share: dict[tuple[str, float], list[float]] = {}
    first = next(iter(targets))  # the flow that starts first (r10)
    for label, scen, cap, cca in settings:
        runs = ctx.run_seeds(f"mmf-{label}-{cap:g}", scen, _baseline(ctx, scen, cca), seeds=n)
        # CUBIC and PCC ignore the targets: compare them with the equal share, as the paper does.
        ref = mmf_shares(cap, targets) if label == "janus" else {f: cap / len(targets) for f in targets}
        got = {f: median([_mean(r, f, "throughput_mbps", *window) for r in runs]) for f in targets}
        dev[(label, cap)] = [mmf_deviation(r, ref, window) for r in runs]
        if label == "janus":
            runs_j = ctx.run_seeds(
                f"mmf-{label}-{cap:g}-jitter", scen, {"flows.*.cca": cca, **JITTER}, seeds=n
            )
            dev_j[cap] = [mmf_deviation(r, ref, window) for r in runs_j]
        settle[(label, cap)] = [_settle_time(r, list(targets), 30.0, 60.0, 0.2) for r in runs]
        first_share[(label, cap)] = [_mean(r, first, "throughput_mbps", *window) / cap for r in runs]
        table.add(
            label,
            f"{cap:g} Mbit/s",
            *[f"{got[f]:.2f} ({ref[f]:.2f})" for f in targets],
            pct(median(dev[(label, cap)])),
            seconds(median(settle[(label, cap)])),
        )
    fig = "Figs. 11–12"
    why_mmf = prose(
        f"""
        The max-min argument (§6.1) rests on the conservative CCA sharing fairly. Each switch to
        the conservative stage hands Vegas the buffer-clearing window P_avg·D_p as both cwnd and
        ssthresh, so Vegas continues in congestion avoidance from the flow's share; with the
        aggressive stage's higher ssthresh kept across the switch, Vegas slow-started from the
        cleared window, overshot, and the flows froze 19.5 % (25 Mbit/s) and 26.7 % (20 Mbit/s)
        off their shares. What remains is by design: rate control lets a satisfied flow run
        anywhere from R up to (1 + eps)·R (§4.4), and among the unsatisfied flows Vegas holds
        2–4 packets each in the queue, so flows with equal RTTs may settle apart within that
        band while each stays conservative above (1 − gamma)·R'. Where in the band an exact run
        freezes is a knife-edge: counting QUIC's UDP payload instead of whole packets, 2 % less
        (issue 19), moved this run across the 10 % bound. With {SEND_JITTER_KNOB} each seed freezes at
        another point of it: the largest deviation {span(dev_j[big], pct)} over the seeds (2a-jitter).
        """
    )
    claim_2a = (
        f"on {num(big)} Mbit/s every Janus flow gets its max-min fair share (largest deviation, "
        f"{num(window[0])}–{num(window[1])} s)"
    )
    reps = [
        judge_over_seeds("2a", fig, claim_2a, "closely matches", dev[("janus", big)], CRIT_2A, pct, why_mmf),
        judge_over_seeds(
            "2a" + JITTER_SUFFIX,
            fig,
            claim_2a,
            "closely matches",
            dev_j[big],
            CRIT_2A,
            pct,
            knob=SEND_JITTER_KNOB,
        ),
    ]
    if ("janus", small) in dev:
        claim_2b = f"on {num(small)} Mbit/s every Janus flow gets its max-min fair share (largest deviation)"
        reps += [
            judge_over_seeds(
                "2b",
                fig,
                claim_2b,
                "closely matches",
                dev[("janus", small)],
                CRIT_2B,
                pct,
                f"As 2a; here the three unsatisfied flows share the {num(small - min(targets.values()))} "
                f"Mbit/s the {num(min(targets.values()))} Mbit/s flow leaves.",
            ),
            judge_over_seeds(
                "2b" + JITTER_SUFFIX,
                fig,
                claim_2b,
                "closely matches",
                dev_j[small],
                CRIT_2B,
                pct,
                knob=SEND_JITTER_KNOB,
            ),
        ]
    if ("cubic", big) in settle:
        j, c, p = (settle[(k, big)] for k in ("janus", "cubic", "pcc-tp"))
        # Janus' settling time minus the faster of CUBIC's and PCC-tp's; a run that never settles
        # is infinitely slow.
        faster = [
            x - min(_or_inf(y), _or_inf(z)) if not math.isnan(x) else math.nan
            for x, y, z in zip(j, c, p, strict=True)
        ]
        reps.append(
            judge_over_seeds(
                "2c",
                "Fig. 11",
                "Janus settles fastest after the last flow joins: its settling time minus the faster "
                "of CUBIC's and PCC-tp's (every flow's 1-s goodput within 20 % of its final mean)",
                "fastest (CUBIC almost 20 s)",
                faster,
                CRIT_2C,
                _signed_seconds,
                prose(
                    f"""
                    Janus {seconds(median(j))}, CUBIC {seconds(median(c))}, PCC-tp {seconds(median(p))}
                    (medians; PCC-tp's runs that never settle count as infinitely slow). Janus'
                    three earlier flows are already at their final rates when the 4 Mbit/s flow
                    joins at 30 s, and it reaches its target within a second (rate control sets
                    ssthresh = R·D_p); CUBIC takes that long to redistribute among all four.
                    """
                ),
            )
        )
        reps.append(
            judge_over_seeds(
                "2d",
                "Fig. 11(c)",
                f"PCC-tp: the first flow takes over 70 % of the link ({first}'s throughput over "
                f"{num(big)} Mbit/s, {num(window[0])}–{num(window[1])} s)",
                "over 70 %",
                first_share[("pcc-tp", big)],
                CRIT_2D,
                pct,
            )
        )
        reps.append(
            judge_over_seeds(
                "2e",
                "Fig. 11(b)",
                "CUBIC settles slowly after the last flow joins (s, as 2c)",
                "almost 20 s",
                c,
                CRIT_2E,
                seconds,
            )
        )
    return Section(
        "2",
        "Max-min fair shares of four bandwidth-guarantee flows",
        fig,
        _mmf_setup(ctx.scenario_file("mmf-25.toml"), ctx.scenario_file("mmf-20.toml"), window)
        + " The table gives the median over the seeds.",
        [ctx.rel(ctx.scenario("mmf-25.toml")), ctx.rel(ctx.scenario("mmf-20.toml"))],
        "mmf-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 3. Delay-sensitive web flows beside a long flow (§8.2.1, Fig. 13)

#: PCC-rtt's long flow alone has finished its start (doubling past the link rate, draining what
#: that queued) by this time, s: its queue is empty from about 6 s (pcc_latency.rs, same link).
PCC_RTT_STARTED_S = 15.0


def _exp_web_delay(ctx: Context) -> Section:
    settings: dict[str, dict[str, Any]] = {
        "Janus-12": {"flows.*.cca": "janus"},
        "Janus-0": {"flows.*.cca": "janus", "flows.0.intent": {"class": "bulk"}},
        "CUBIC": _baseline(ctx, "web-delay.toml", "cubic"),
    }
    if not ctx.quick:
        settings["PCC-tp"] = {"flows.*.cca": "pcc-allegro"}
        settings["PCC-rtt"] = {"flows.*.cca": {"name": "pcc-allegro", "utility": "allegro-latency"}}
    duration = 30.0 if ctx.quick else 60.0
    link = ctx.scenario_file("web-delay.toml").rate_mbps()
    target = rate_mbps(ctx.scenario_file("web-delay.toml").flow("long")["intent"]["target_rate"])
    n = _seeds(ctx)
    p95: dict[str, list[float]] = {}
    util: dict[str, list[float]] = {}
    queue: dict[str, list[float]] = {}
    above: list[float] = []  # PCC-rtt: share of the run its sending rate exceeds the link rate
    table = Table(
        [
            "protocol",
            "web flows: p95 queueing delay",
            f"long flow: share of {num(link)} Mbit/s",
            "bottleneck queue (median)",
            "web transfers",
        ]
    )
    for label, o in settings.items():
        runs = ctx.run_seeds(
            f"web-{label.lower()}", "web-delay.toml", {**o, "duration": f"{duration:g}s"}, seeds=n
        )
        p95[label], util[label], queue[label] = [], [], []
        transfers = []
        for r in runs:
            flows = {f["id"]: f for f in r.summary["flows"]}
            p95[label].append(float(flows["web"]["queue_delay_ms"]["p95"]))
            util[label].append(float(flows["long"]["goodput_mbps"]) / link)
            q = (
                r.links["queue_delay_ms"].to_numpy(dtype=float)
                if "queue_delay_ms" in r.links
                else np.array([])
            )
            q = q[np.isfinite(q)]
            queue[label].append(float(np.median(q)) if q.size else math.nan)
            transfers.append(float(flows["web"]["transfers_completed"]))
            if label == "PCC-rtt":
                _, rate = _col(r, "long", "cc_rate_mbps", 0.0, duration)
                rate = rate[np.isfinite(rate)]
                above.append(float(np.mean(rate > link)) if rate.size else math.nan)
        table.add(
            label,
            ms(median(p95[label])),
            pct(median(util[label])),
            ms(median(queue[label])),
            fmt(median(transfers), 0),
        )
    web = ctx.scenario_file("web-delay.toml")
    # The buffer's delay when full: its packets at the link rate.
    full_buffer_ms = web.buffer_bytes() * 8 / (link * 1e3)
    alone_web = math.nan  # Janus' web flow with no long flow (diagnostic)
    if not ctx.quick:
        # The long flow starts at the end of the run, so the web flow has the link to itself.
        o = {**settings["Janus-12"], "duration": f"{duration:g}s", "flows.0.start": f"{duration:g}s"}
        alone = ctx.run("web-janus-alone", "web-delay.toml", o)
        alone_web = float({f["id"]: f for f in alone.summary["flows"]}["web"]["queue_delay_ms"]["p95"])
    # PCC-rtt's long flow with no web flow (diagnostic): mean queue over the run and from
    # PCC_RTT_STARTED_S, and its share of the link.
    alone_queue = alone_steady = alone_util = math.nan
    if "PCC-rtt" in settings:
        # The web flow starts at the end of the run, so the long flow has the link to itself.
        o = {**settings["PCC-rtt"], "duration": f"{duration:g}s", "flows.1.start": f"{duration:g}s"}
        r = ctx.run("web-pcc-rtt-alone", "web-delay.toml", o)
        flows = {f["id"]: f for f in r.summary["flows"]}
        alone_queue = float(flows["long"]["queue_delay_ms"]["mean"])
        alone_util = float(flows["long"]["goodput_mbps"]) / link
        lt = r.links["t_s"].to_numpy(dtype=float)
        lq = r.links["queue_delay_ms"].to_numpy(dtype=float)
        after = lq[(lt >= PCC_RTT_STARTED_S) & np.isfinite(lq)]
        alone_steady = float(np.mean(after)) if after.size else math.nan

    def ratios(a: str, b: str) -> list[float]:
        return [safe_div(x, y) for x, y in zip(p95[a], p95[b], strict=True)]

    fig = "Fig. 13"
    reps = [
        judge_over_seeds(
            "3a",
            fig,
            "web flows' p95 queueing delay: CUBIC / Janus-12",
            "almost an order of magnitude",
            ratios("CUBIC", "Janus-12"),
            CRIT_3A,
            ratio,
        ),
        judge_over_seeds(
            "3b",
            fig,
            "web flows' p95 queueing delay: CUBIC / Janus-0",
            "almost an order of magnitude",
            ratios("CUBIC", "Janus-0"),
            CRIT_3B,
            ratio,
            prose(
                f"""
                CUBIC's p95, {ms(median(p95["CUBIC"]))}, is the delay of the full
                {size_text(web.buffer())} buffer ({ms(full_buffer_ms)} at {num(link)} Mbit/s), so
                ×1.5 of 10× asks Janus' web p95 to be at most
                {ms(median(p95["CUBIC"]) / CRIT_3B.lo)}. Beside Janus-0's long flow, a
                conservative Vegas flow that fills the link ({pct(median(util["Janus-0"]))}) and keeps
                its 2–4 packets queued (median queue {ms(median(queue["Janus-0"]))}), each 100 KB
                transfer queues behind that window, which Vegas shrinks by one packet an RTT:
                {ms(median(p95["Janus-0"]))}; beside Janus-12's long flow, held at 12–13.2 Mbit/s by
                rate control, {ms(median(p95["Janus-12"]))}.
                """
            )
            + (
                f" Diagnostic (run web-janus-alone, not counted): with no long flow the web "
                f"transfers' p95 is {ms(alone_web)}."
                if not math.isnan(alone_web)
                else ""
            ),
        ),
        judge_over_seeds(
            "3c",
            fig,
            "the bulk background flow (Janus-0) keeps over 90 % of the link",
            "over 90 %",
            util["Janus-0"],
            CRIT_3C,
            pct,
        ),
        judge_over_seeds(
            "3d",
            fig,
            f"the {num(target)} Mbit/s background flow (Janus-12) is satisfied (goodput over its target)",
            "satisfied",
            [u * link / target for u in util["Janus-12"]],
            CRIT_3D,
            pct,
        ),
    ]
    if "PCC-rtt" in p95:
        reps.append(
            judge_over_seeds(
                "3e",
                fig,
                "PCC-tp's web delay over Janus-12's",
                "nearly 5×",
                ratios("PCC-tp", "Janus-12"),
                CRIT_3E,
                ratio,
                f"PCC-tp's web p95 is the full buffer ({ms(median(p95['PCC-tp']))}) in every seed, as "
                f"CUBIC's; the paper's 5× puts its PCC-tp at about half its CUBIC's delay.",
            )
        )
        reps.append(
            judge_over_seeds(
                "3f",
                fig,
                "PCC-rtt gives up background throughput (long flow's share of the link)",
                "about 73 %",
                util["PCC-rtt"],
                CRIT_3F,
                pct,
                prose(
                    f"""
                    Not reproduced; a property of PCC's latency utility on a FIFO link shared
                    with bursty flows rather than of Janus. pcc-allegro with Allegro's latency
                    utility (§4.4.1, utility = "allegro-latency") keeps a median bottleneck queue
                    of {ms(median(queue["PCC-rtt"]))} over the run (PCC-tp
                    {ms(median(queue["PCC-tp"]))}, CUBIC {ms(median(queue["CUBIC"]))}; medians over the
                    seeds) and sends above the {num(link)} Mbit/s link rate {pct(median(above))} of
                    the run, but it gives up no throughput and the web p95 is
                    {ms(median(p95["PCC-rtt"]))}. Two defects of ours were found and fixed on the
                    way. (1) The paper prints the RTT factor as the bare ratio RTT_(n−1)/RTT_n,
                    too shallow to stop a trial 1 % above the rate while a queue stands; the
                    authors' code applies Sigmoid_10(1 − RTT_(n−1)/RTT_n), which we use (with the
                    bare ratio this row read 92.6 % and a 158.9 ms median queue). (2) Issue 19:
                    taken between consecutive MIs' mean RTTs, the factor judged the previous
                    MI's rate as much as this one's, so in half of the randomized trials (orders
                    + − + − and − + − +) the second pair's trials saw the same RTT change and the
                    higher rate won: inconclusive while the queue grew. The factor is now the RTT
                    change over the MI itself (unit test
                    rtt_factor_judges_each_trial_by_its_own_rate; before this row read 92.1 %, a
                    48.8 ms median queue and a 159.7 ms web p95). Diagnostic: the same long flow
                    alone on the link (web flow never started, seed 1) keeps a mean queueing
                    delay of {ms(alone_queue)} over the run, {ms(alone_steady)} from
                    {PCC_RTT_STARTED_S:g} s, at {pct(alone_util)} of the link. What is left
                    here: the long flow's start (doubling past the link rate, then trials at
                    2–3 % above it) keeps a queue of over 100 ms until about 8 s, which the first
                    web transfers meet; every 2 s a web transfer (100 KB sent by PCC's doubling
                    start) lifts the RTT by tens of ms within one monitor interval, far more
                    than the 1–5 % trials change it, so the trials it overlaps decide at random
                    and now and then raise the rate over a standing queue (seed 1: 33–38 s, up
                    to 134 ms, read by hand); and a long flow at {pct(median(util["PCC-rtt"]))} of
                    the link leaves each transfer to
                    queue behind it, where Janus-12's rate control leaves 12–13.2 Mbit/s. The
                    paper's PCC-rtt gave up throughput (73 %); ours does not. Allegro proposes
                    the latency utility for fair-queued links, where none of these arises.
                    """
                ),
            )
        )
        reps.append(
            judge_over_seeds(
                "3g",
                fig,
                "PCC-rtt's web delay is almost the same as Janus-12's (PCC-rtt / Janus-12)",
                "almost the same",
                ratios("PCC-rtt", "Janus-12"),
                CRIT_3G,
                ratio,
                "As 3f: the long flow's start-up queue, the web transfers' RTT swings in its "
                f"trials, and a long flow at {pct(median(util['PCC-rtt']))} of the link.",
            )
        )
    return Section(
        "3",
        "Delay-sensitive web flows beside a long flow",
        fig,
        f"100 KB transfers every 2 s (periodic, from 5 s) beside one long flow on {num(link)} Mbit/s, RTT "
        f"60 ms, 200-packet buffer, {duration:g} s. Both flows run the protocol of the row (the paper does "
        "not say what the web flows ran); Janus' web flows are delay-sensitive, its long flow wants "
        f"{num(target)} Mbit/s (Janus-12) or is bulk (Janus-0). Queueing delay is the bottleneck sojourn "
        "of the web flows' packets, p95 over the run. The table gives the median over the seeds.",
        [ctx.rel(ctx.scenario("web-delay.toml"))],
        "web-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 4. Bulk flows (§8.3, Figs. 15-16)


def _deviation(r: RunResult) -> float:
    g = [float(f["goodput_mbps"]) for f in r.summary["flows"]]
    return max(g) - min(g)


def _exp_bulk(ctx: Context) -> Section:
    n = _seeds(ctx)
    link = ctx.scenario_file("bulk-mix.toml").rate_mbps()
    share = rate_mbps(ctx.scenario_file("bulk-mix.toml").flow("bg")["intent"]["target_rate"])
    mixes = ctx.run_seeds("bulk-mix", "bulk-mix.toml", seeds=n)
    mixes_j = ctx.run_seeds("bulk-mix-jitter", "bulk-mix.toml", JITTER, seeds=n)

    def slowest_newcomer(r: RunResult) -> float:
        return min(_mean(r, f, "goodput_mbps", 25.0, 40.0) for f in _flows(r) if f.startswith("bg"))

    mix = mixes[0]  # the notes' numbers: every seed gives this run (the claims check it)
    bg = [f for f in _flows(mix) if f.startswith("bg")]
    bg_mean = float(np.mean([_mean(mix, f, "goodput_mbps", 25.0, 40.0) for f in bg]))
    bg_slowest = slowest_newcomer(mix)
    bulk_during = _mean(mix, "bulk", "goodput_mbps", 25.0, 40.0)
    bulk_after = [_mean(r, "bulk", "goodput_mbps", 50.0, 60.0) for r in mixes]
    queue_during = _mean(mix, "bulk", "rtt_ms", 25.0, 40.0) - 60.0
    dp_during = _last(mix, "bulk", "cc_dp_ms", 40.0)
    # Eq. 1's correction at the bulk flow's rate: Q_avg = 4 packets of 1500 bytes (§7.2).
    q_avg_delay = safe_div(4 * PACKET_BYTES * 8 / 1e3, bulk_during)
    table = Table(["quantity", "value (seed 1)", f"with {SEND_JITTER_KNOB} (median of {n} seeds)"])
    mix_j = {
        "mean": median(
            [float(np.mean([_mean(r, f, "goodput_mbps", 25.0, 40.0) for f in bg])) for r in mixes_j]
        ),
        "slowest": median([slowest_newcomer(r) for r in mixes_j]),
        "bulk": median([_mean(r, "bulk", "goodput_mbps", 25.0, 40.0) for r in mixes_j]),
        "after": median([_mean(r, "bulk", "goodput_mbps", 50.0, 60.0) for r in mixes_j]),
        "queue": median([_mean(r, "bulk", "rtt_ms", 25.0, 40.0) - 60.0 for r in mixes_j]),
    }
    table.add(f"Fig. 15: each {num(share)} Mbit/s flow, 25–40 s (mean)", mbps(bg_mean), mbps(mix_j["mean"]))
    table.add(f"Fig. 15: slowest {num(share)} Mbit/s flow, 25–40 s", mbps(bg_slowest), mbps(mix_j["slowest"]))
    table.add("Fig. 15: bulk flow, 25–40 s", mbps(bulk_during), mbps(mix_j["bulk"]))
    table.add("Fig. 15: bulk flow after the others left, 50–60 s", mbps(bulk_after[0]), mbps(mix_j["after"]))
    table.add(
        "Fig. 15: standing queue 25–40 s (bulk flow's RTT − 60 ms)", ms(queue_during), ms(mix_j["queue"])
    )
    table.add("Fig. 15: bulk flow's D_p at 40 s (true 60 ms)", ms(dp_during), "")
    devs: dict[str, list[float]] = {}
    devs_j: dict[str, list[float]] = {}
    bulks = ctx.run_seeds("all-bulk-janus", "all-bulk.toml", {"flows.*.cca": "janus"}, seeds=n)
    bulk = bulks[0]
    bulk_flows = _flows(bulk)
    bulk_end = float(bulk.summary["duration_s"])
    frozen = _frozen_since(bulk, bulk_flows, 0.0, bulk_end)
    backlogs = [_backlog_packets(bulk, f, bulk_end / 2, bulk_end) for f in bulk_flows]
    targets = [_last(bulk, f, "cc_target_rate_mbps", bulk_end) for f in bulk_flows]
    p_avgs = [_last(bulk, f, "cc_p_avg_mbps", bulk_end) for f in bulk_flows]
    for cca in ["janus", "cubic"]:
        runs = (
            bulks
            if cca == "janus"
            else ctx.run_seeds(
                f"all-bulk-{cca}", "all-bulk.toml", _baseline(ctx, "all-bulk.toml", cca), seeds=n
            )
        )
        # The Linux model takes no host send-time noise: kernel CUBIC's knob rows are its runs.
        runs_j = (
            runs
            if cca in LINUX_CCA
            else ctx.run_seeds(
                f"all-bulk-{cca}-jitter", "all-bulk.toml", {"flows.*.cca": cca, **JITTER}, seeds=n
            )
        )
        devs[cca] = [_deviation(r) for r in runs]
        devs_j[cca] = [_deviation(r) for r in runs_j]
        table.add(
            f"Fig. 16: throughput deviation (max − min over the run), {cca}",
            mbps(devs[cca][0]),
            mbps(median(devs_j[cca])),
        )
        rtt = [
            float(np.mean([float(f["rtt_ms"]["mean"]) for f in r.summary["flows"]]))
            for r in (runs[0], *runs_j)
        ]
        table.add(f"Fig. 16: mean RTT, {cca} (propagation 60 ms)", ms(rtt[0]), ms(median(rtt[1:])))
    dev_ratio = [safe_div(a, b) for a, b in zip(devs["janus"], devs["cubic"], strict=True)]
    dev_ratio_j = [safe_div(a, b) for a, b in zip(devs_j["janus"], devs_j["cubic"], strict=True)]
    claim_4a = (
        f"the bulk flow relinquishes bandwidth: each {num(share)} Mbit/s flow reaches its share "
        f"(slowest newcomer's goodput over {num(share)} Mbit/s, 25–40 s)"
    )
    claim_4c = "four bulk flows: Janus' throughput deviation over CUBIC's"
    reps = [
        judge_over_seeds(
            "4a",
            "Fig. 15",
            claim_4a,
            "reach fair share",
            [slowest_newcomer(r) / share for r in mixes],
            CRIT_4A,
            pct,
            prose(
                f"""
                The bulk flow gives way and the three newcomers get close to their shares without
                a standing queue (queue row). Each newcomer reaches {num(share)} Mbit/s in CUBIC,
                and buffer clearing hands Vegas P_avg·D_p as both cwnd and ssthresh, so Vegas
                holds that share in congestion avoidance. An earlier version kept CUBIC's ssthresh
                (R·D_p or its post-loss value) across the switch: Vegas slow-started from the
                cleared window, overshot, and a 45 ms queue stood with the newcomers at 64 % of
                their share. D_p (eq. 1) sits low because it subtracts Q_avg/P_avg = 4 packets at
                the bulk flow's {mbps(bulk_during)} ({ms(q_avg_delay)}), more than it keeps
                queued. The newcomers turn conservative while the bulk flow's aggressive stage
                still holds a queue; eq. 1 read D_p through it (80.7 ms on this 60 ms path) until
                D_p was bounded by the flow's smallest RTT of the last 10 s, and the larger
                windows that inflated D_p left them after each clearing made the newcomers' mean
                96.0 % (4.80 Mbit/s, bulk flow 4.91). With D_p at the path the four Vegas flows
                stop at a split inside Vegas' 2–4-packet band (see 4c): the newcomers
                {mbps(bg_mean)} on average, the slowest {mbps(bg_slowest)}, the bulk flow
                {mbps(bulk_during)}. Four flows at {num(share)} Mbit/s fill the link exactly, so
                the payload-only goodput of an even split is {pct(PAYLOAD_SHARE)} of the share, and
                the bound's {num(BOUND_POINTS)} points leave half a point for any unevenness.
                """
            ),
        ),
        judge_over_seeds(
            "4a" + JITTER_SUFFIX,
            "Fig. 15",
            claim_4a,
            "reach fair share",
            [slowest_newcomer(r) / share for r in mixes_j],
            CRIT_4A,
            pct,
            knob=SEND_JITTER_KNOB,
        ),
        judge_over_seeds(
            "4b",
            "Fig. 15",
            f"after the bandwidth-guarantee flows leave, the bulk flow fully saturates the link again "
            f"(goodput over {num(link)} Mbit/s, 50–60 s)",
            "fully saturates",
            [x / link for x in bulk_after],
            CRIT_4B,
            pct,
        ),
        judge_over_seeds(
            "4c",
            "Fig. 16",
            claim_4c,
            "about 45 % less (0.55)",
            dev_ratio,
            CRIT_4C,
            _two,
            prose(
                f"""
                Nothing in Janus equalises bulk flows, and no step of §4–5 is missing: the ratio
                lands in the band through CUBIC's spread, not through Janus. A bulk flow (R = 0) takes R'
                from its sample throughput two RTTs after its Vegas slow start (§4.2, here
                {", ".join(fmt(x, 2) for x in targets)} Mbit/s); Algorithm 1 then moves R' only
                when P leaves [(1 − gamma)·R', R'/(1 − gamma)] (a switch to the aggressive stage
                below, a raise above), and rate control applies to flows with a target only. So
                among bulk flows whose P_avg stays inside that band (here
                {", ".join(fmt(x, 2) for x in p_avgs)} Mbit/s) nothing in Janus equalises them:
                §6.1 leaves that to the conservative CCA ("delay-based flows converge to fair
                bandwidth allocation"). Vegas does not converge to one point: it holds its window
                while its own backlog is between alpha = 2 and beta = 4 packets, and with one
                queueing delay for all, rates are proportional to backlogs, so any split within
                2:1 is an equilibrium. Our four flows stop there: no window changes after
                {seconds(frozen)}, with backlogs of {", ".join(fmt(x, 1) for x in backlogs)}
                packets (second half of the run); exact simulation has no noise to move them.
                With {SEND_JITTER_KNOB} (4c-jitter, medians) Janus' deviation falls to
                {mbps(median(devs_j["janus"]))} against CUBIC's {mbps(median(devs_j["cubic"]))} (the
                Linux model takes no send-time noise: CUBIC's runs without it), a ratio of
                {_two(median(dev_ratio_j))}. CUBIC's four flows on the Linux model (unpaced,
                ACK-clocked by the kernel's delayed ACKs; equal RTTs, started together) deviate by
                {mbps(median(devs["cubic"]))}; on the default stack, paced, they shared far more
                evenly (0.47 Mbit/s in the runs before issue 19 moved CUBIC to the Linux model, a
                ratio of 3.28). Janus' flows keep a far shorter queue (mean RTT rows).
                Where in that band they stop is set by the end of the start: the buffer clearing
                there (which ended a standing queue of 120 ms for 25 s on a 1000-packet buffer)
                hands each flow the window of its throughput at that moment, and Vegas keeps
                that split; without it the deviation read 0.71 Mbit/s (ratio 1.50), equally
                outside the paper's.
                """
            ),
        ),
        judge_over_seeds(
            "4c" + JITTER_SUFFIX,
            "Fig. 16",
            claim_4c,
            "about 45 % less (0.55)",
            dev_ratio_j,
            CRIT_4C,
            _two,
            knob=SEND_JITTER_KNOB,
        ),
    ]
    return Section(
        "4",
        "Bulk transfer flows",
        "Figs. 15–16",
        f"Fig. 15: one bulk Janus flow from 0 s and three {num(share)} Mbit/s flows from 10 s to 40 s on "
        f"{num(link)} Mbit/s (capacity not given; {num(link)} Mbit/s makes {num(share)} Mbit/s everyone's "
        "share, as the text describes), RTT 60 ms, 200-packet buffer, 60 s. Fig. 16: four bulk flows on "
        f"{num(link)} Mbit/s for 60 s; deviation of the flows' mean goodputs. The runs draw nothing from "
        f"the seed: the table gives seed 1's, and the runs with {SEND_JITTER_KNOB} (the knob rows) the "
        "median over the seeds.",
        [ctx.rel(ctx.scenario("bulk-mix.toml")), ctx.rel(ctx.scenario("all-bulk.toml"))],
        "bulk-mix*, all-bulk-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 5. Varying propagation delay (§8.4, Figs. 17-18)


def _dp_worst(r: RunResult, steps: Sequence[tuple[float, float]]) -> tuple[float, tuple[float, float, float]]:
    """The largest relative error of a flow's D_p at the end of a step, and where: (the true
    propagation RTT, D_p, Q_avg/P_avg)."""
    worst_dp = 0.0
    worst_at = (math.nan, math.nan, math.nan)
    for start, truth in steps:
        for f in _flows(r):
            d = _last(r, f, "cc_dp_ms", start + 20.0)
            if abs(d - truth) / truth > worst_dp:
                worst_dp = abs(d - truth) / truth
                # Eq. 1's correction: Q_avg = 4 packets of 1500 bytes (§7.2) at P_avg.
                q_avg_ms = safe_div(4 * PACKET_BYTES * 8 / 1e3, _last(r, f, "cc_p_avg_mbps", start + 20.0))
                worst_at = (truth, d, q_avg_ms)
    return worst_dp, worst_at


def _after_increases(
    r: RunResult, steps: Sequence[tuple[float, float]], pick: Callable[[Sequence[float]], float]
) -> float:
    """`pick` (min or max) over the steps after the first increase of `pick` over the flows of the
    mean goodput over the step's second half."""
    return pick(
        [
            pick([_mean(r, f, "goodput_mbps", start + 10.0, start + 20.0) for f in _flows(r)])
            for start, _ in steps[1:]
        ]
    )


def _exp_delay_increase(ctx: Context) -> Section:
    steps = [(0.0, 40.0), (20.0, 60.0), (40.0, 80.0), (60.0, 100.0)]
    if ctx.quick:
        steps = steps[:2]
    duration = steps[-1][0] + 20.0
    o = {"duration": f"{duration:g}s"}
    n = _seeds(ctx)
    janus_runs = ctx.run_seeds("delay-janus", "delay-increase.toml", o, seeds=n)
    vegas_runs = ctx.run_seeds("delay-vegas", "delay-increase.toml", {**o, "flows.*.cca": "vegas"}, seeds=n)
    # The table and the notes: seed 1's runs (the runs draw nothing from the seed; the claims
    # check that every seed gives the same numbers).
    janus, vegas = janus_runs[0], vegas_runs[0]
    flows = _flows(janus)
    table = Table(
        [
            "propagation RTT",
            "from",
            *[f"Janus {f}" for f in flows],
            *[f"Vegas {f}" for f in flows],
            "D_p (Janus)",
        ]
    )
    worst_at = _dp_worst(janus, steps)[1]  # truth, D_p, Q_avg/P_avg
    # What an empty queue adds to the propagation RTT (serialisation), from the run's smallest
    # RTT, which the first (shortest) step sees.
    overhead = min(float(f["rtt_ms"]["min"]) for f in janus.summary["flows"]) - steps[0][1]
    for start, truth in steps:
        a, b = start + 10.0, start + 20.0
        dps = [_last(janus, f, "cc_dp_ms", b) for f in flows]
        table.add(
            f"{truth:g} ms",
            seconds(start),
            *[mbps(_mean(janus, f, "goodput_mbps", a, b)) for f in flows],
            *[mbps(_mean(vegas, f, "goodput_mbps", a, b)) for f in flows],
            ", ".join(f"{d:.1f} ms" for d in dps),
        )
    # RTT_min as eq. 1 used it, over the path's RTT with nothing queued, in 1500-byte packets
    # at the 20 Mbit/s link (0.6 ms each).
    queued = worst_at[1] + worst_at[2] - (worst_at[0] + overhead)
    queued_packets = queued / (PACKET_BYTES * 8 / 20e6 * 1e3)
    fig = "Figs. 17–18"
    increases = ", ".join(f"{truth:g}" for _, truth in steps[1:])
    reps = [
        judge_over_seeds(
            "5a",
            fig,
            "Janus recovers its 10 Mbit/s after each increase "
            f"(slowest flow, second half of the steps at {increases} ms, the lowest)",
            "recovers its 10 Mbit/s",
            [_after_increases(r, steps, min) for r in janus_runs],
            CRIT_5A,
            mbps,
            prose(
                f"""
                Janus recovers after each step (table), but its two flows settle apart, as
                Vegas' 2–4-packet band allows (4c, 7a).
                Two flows wanting 10 Mbit/s fill the 20 Mbit/s link exactly, so an even split
                gives each {mbps(10.0 * PAYLOAD_SHARE)} of payload and the bound's
                {num(BOUND_POINTS)} points leave {mbps(10.0 * PAYLOAD_SHARE - CRIT_5A.lo)} for
                any unevenness.
                """
            ),
        ),
        judge_over_seeds(
            "5b",
            fig,
            "Vegas alone starves as soon as the delay grows (faster flow, same intervals, the highest)",
            "both flows starved",
            [_after_increases(r, steps, max) for r in vegas_runs],
            CRIT_5B,
            mbps,
        ),
        judge_over_seeds(
            "5c",
            "Fig. 18",
            "D_p tracks the propagation delay (largest error at the end of each step)",
            "accurately estimates",
            [_dp_worst(r, steps)[0] for r in janus_runs],
            CRIT_5C,
            pct,
            prose(
                f"""
                D_p runs low by construction. Eq. 1 subtracts Q_avg/P_avg, the delay of the
                4 packets a Vegas flow is assumed to keep queued, from RTT_min taken at the start
                of a conservative stage; but the stage starts with buffer clearing (cwnd =
                P_avg·D_p), so the flow's own queue is (nearly) empty while RTT_min is taken (from
                the packets sent after the clearing, over one RTT; Vegas then adds one packet per
                RTT). At the worst
                point ({ms(worst_at[0])} step) D_p = {ms(worst_at[1])}, so the RTT_min it used was
                D_p + Q_avg/P_avg = {ms(worst_at[1] + worst_at[2])}, only {ms(queued)}
                ({fmt(queued_packets, 1)} packets at the 20 Mbit/s link) above the path's RTT
                with nothing queued ({ms(worst_at[0] + overhead)}: the propagation delay plus
                {ms(overhead)} of
                serialisation). The error is therefore nearly the whole 4-packet correction
                ({ms(worst_at[2])} at P_avg), largest in relative terms on the shortest path.
                Measuring RTT_min over the stage's second RTT only left this unchanged (the flow
                has queued at most one packet by then) and lowered the newcomers' mean in 4a to
                87.0 %, so we keep the
                paper's reading; the "accurate" D_p of Fig. 18 needs the flow to hold Q_avg
                packets when RTT_min is taken. D_p is also bounded by the flow's smallest RTT of
                the last 10 s (a propagation delay is never longer than an RTT on the same
                path); after each step the bound holds D_p at the old path's smallest recent RTT
                until those samples have aged out, 10 s into the 20-s step (the paper's Fig. 18
                updates it within a few seconds), so the end-of-step readings above are eq. 1's.
                """
            ),
        ),
    ]
    return Section(
        "5",
        "Robustness to a growing propagation delay",
        fig,
        f"Two flows wanting 10 Mbit/s on 20 Mbit/s, 200-packet buffer; the propagation RTT grows by 20 ms "
        f"every 20 s from 40 ms (the link's one-way delay steps by 10 ms), {duration:g} s; the same with "
        "both flows running Vegas. Goodput averaged over the second half of each step; the table gives seed "
        "1's runs (they draw nothing from the seed).",
        [ctx.rel(ctx.scenario("delay-increase.toml"))],
        "delay-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 6. Minimum target rate against CUBIC (§8.5, Figs. 19-20)


def _path(file: ScenarioFile) -> str:
    """The path and duration as prose ("RTT 60 ms, 200-packet buffer, 70 s")."""
    return f"RTT {num(file.rtt_ms())} ms, {size_text(file.buffer())} buffer, {num(file.duration_s())} s"


def _rmin_setup(file: ScenarioFile) -> str:
    intent = file.flow("janus")["intent"]
    return (
        f"Two Janus flows (R = {num(rate_mbps(intent['target_rate']))}, R_min = "
        f"{num(rate_mbps(intent['min_rate']))} Mbit/s) from 0 s, CUBIC flows from "
        f"{num(file.start_s('cubic1'))} s and {num(file.start_s('cubic2'))} s until "
        f"{num(file.stop_s('cubic1'))} s, on {num(file.rate_mbps())} Mbit/s (not given in the paper), "
        f"{_path(file)}."
    )


#: The bins (0.1 s) over which a window cut is looked for: a few round trips of rmin-vs-cubic's
#: 60 ms path plus its queue, so that PRR's gradual reduction counts once.
CUT_SPAN_BINS = 5
#: A window below this share of its recent peak is in a cut (CUBIC cuts to 0.7).
CUT_BELOW = 0.8


def _cuts(w: np.ndarray) -> int:
    """How many times the window `w` (one value per bin) enters a cut: falls below CUT_BELOW of
    its largest value over the previous CUT_SPAN_BINS bins."""
    below = [w[i] < CUT_BELOW * np.max(w[max(0, i - CUT_SPAN_BINS) : i]) for i in range(1, len(w))]
    return sum(b and not a for a, b in zip([False, *below[:-1]], below, strict=True))


def _farthest_from_rmin(r: RunResult, janus: Sequence[str]) -> float:
    """The mean goodput over 35–50 s of the Janus flow farthest from R_min."""
    rates = [_mean(r, f, "goodput_mbps", 35.0, 50.0) for f in janus]
    return max(rates, key=lambda x: abs(x - RMIN_MBPS))


def _exp_rmin(ctx: Context) -> Section:
    runs = ctx.run_seeds("rmin-vs-cubic", "rmin-vs-cubic.toml", seeds=_seeds(ctx))
    # The table and the notes: seed 1's run (the runs draw nothing from the seed; the claims check
    # that every seed gives the same numbers).
    r = runs[0]
    janus = [f for f in _flows(r) if f.startswith("janus")]
    table = Table(["interval", *janus, "cubic1", "cubic2"])
    for a, b, what in [
        (10.0, 20.0, "Janus only"),
        (35.0, 50.0, "with two CUBIC flows"),
        (60.0, 70.0, "CUBIC gone"),
    ]:
        table.add(
            f"{a:g}–{b:g} s ({what})",
            *[mbps(_mean(r, f, "goodput_mbps", a, b)) for f in janus],
            *[mbps(_mean(r, f, "goodput_mbps", a, b)) for f in ["cubic1", "cubic2"]],
        )
    during = [_farthest_from_rmin(x, janus) for x in runs]
    after = [min(_mean(x, f, "goodput_mbps", 60.0, 70.0) for f in janus) for x in runs]
    # Share of 35–50 s each Janus flow spends in the aggressive stage (cc_stage 1).
    aggressive = [_mean(r, f, "cc_stage", 35.0, 50.0) for f in janus]
    early = min(_mean(r, f, "goodput_mbps", 35.0, 40.0) for f in janus)
    late = min(_mean(r, f, "goodput_mbps", 45.0, 50.0) for f in janus)
    slower = min(janus, key=lambda f: _mean(r, f, "goodput_mbps", 35.0, 50.0))
    janus_window = _mean(r, slower, "cwnd_bytes", 35.0, 50.0)
    cubic_window = float(np.mean([_mean(r, f, "cwnd_bytes", 35.0, 50.0) for f in ["cubic1", "cubic2"]]))
    # CUBIC's multiplicative decreases in 35–50 s: entries into a window below 0.8 of its peak
    # over the last CUT_SPAN_BINS bins (the kernel's PRR, in the Linux model, spreads a cut to 0.7
    # over a round trip, a few bins).
    _, w = _col(r, "cubic1", "cwnd_bytes", 35.0, 50.0)
    cuts = _cuts(w)
    # Diagnostic: the CUBIC flows stay 40 s longer (until 90 s), so CUBIC has time to converge.
    long_note = ""
    if not ctx.quick:
        o = {"duration": "110s", "flows.1.stop": "90s", "flows.2.stop": "90s"}
        rl = ctx.run("rmin-vs-cubic-long", "rmin-vs-cubic.toml", o)
        long_rate = min(_mean(rl, f, "goodput_mbps", 75.0, 90.0) for f in janus)
        long_aggressive = [_mean(rl, f, "cc_stage", 75.0, 90.0) for f in janus]
        long_note = (
            f"Diagnostic: with the CUBIC flows staying until 90 s (run rmin-vs-cubic-long), the "
            f"slower Janus flow averages {mbps(long_rate)} over 75–90 s, and the Janus flows "
            f"now leave the aggressive stage at times (aggressive "
            f"{' and '.join(pct(a) for a in long_aggressive)} of 75–90 s): whenever P_avg "
            f"reaches R' = R_min, Janus turns conservative and buffer clearing cuts its window "
            f"to P_avg·D_p, after which Vegas loses ground to CUBIC until the flow turns "
            f"aggressive again. So against CUBIC a Janus flow settles somewhat under R_min, not "
            f"at it, and 35–50 s is too early for CUBIC to have got it there."
        )
    table.add("35–50 s: time in the aggressive stage", *[pct(a) for a in aggressive], "–", "–")
    fig = "Fig. 20"
    reps = [
        judge_over_seeds(
            "6a",
            fig,
            "Janus holds about R_min = 5 Mbit/s while CUBIC flows compete (the Janus flow farthest "
            "from R_min, 35–50 s)",
            "around 5 Mbit/s",
            during,
            CRIT_6A,
            mbps,
            prose(
                f"""
                The Janus flows spend {" and ".join(pct(a) for a in aggressive)} of 35–50 s in
                the aggressive stage (P_avg stays below R' = R_min, which it must reach to
                leave), so this is CUBIC against CUBIC, where four flows would get 5 Mbit/s
                each. The CUBIC flows join in slow start and push the Janus flows, conservative
                at the time, far below R_min before they turn aggressive; from those unequal
                windows CUBIC converges slowly (one multiplicative decrease per loss epoch): the
                slower Janus flow {"climbs" if late > early else "moves"} from {mbps(early)}
                (35–40 s) to {mbps(late)} (45–50 s) as the CUBIC flows' windows shift. Over
                35–50 s its window averages
                {fmt(janus_window / 1e3, 1)} kB against the CUBIC flows'
                {fmt(cubic_window / 1e3, 1)} kB, and cubic1 cuts its window {cuts} times in those
                15 s, each cut (to 0.7 of the window) closing only part of the gap. An earlier
                version, which let Vegas slow-start after each switch to the conservative stage
                (see 4a), averaged 4.13 Mbit/s here: the outcome rests on where CUBIC's slow
                convergence starts from. So does the aggressive stage's ssthresh R·D_p: eq. 1
                reads RTT_min through the CUBIC flows' queue (D_p 116 ms on this 60 ms path
                before it was bounded), and the threshold takes eq. 1 unbounded, while buffer
                clearing takes D_p bounded by the flow's smallest RTT of the last 10 s; with
                the threshold bounded as well it was half as large and this row read
                3.00 Mbit/s.
                """
            )
            + (" " + long_note if long_note else ""),
        ),
        judge_over_seeds(
            "6b",
            fig,
            "Janus returns to its 10 Mbit/s target after the CUBIC flows leave (slower Janus flow, 60–70 s)",
            "back to 10 Mbit/s",
            after,
            CRIT_6B,
            mbps,
            prose(
                f"""
                Two flows wanting 10 Mbit/s fill the 20 Mbit/s link exactly, so an even split
                would give each {mbps(10.0 * PAYLOAD_SHARE)} of payload; the slower flow sits
                {mbps(10.0 * PAYLOAD_SHARE - median(after))} below that.
                """
            ),
        ),
    ]
    return Section(
        "6",
        "Minimum target rate against CUBIC",
        "Figs. 19–20",
        _rmin_setup(ctx.scenario_file("rmin-vs-cubic.toml"))
        + " The table gives seed 1's run (the runs draw nothing from the seed).",
        [ctx.rel(ctx.scenario("rmin-vs-cubic.toml"))],
        "rmin-vs-cubic*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 7. Other aggressive CCAs (§7.3, Figs. 8-9)


def _variants_setup(file: ScenarioFile) -> str:
    target = num(rate_mbps(file.flow("flow-1")["intent"]["target_rate"]))
    path = _path(file)
    return (
        f"Two flows wanting {target} Mbit/s on {num(file.rate_mbps())} Mbit/s, {path}; the second joins at "
        f"{num(file.start_s('flow-2'))} s and leaves at {num(file.stop_s('flow-2'))} s; NewReno or H-TCP as "
        "the aggressive CCA (Vegas conservative)."
    )


def _exp_variants(ctx: Context) -> Section:
    variants = {"Janus-reno": "newreno", "Janus-htcp": "htcp"}
    file = ctx.scenario_file("variants.toml")
    target = rate_mbps(file.flow("flow-1")["intent"]["target_rate"])
    link = file.rate_mbps()
    joins, leaves = file.start_s("flow-2"), file.stop_s("flow-2")
    fair = link / 2
    n = _seeds(ctx)
    table = Table(
        [
            "variant",
            f"flow-1 alone ({num(joins / 2)}–{num(joins)} s)",
            f"flow-1 (25–{num(leaves)} s)",
            f"flow-2 (25–{num(leaves)} s)",
            f"flow-1 after ({num(leaves + 2)}–50 s)",
            f"converged after {num(joins)} s",
            f"flow-1 at {num(target)} Mbit/s after {num(leaves)} s",
        ]
    )
    both = ["flow-1", "flow-2"]
    worst: dict[str, list[float]] = {}
    worst_j: dict[str, list[float]] = {}
    back: dict[str, list[float]] = {}
    converge: dict[str, list[float]] = {}
    regain: dict[str, list[float]] = {}
    frozen: dict[str, float] = {}
    backlogs: dict[str, list[float]] = {}

    def deviation(r: RunResult) -> float:
        return max(abs(_mean(r, f, "goodput_mbps", 25.0, leaves) - fair) / fair for f in both)

    for label, aggressive in variants.items():
        cca = {"flows.*.cca": {"name": "janus", "conservative": "vegas", "aggressive": aggressive}}
        runs = ctx.run_seeds(f"variant-{aggressive}", "variants.toml", cca, seeds=n)
        runs_j = ctx.run_seeds(f"variant-{aggressive}-jitter", "variants.toml", {**cca, **JITTER}, seeds=n)
        worst[label] = [deviation(r) for r in runs]
        worst_j[label] = [deviation(r) for r in runs_j]
        back[label] = [_mean(r, "flow-1", "goodput_mbps", leaves + 2.0, 50.0) / target for r in runs]
        # §7.3's convergence range: both flows' 1-s goodput within (1 ± gamma) of the fair share.
        converge[label] = [_settle_time(r, both, joins, leaves, GAMMA, {f: fair for f in both}) for r in runs]
        level = target * (1 - BOUND_POINTS / 100)
        regain[label] = [_time_to_reach(r, "flow-1", leaves, 50.0, level) for r in runs]
        r = runs[0]
        frozen[label] = _frozen_since(r, both, joins, leaves)
        backlogs[label] = [_backlog_packets(r, f, 25.0, leaves) for f in both]
        table.add(
            label,
            mbps(median([_mean(x, "flow-1", "goodput_mbps", joins / 2, joins) for x in runs])),
            *[mbps(median([_mean(x, f, "goodput_mbps", 25.0, leaves) for x in runs])) for f in both],
            mbps(median(back[label]) * target),
            seconds(median(converge[label])),
            seconds(median(regain[label]), 2),
        )
    reps: list[Reproduction] = []
    for k, label in enumerate(variants):
        claim = (
            f"{label}: two {num(target)} Mbit/s flows converge to the {num(fair)} Mbit/s fair share "
            f"(largest deviation, 25–{num(leaves)} s)"
        )
        paper = "within [(1 − gamma)·R, (1 + gamma)·R]"
        reps.append(
            judge_over_seeds(
                f"7{'ac'[k]}",
                "Figs. 8–9",
                claim,
                paper,
                worst[label],
                CRIT_7A if k == 0 else CRIT_7C,
                pct,
                prose(
                    f"""
                    In the conservative stage Vegas' 2–4-packet band lets two equal-RTT flows
                    settle apart; the paper reports the same of this experiment (§7.3: Vegas
                    "did not allocate the bandwidth exactly in a fair share"; Janus keeps both
                    within (1 ± gamma) of it). Ours stop moving: no window changes from
                    {seconds(frozen[label])} to {num(leaves)} s, both flows conservative, with
                    backlogs of {" and ".join(fmt(x, 1) for x in backlogs[label])} packets
                    (25–{num(leaves)} s), inside Vegas' [2, 4], and P_avg inside Algorithm 1's band
                    around R', so no rule acts.
                    """
                ),
            )
        )
        reps.append(
            judge_over_seeds(
                f"7{'ac'[k]}{JITTER_SUFFIX}",
                "Figs. 8–9",
                claim,
                paper,
                worst_j[label],
                CRIT_7A if k == 0 else CRIT_7C,
                pct,
                knob=SEND_JITTER_KNOB,
            )
        )
        reps.append(
            judge_over_seeds(
                f"7{'bd'[k]}",
                "Fig. 9",
                f"{label}: the remaining flow takes its {num(target)} Mbit/s back after the other leaves "
                f"(goodput over its target, {num(leaves + 2)}–50 s)",
                "gets back the fair share",
                back[label],
                CRIT_7B if k == 0 else CRIT_7D,
                pct,
            )
        )
    reps.append(
        judge_over_seeds(
            "7e",
            "Fig. 9",
            f"Janus-htcp: the remaining flow is back at its {num(target)} Mbit/s soon after the other "
            f"leaves (s from {num(leaves)} s to the first 1-s window at its target less "
            f"{num(BOUND_POINTS)} points)",
            "within 2 seconds",
            regain["Janus-htcp"],
            CRIT_7E,
            lambda v: seconds(v, 2),
        )
    )
    reps.append(
        judge_over_seeds(
            "7f",
            "Figs. 8–9",
            "Janus-reno converges more slowly than Janus-htcp after the second flow joins (Janus-reno's "
            f"time minus Janus-htcp's; converged: both flows' 1-s goodput within (1 ± gamma) of "
            f"{num(fair)} Mbit/s until {num(leaves)} s)",
            "takes longer",
            [_or_inf(a) - b for a, b in zip(converge["Janus-reno"], converge["Janus-htcp"], strict=True)],
            CRIT_7F,
            _signed_seconds,
        )
    )
    return Section(
        "7",
        "Other aggressive CCAs",
        "§7.3, Figs. 8–9",
        _variants_setup(file)
        + " The table gives the median over the seeds (the runs without the knob draw nothing from it).",
        [ctx.rel(ctx.scenario("variants.toml"))],
        "variant-*",
        table,
        reps,
    )
