"""Janus (Zhou, Choffnes & Chowdhury, IEEE TMC 2018, seed text 004): application-aware switching
between a conservative (Vegas) and an aggressive (CUBIC) CCA, reproduced in the simulator.

Each `_exp_*` function runs one experiment (scenario files in scenarios/papers/janus/) and returns
its `Section`. The pass criteria are the paper's claims with a stated margin, fixed here before
and independently of the results. `ctx.quick` selects shortened versions for the tests.
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
    mbps,
    ms,
    num,
    pct,
    prose,
    ratio,
    safe_div,
    seconds,
)
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, rate_mbps, size_text
from polycc.reproduce.timeseries import column as _col
from polycc.reproduce.timeseries import flow_mean as _mean

if TYPE_CHECKING:
    from polycc.api import RunResult

TITLE = "Janus: application-aware switching between Vegas and CUBIC (IEEE TMC 2018)"

#: §4.3, §7.2: the switching margin gamma (also Algorithm 1's step).
GAMMA = 0.2


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        _exp_switching,
        _exp_mmf,
        _exp_web_delay,
        _exp_bulk,
        _exp_delay_increase,
        _exp_rmin,
        _exp_variants,
    ]
    return [step(ctx) for step in steps]


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


def _settle_time(r: RunResult, flows: Sequence[str], t0: float, t1: float, band: float) -> float:
    """Seconds after `t0` from which every flow's 1-s mean goodput stays within `band` of its own
    mean over the last third of [t0, t1); NaN if it never does."""
    final = {f: _mean(r, f, "goodput_mbps", t1 - (t1 - t0) / 3, t1) for f in flows}
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


# ---------------------------------------------------------------------------------------------
# 1. Two-stage switching (§4.3, Fig. 6)


def _switching_setup(file: ScenarioFile) -> str:
    burst = file.flow("burst")
    return (
        f"One flow wanting {num(rate_mbps(file.flow('janus')['intent']['target_rate']))} Mbit/s on "
        f"{num(file.rate_mbps())} Mbit/s, RTT {num(file.rtt_ms())} ms, {size_text(file.buffer())} buffer "
        f"(the paper's defaults; Fig. 6 gives neither), {num(file.duration_s())} s; cross traffic: "
        f"unresponsive Poisson arrivals at {num(rate_mbps(burst['traffic']['rate']))} Mbit/s from "
        f"{num(file.start_s('burst'))} s to {num(file.stop_s('burst'))} s (the paper says only 'bursty')."
    )


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


def switching_outcome(r: RunResult) -> Switching:
    t, stage = _col(r, "janus", "cc_stage", 0.0, 15.0)
    conservative = t[stage == 0.0]
    after = t[(t >= 8.0) & (stage == 0.0)]
    back = float(after[0]) if after.size else math.nan
    burst = (t >= 6.0) & (t < 9.0)
    targets = _col(r, "janus", "cc_target_rate_mbps", 6, 10)[1]
    return Switching(
        first_conservative=float(conservative[0]) if conservative.size else math.nan,
        aggressive_in_burst=bool((stage[burst] == 1.0).any()),
        back=back,
        stays=bool((stage[t >= math.ceil(back)] == 0.0).all()) if after.size else False,
        lowest_target=float(np.nanmin(targets)) if np.isfinite(targets).any() else math.nan,
        goodput_after=_mean(r, "janus", "goodput_mbps", 11.0, 15.0),
        rtt_after=_mean(r, "janus", "rtt_ms", 11.0, 15.0),
    )


def path_rtt_ms(file: ScenarioFile) -> float:
    """The path's RTT with nothing queued: propagation plus one full packet's serialisation."""
    return file.rtt_ms() + PACKET_BYTES * 8 / (file.rate_mbps() * 1e3)


def _exp_switching(ctx: Context) -> Section:
    r = ctx.run("switching", "switching.toml")
    file = ctx.scenario_file("switching.toml")
    path_ms = path_rtt_ms(file)
    serialisation_ms = path_ms - file.rtt_ms()
    o = switching_outcome(r)
    table = Table(["quantity", "value"])
    table.add("first conservative stage at", seconds(o.first_conservative))
    table.add("aggressive during the cross traffic (6–8 s)", fmt(o.aggressive_in_burst))
    table.add("back to conservative at", seconds(o.back))
    table.add("R' lowest during the burst", mbps(o.lowest_target))
    table.add("goodput 11–15 s", mbps(o.goodput_after))
    table.add(
        f"RTT 11–15 s (path: {num(file.rtt_ms())} ms + {num(serialisation_ms)} ms serialisation)",
        ms(o.rtt_after),
    )
    fig = "Fig. 6"
    reps = [
        Reproduction.at_most(
            "1a",
            fig,
            "a new flow turns conservative once its sample throughput reaches R "
            f"({num(rate_mbps(file.flow('janus')['intent']['target_rate']))} Mbit/s)",
            "0.7 s",
            o.first_conservative,
            1.5,
            seconds,
            prose(
                """
                Ours is faster: rate control sets ssthresh = R·D_p at the first RTT sample, so slow
                start carries the window straight to the target; the paper's Linux CUBIC started
                with HyStart and delayed ACKs.
                """
            ),
        ),
        Reproduction(
            "1b",
            fig,
            "bursty cross traffic (6–8 s) drops P_avg below (1 − gamma)·R: Janus turns aggressive",
            "aggressive 6–10 s",
            fmt(o.aggressive_in_burst),
            o.aggressive_in_burst,
            "yes",
        ),
        Reproduction.at_most(
            "1c",
            fig,
            "after the burst, back to conservative once P_avg > R, and stays",
            "≈ 10 s",
            o.back if o.stays else math.nan,
            12.0,
            seconds,
            prose(
                f"""
                Ours returns earlier: Algorithm 1 lowered R' to {mbps(o.lowest_target)} during the
                burst, and P_avg passes the lowered target sooner; the paper's trace shows no R'.
                """
            ),
        ),
        Reproduction.at_most(
            "1d",
            f"{fig}, §4.4",
            "buffer clearing: no standing queue in the conservative stage after the switch "
            f"(RTT above the {num(path_ms)} ms path)",
            "Vegas alone keeps the aggressive stage's queue",
            o.rtt_after - path_ms,
            5.0,
            ms,
        ),
    ]
    return Section(
        "1",
        "Two-stage switching",
        fig,
        _switching_setup(file),
        [ctx.rel(ctx.scenario("switching.toml"))],
        "switching",
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
    table = Table(
        ["protocol", "capacity", *[f"{f} (MMF)" for f in targets], "largest deviation", "settles after 30 s"]
    )
    dev: dict[tuple[str, float], float] = {}
    settle: dict[tuple[str, float], float] = {}
    for label, scen, cap, cca in settings:
        r = ctx.run(f"mmf-{label}-{cap:g}", scen, {"flows.*.cca": cca})
        # CUBIC and PCC ignore the targets: compare them with the equal share, as the paper does.
        ref = mmf_shares(cap, targets) if label == "janus" else {f: cap / len(targets) for f in targets}
        got = {f: _mean(r, f, "throughput_mbps", *window) for f in targets}
        dev[(label, cap)] = mmf_deviation(r, ref, window)
        settle[(label, cap)] = _settle_time(r, list(targets), 30.0, 60.0, 0.2)
        table.add(
            label,
            f"{cap:g} Mbit/s",
            *[f"{got[f]:.2f} ({ref[f]:.2f})" for f in targets],
            pct(dev[(label, cap)]),
            seconds(settle[(label, cap)]),
        )
    fig = "Figs. 11–12"
    why_mmf = prose(
        """
        The max-min argument (§6.1) rests on the conservative CCA sharing fairly. Each switch to
        the conservative stage hands Vegas the buffer-clearing window P_avg·D_p as both cwnd and
        ssthresh, so Vegas continues in congestion avoidance from the flow's share; with the
        aggressive stage's higher ssthresh kept across the switch, Vegas slow-started from the
        cleared window, overshot, and the flows froze 19.5 % (25 Mbit/s) and 26.7 % (20 Mbit/s)
        off their shares. What remains is by design: rate control lets a satisfied flow run
        anywhere from R up to (1 + eps)·R (§4.4), and among the unsatisfied flows Vegas holds
        2–4 packets each in the queue, so flows with equal RTTs may settle apart within that
        band while each stays conservative above (1 − gamma)·R'.
        """
    )
    reps = [
        Reproduction.at_most(
            "2a",
            fig,
            f"on {num(big)} Mbit/s every Janus flow gets its max-min fair share (largest deviation, "
            f"{num(window[0])}–{num(window[1])} s)",
            "close match",
            dev[("janus", big)],
            0.10,
            pct,
            why_mmf,
        ),
    ]
    if ("janus", small) in dev:
        reps.append(
            Reproduction.at_most(
                "2b",
                fig,
                f"on {num(small)} Mbit/s every Janus flow gets its max-min fair share (largest deviation)",
                "close match",
                dev[("janus", small)],
                0.10,
                pct,
                f"As 2a; here the three unsatisfied flows share the {num(small - min(targets.values()))} "
                f"Mbit/s the {num(min(targets.values()))} Mbit/s flow leaves.",
            )
        )
    if ("cubic", big) in settle:
        j, c = settle[("janus", big)], settle[("cubic", big)]
        reps.append(
            Reproduction(
                "2c",
                "Fig. 11",
                "Janus settles faster than CUBIC after the last flow joins (every flow's 1-s goodput "
                "within 20 % of its final mean)",
                "CUBIC almost 20 s",
                f"Janus {seconds(j)}, CUBIC {seconds(c)}",
                not math.isnan(j) and (math.isnan(c) or j < c),
                "Janus < CUBIC",
                prose(
                    """
                    Janus' three earlier flows are already at their final rates when the 4 Mbit/s
                    flow joins at 30 s, and it reaches its target within a second (rate control
                    sets ssthresh = R·D_p); CUBIC redistributes among all four for about 18 s.
                    """
                ),
                value=j,
            )
        )
        p = dev[("pcc-tp", big)]
        reps.append(
            Reproduction.at_least(
                "2d",
                "Fig. 11(c)",
                "PCC-tp shares unevenly (largest deviation from the equal share)",
                "first flow takes > 70 %",
                p,
                0.3,
                pct,
            )
        )
    return Section(
        "2",
        "Max-min fair shares of four bandwidth-guarantee flows",
        fig,
        _mmf_setup(ctx.scenario_file("mmf-25.toml"), ctx.scenario_file("mmf-20.toml"), window),
        [ctx.rel(ctx.scenario("mmf-25.toml")), ctx.rel(ctx.scenario("mmf-20.toml"))],
        "mmf-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 3. Delay-sensitive web flows beside a long flow (§8.2.1, Fig. 13)


def _exp_web_delay(ctx: Context) -> Section:
    settings: dict[str, dict[str, Any]] = {
        "Janus-12": {"flows.*.cca": "janus"},
        "Janus-0": {"flows.*.cca": "janus", "flows.0.intent": {"class": "bulk"}},
        "CUBIC": {"flows.*.cca": "cubic"},
    }
    if not ctx.quick:
        settings["PCC-tp"] = {"flows.*.cca": "pcc-allegro"}
        settings["PCC-rtt"] = {"flows.*.cca": {"name": "pcc-allegro", "utility": "allegro-latency"}}
    duration = 30.0 if ctx.quick else 60.0
    p95: dict[str, float] = {}
    util: dict[str, float] = {}
    queue: dict[str, float] = {}
    above = math.nan  # PCC-rtt: share of the run its sending rate exceeds the link rate
    table = Table(
        [
            "protocol",
            "web flows: p95 queueing delay",
            "long flow: share of 15 Mbit/s",
            "bottleneck queue (median)",
            "web transfers",
        ]
    )
    for label, o in settings.items():
        r = ctx.run(f"web-{label.lower()}", "web-delay.toml", {**o, "duration": f"{duration:g}s"})
        flows = {f["id"]: f for f in r.summary["flows"]}
        p95[label] = float(flows["web"]["queue_delay_ms"]["p95"])
        util[label] = float(flows["long"]["goodput_mbps"]) / 15.0
        q = r.links["queue_delay_ms"].to_numpy(dtype=float) if "queue_delay_ms" in r.links else np.array([])
        q = q[np.isfinite(q)]
        queue[label] = float(np.median(q)) if q.size else math.nan
        if label == "PCC-rtt":
            _, rate = _col(r, "long", "cc_rate_mbps", 0.0, duration)
            rate = rate[np.isfinite(rate)]
            above = float(np.mean(rate > 15.0)) if rate.size else math.nan
        table.add(
            label,
            ms(p95[label]),
            pct(util[label]),
            ms(queue[label]),
            int(flows["web"]["transfers_completed"]),
        )
    alone_queue = alone_util = math.nan  # PCC-rtt's long flow with no web flow (diagnostic)
    if "PCC-rtt" in settings:
        # The web flow starts at the end of the run, so the long flow has the link to itself.
        o = {**settings["PCC-rtt"], "duration": f"{duration:g}s", "flows.1.start": f"{duration:g}s"}
        r = ctx.run("web-pcc-rtt-alone", "web-delay.toml", o)
        flows = {f["id"]: f for f in r.summary["flows"]}
        alone_queue = float(flows["long"]["queue_delay_ms"]["mean"])
        alone_util = float(flows["long"]["goodput_mbps"]) / 15.0
    fig = "Fig. 13"
    reps = [
        Reproduction.at_least(
            "3a",
            fig,
            "web flows' p95 queueing delay: CUBIC / Janus-12",
            "≈ 10×",
            safe_div(p95["CUBIC"], p95["Janus-12"]),
            5.0,
            ratio,
        ),
        Reproduction.at_least(
            "3b",
            fig,
            "web flows' p95 queueing delay: CUBIC / Janus-0",
            "≈ 10×",
            safe_div(p95["CUBIC"], p95["Janus-0"]),
            5.0,
            ratio,
        ),
        Reproduction.at_least(
            "3c",
            fig,
            "the bulk background flow (Janus-0) keeps over 90 % of the link",
            "> 90 %",
            util["Janus-0"],
            0.85,
            pct,
        ),
        Reproduction.at_least(
            "3d",
            fig,
            "the 12 Mbit/s background flow (Janus-12) is satisfied",
            "12 Mbit/s",
            util["Janus-12"] * 15.0 / 12.0,
            0.95,
            pct,
        ),
    ]
    if "PCC-rtt" in p95:
        reps.append(
            Reproduction.at_least(
                "3e",
                fig,
                "PCC-tp's web delay over Janus-12's",
                "≈ 5×",
                safe_div(p95["PCC-tp"], p95["Janus-12"]),
                2.0,
                ratio,
            )
        )
        reps.append(
            Reproduction.at_most(
                "3f",
                fig,
                "PCC-rtt gives up background throughput",
                "73 %",
                util["PCC-rtt"],
                0.85,
                pct,
                prose(
                    f"""
                    Not reproduced; a property of PCC's latency utility on a FIFO link shared
                    with bursty flows rather than of Janus. pcc-allegro with Allegro's latency
                    utility (§4.4.1, utility = "allegro-latency") keeps the bottleneck queue
                    standing (median {ms(queue["PCC-rtt"])} over the run, PCC-tp
                    {ms(queue["PCC-tp"])}, CUBIC {ms(queue["CUBIC"])}) and sends above the 15 Mbit/s
                    link rate {pct(above)} of the run, so it neither lowers the web flows' delay
                    (p95 {ms(p95["PCC-rtt"])}) nor gives up throughput. Two causes. (1) The paper
                    prints the RTT factor as the ratio RTT_(n−1)/RTT_n; taken literally, with
                    monitor intervals of about two RTTs, a trial 1 % above the rate gains more
                    throughput than the RTT it adds costs, so the trials choose the higher rate
                    while a queue stands and only loss stops them (a fluid model of this is the
                    unit test latency_utility_prefers_the_lower_rate_while_a_queue_grows). The
                    authors' own code applies Sigmoid_10(1 − RTT_(n−1)/RTT_n) instead, which we
                    now use; with the bare ratio this row read 92.6 % and a 158.9 ms median
                    queue. (2) Every 2 s a web transfer (100 KB, 53 ms of the link, sent by PCC's
                    doubling start) lifts the RTT by tens of ms within one monitor interval, far
                    more than the 1–5 % trials change it, and at a full buffer its losses land in
                    whichever trial is running: the trials decide at random. Diagnostic: the same
                    long flow alone on the link (web flow never started) keeps a mean queueing
                    delay of {ms(alone_queue)} at {pct(alone_util)} of the link. Allegro proposes
                    the latency utility for fair-queued links, where neither cause arises.
                    """
                ),
            )
        )
    return Section(
        "3",
        "Delay-sensitive web flows beside a long flow",
        fig,
        f"100 KB transfers every 2 s (periodic, from 5 s) beside one long flow on 15 Mbit/s, RTT 60 ms, "
        f"200-packet buffer, {duration:g} s. Both flows run the protocol of the row (the paper does not say "
        "what the web flows ran); Janus' web flows are delay-sensitive, its long flow wants 12 Mbit/s "
        "(Janus-12) or is bulk (Janus-0). Queueing delay is the bottleneck sojourn of the web flows' "
        "packets, p95 over the run.",
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
    mix = ctx.run("bulk-mix", "bulk-mix.toml")
    bg = [f for f in _flows(mix) if f.startswith("bg")]
    bg_mean = float(np.mean([_mean(mix, f, "goodput_mbps", 25.0, 40.0) for f in bg]))
    bulk_during = _mean(mix, "bulk", "goodput_mbps", 25.0, 40.0)
    bulk_after = _mean(mix, "bulk", "goodput_mbps", 50.0, 60.0)
    queue_during = _mean(mix, "bulk", "rtt_ms", 25.0, 40.0) - 60.0
    dp_during = _last(mix, "bulk", "cc_dp_ms", 40.0)
    # Eq. 1's correction at the bulk flow's rate: Q_avg = 4 packets of 1500 bytes (§7.2).
    q_avg_delay = safe_div(4 * PACKET_BYTES * 8 / 1e3, bulk_during)
    table = Table(["quantity", "value"])
    table.add("Fig. 15: each 5 Mbit/s flow, 25–40 s (mean)", mbps(bg_mean))
    table.add("Fig. 15: bulk flow, 25–40 s", mbps(bulk_during))
    table.add("Fig. 15: bulk flow after the others left, 50–60 s", mbps(bulk_after))
    table.add("Fig. 15: standing queue 25–40 s (bulk flow's RTT − 60 ms)", ms(queue_during))
    table.add("Fig. 15: bulk flow's D_p at 40 s (true 60 ms)", ms(dp_during))
    devs: dict[str, float] = {}
    bulk = ctx.run("all-bulk-janus", "all-bulk.toml", {"flows.*.cca": "janus"})
    bulk_flows = _flows(bulk)
    bulk_end = float(bulk.summary["duration_s"])
    frozen = _frozen_since(bulk, bulk_flows, 0.0, bulk_end)
    backlogs = [_backlog_packets(bulk, f, bulk_end / 2, bulk_end) for f in bulk_flows]
    targets = [_last(bulk, f, "cc_target_rate_mbps", bulk_end) for f in bulk_flows]
    p_avgs = [_last(bulk, f, "cc_p_avg_mbps", bulk_end) for f in bulk_flows]
    for cca in ["janus", "cubic"]:
        r = bulk if cca == "janus" else ctx.run(f"all-bulk-{cca}", "all-bulk.toml", {"flows.*.cca": cca})
        devs[cca] = _deviation(r)
        table.add(f"Fig. 16: throughput deviation (max − min over the run), {cca}", mbps(devs[cca]))
        rtt = float(np.mean([float(f["rtt_ms"]["mean"]) for f in r.summary["flows"]]))
        table.add(f"Fig. 16: mean RTT, {cca} (propagation 60 ms)", ms(rtt))
    reps = [
        Reproduction.at_least(
            "4a",
            "Fig. 15",
            "the bulk flow relinquishes bandwidth: each 5 Mbit/s flow reaches its share (25–40 s)",
            "≈ 5 Mbit/s",
            bg_mean / 5.0,
            0.9,
            pct,
            prose(
                f"""
                The bulk flow gives way and the three newcomers get their shares without a
                standing queue (queue row). Each newcomer reaches 5 Mbit/s in CUBIC, and buffer
                clearing hands Vegas P_avg·D_p as both cwnd and ssthresh, so Vegas holds that
                share in congestion avoidance. An earlier version kept CUBIC's ssthresh (R·D_p
                or its post-loss value) across the switch: Vegas slow-started from the cleared
                window, overshot, and a 45 ms queue stood with the newcomers at 64 % of their
                share. D_p (eq. 1) sits low because it subtracts Q_avg/P_avg = 4 packets at
                the bulk flow's {mbps(bulk_during)} ({ms(q_avg_delay)}), more than it keeps
                queued. The newcomers turn conservative while the bulk flow's aggressive stage
                still holds a queue; eq. 1 read D_p through it (80.7 ms on this 60 ms path) until
                D_p was bounded by the flow's smallest RTT of the last 10 s, and the larger
                windows that inflated D_p left them after each clearing made this row 96.0 %
                (newcomers 4.80, bulk flow 4.91 Mbit/s). With D_p at the path the four Vegas
                flows stop at a split inside Vegas' 2–4-packet band (see 4c): the newcomers
                {mbps(bg_mean)} on average, the bulk flow {mbps(bulk_during)}.
                """
            ),
        ),
        Reproduction.at_least(
            "4b",
            "Fig. 15",
            "after the bandwidth-guarantee flows leave, the bulk flow saturates the link (50–60 s)",
            "≈ 20 Mbit/s",
            bulk_after / 20.0,
            0.9,
            pct,
        ),
        Reproduction.at_most(
            "4c",
            "Fig. 16",
            "four bulk flows: Janus' throughput deviation over CUBIC's",
            "0.55 (45 % less)",
            safe_div(devs["janus"], devs["cubic"]),
            0.8,
            lambda v: fmt(v, 2),
            prose(
                f"""
                Not reproduced, and no step of §4–5 is missing. A bulk flow (R = 0) takes R'
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
                packets (second half of the run); the simulator has no noise to move them. Our
                CUBIC flows (equal RTTs, paced, started together) share more evenly than the
                paper's testbed flows. Janus' flows keep a far shorter queue (mean RTT rows).
                Where in that band they stop is set by the end of the start: the buffer clearing
                there (which ended a standing queue of 120 ms for 25 s on a 1000-packet buffer)
                hands each flow the window of its throughput at that moment, and Vegas keeps
                that split; without it the deviation read 0.71 Mbit/s (ratio 1.50), equally
                outside the paper's.
                """
            ),
        ),
    ]
    return Section(
        "4",
        "Bulk transfer flows",
        "Figs. 15–16",
        "Fig. 15: one bulk Janus flow from 0 s and three 5 Mbit/s flows from 10 s to 40 s on 20 Mbit/s "
        "(capacity not given; 20 Mbit/s makes 5 Mbit/s everyone's share, as the text describes), RTT 60 ms, "
        "200-packet buffer, 60 s. Fig. 16: four bulk flows on 20 Mbit/s for 60 s; deviation of the flows' "
        "mean goodputs.",
        [ctx.rel(ctx.scenario("bulk-mix.toml")), ctx.rel(ctx.scenario("all-bulk.toml"))],
        "bulk-mix, all-bulk-*",
        table,
        reps,
    )


# ---------------------------------------------------------------------------------------------
# 5. Varying propagation delay (§8.4, Figs. 17-18)


def _exp_delay_increase(ctx: Context) -> Section:
    steps = [(0.0, 40.0), (20.0, 60.0), (40.0, 80.0), (60.0, 100.0)]
    if ctx.quick:
        steps = steps[:2]
    duration = steps[-1][0] + 20.0
    o = {"duration": f"{duration:g}s"}
    janus = ctx.run("delay-janus", "delay-increase.toml", o)
    vegas = ctx.run("delay-vegas", "delay-increase.toml", {**o, "flows.*.cca": "vegas"})
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
    worst_dp = 0.0
    worst_at = (math.nan, math.nan, math.nan)  # truth, D_p, Q_avg/P_avg
    # What an empty queue adds to the propagation RTT (serialisation), from the run's smallest
    # RTT, which the first (shortest) step sees.
    overhead = min(float(f["rtt_ms"]["min"]) for f in janus.summary["flows"]) - steps[0][1]
    for start, truth in steps:
        a, b = start + 10.0, start + 20.0
        dps = [_last(janus, f, "cc_dp_ms", b) for f in flows]
        for f, d in zip(flows, dps, strict=True):
            if abs(d - truth) / truth > worst_dp:
                worst_dp = abs(d - truth) / truth
                # Eq. 1's correction: Q_avg = 4 packets of 1500 bytes (§7.2) at P_avg.
                q_avg_ms = safe_div(4 * PACKET_BYTES * 8 / 1e3, _last(janus, f, "cc_p_avg_mbps", b))
                worst_at = (truth, d, q_avg_ms)
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
    end = duration
    j_last = min(_mean(janus, f, "goodput_mbps", end - 10.0, end) for f in flows)
    v_last = max(_mean(vegas, f, "goodput_mbps", end - 10.0, end) for f in flows)
    fig = "Figs. 17–18"
    reps = [
        Reproduction.at_least(
            "5a",
            fig,
            "Janus recovers its 10 Mbit/s after each increase "
            f"(slowest flow, last 10 s at {steps[-1][1]:g} ms)",
            "≈ 10 Mbit/s",
            j_last,
            8.0,
            mbps,
        ),
        Reproduction.at_most(
            "5b",
            fig,
            "Vegas alone starves as the delay grows (faster flow, same interval)",
            "starved",
            v_last,
            2.0,
            mbps,
        ),
        Reproduction.at_most(
            "5c",
            "Fig. 18",
            "D_p tracks the propagation delay (largest error at the end of each step)",
            "accurate",
            worst_dp,
            0.10,
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
                has queued at most one packet by then) and lowered 4a to 87.0 %, so we keep the
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
        "both flows running Vegas. Goodput averaged over the second half of each step.",
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


def _exp_rmin(ctx: Context) -> Section:
    r = ctx.run("rmin-vs-cubic", "rmin-vs-cubic.toml")
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
    during = min(_mean(r, f, "goodput_mbps", 35.0, 50.0) for f in janus)
    after = min(_mean(r, f, "goodput_mbps", 60.0, 70.0) for f in janus)
    # Share of 35–50 s each Janus flow spends in the aggressive stage (cc_stage 1).
    aggressive = [_mean(r, f, "cc_stage", 35.0, 50.0) for f in janus]
    early = min(_mean(r, f, "goodput_mbps", 35.0, 40.0) for f in janus)
    late = min(_mean(r, f, "goodput_mbps", 45.0, 50.0) for f in janus)
    slower = min(janus, key=lambda f: _mean(r, f, "goodput_mbps", 35.0, 50.0))
    janus_window = _mean(r, slower, "cwnd_bytes", 35.0, 50.0)
    cubic_window = float(np.mean([_mean(r, f, "cwnd_bytes", 35.0, 50.0) for f in ["cubic1", "cubic2"]]))
    # CUBIC's multiplicative decreases in 35–50 s: bins whose window is below 0.8 of the last.
    _, w = _col(r, "cubic1", "cwnd_bytes", 35.0, 50.0)
    cuts = int(np.sum(w[1:] < 0.8 * w[:-1]))
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
        Reproduction.at_least(
            "6a",
            fig,
            "Janus holds about R_min = 5 Mbit/s while CUBIC flows compete (slowest Janus flow, 35–50 s)",
            "≈ 5 Mbit/s",
            during,
            0.8 * 5.0,
            mbps,
            prose(
                f"""
                The Janus flows spend {" and ".join(pct(a) for a in aggressive)} of 35–50 s in
                the aggressive stage (P_avg stays below R' = R_min, which it must reach to
                leave), so this is CUBIC against CUBIC, where four flows would get 5 Mbit/s
                each. The CUBIC flows join in slow start and push the Janus flows, conservative
                at the time, far below R_min before they turn aggressive; from those unequal
                windows CUBIC converges slowly (one multiplicative decrease per loss epoch): the
                slower Janus flow climbs from {mbps(early)} (35–40 s) to {mbps(late)} (45–50 s)
                while the CUBIC flows come down. Over 35–50 s its window averages
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
        Reproduction.at_least(
            "6b",
            fig,
            "Janus returns to its 10 Mbit/s target after the CUBIC flows leave (60–70 s)",
            "10 Mbit/s",
            after,
            0.9 * 10.0,
            mbps,
        ),
    ]
    return Section(
        "6",
        "Minimum target rate against CUBIC",
        "Figs. 19–20",
        _rmin_setup(ctx.scenario_file("rmin-vs-cubic.toml")),
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
    table = Table(
        ["variant", "flow-1 alone (5–10 s)", "flow-1 (25–40 s)", "flow-2 (25–40 s)", "flow-1 after (42–50 s)"]
    )
    worst: dict[str, float] = {}
    back: dict[str, float] = {}
    frozen: dict[str, float] = {}
    backlogs: dict[str, list[float]] = {}
    for label, aggressive in variants.items():
        r = ctx.run(
            f"variant-{aggressive}",
            "variants.toml",
            {"flows.*.cca": {"name": "janus", "conservative": "vegas", "aggressive": aggressive}},
        )
        both = [_mean(r, f, "goodput_mbps", 25.0, 40.0) for f in ["flow-1", "flow-2"]]
        worst[label] = max(abs(x - 10.0) / 10.0 for x in both)
        frozen[label] = _frozen_since(r, ["flow-1", "flow-2"], 10.0, 40.0)
        backlogs[label] = [_backlog_packets(r, f, 25.0, 40.0) for f in ["flow-1", "flow-2"]]
        back[label] = _mean(r, "flow-1", "goodput_mbps", 42.0, 50.0)
        table.add(
            label,
            mbps(_mean(r, "flow-1", "goodput_mbps", 5.0, 10.0)),
            *[mbps(x) for x in both],
            mbps(back[label]),
        )
    reps: list[Reproduction] = []
    for k, label in enumerate(variants):
        reps.append(
            Reproduction.at_most(
                f"7{'ac'[k]}",
                "Figs. 8–9",
                f"{label}: two 12 Mbit/s flows converge to the 10 Mbit/s fair share "
                "(largest deviation, 25–40 s)",
                "fair share",
                worst[label],
                0.10,
                pct,
                prose(
                    f"""
                    In the conservative stage Vegas' 2–4-packet band lets two equal-RTT flows
                    settle apart; the paper reports the same of this experiment (§7.3: Vegas
                    "did not allocate the bandwidth exactly in a fair share"; Janus keeps both
                    within (1 ± gamma) of it). Ours stop moving: no window changes from
                    {seconds(frozen[label])} to 40 s, both flows conservative, with backlogs of
                    {" and ".join(fmt(x, 1) for x in backlogs[label])} packets (25–40 s), inside
                    Vegas' [2, 4], and P_avg inside Algorithm 1's band around R', so no rule acts.
                    They stay within {pct(worst[label])} of 10 Mbit/s,
                    {"inside" if worst[label] <= GAMMA else "outside"} the paper's ±20 % range.
                    """
                )
                if worst[label] > 0.10
                else "",
            )
        )
        reps.append(
            Reproduction.at_least(
                f"7{'bd'[k]}",
                "Fig. 9",
                f"{label}: the remaining flow takes its 12 Mbit/s back after the other leaves (42–50 s)",
                "within 2 s",
                back[label] / 12.0,
                0.9,
                pct,
            )
        )
    return Section(
        "7",
        "Other aggressive CCAs",
        "§7.3, Figs. 8–9",
        _variants_setup(ctx.scenario_file("variants.toml")),
        [ctx.rel(ctx.scenario("variants.toml"))],
        "variant-*",
        table,
        reps,
    )
