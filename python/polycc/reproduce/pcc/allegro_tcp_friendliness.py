"""Allegro §4.3.1, Fig. 14: TCP friendliness. One normal TCP flow competes with N "selfish" flows,
each either a bundle of 10 parallel TCP flows ("TCP-Selfish") or one PCC flow; the normal flow's
mean throughput against each, and their ratio, over N and several network conditions."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from polycc.reproduce.common import (
    Context,
    Reproduction,
    SameSide,
    Section,
    Table,
    fmt,
    num,
    pct,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL, kernel_flow_keys
from polycc.reproduce.pcc.shared import (
    ALLEGRO,
    EPS_MAX,
    EPS_MIN,
    NO_SEND_JITTER,
    SEEDS,
    SEND_JITTER_KNOB,
    median,
    per_seed,
    ratio2,
    seed_ratios,
)
from polycc.reproduce.scenario_file import rate_mbps, seconds, size_text

SCENARIO = "tcp-friendliness.toml"
FIGURE = f"{ALLEGRO} Fig. 14"
PCC = "pcc-allegro"
TCP = "cubic"
SELFISH = "TCP-Selfish"
#: The selfish flows' kinds besides TCP-Selfish: PCC exactly paced (the rows judged), PCC with the
#: scenario file's host send-time noise (the knob rows), and PCC exactly paced with longer monitor
#: intervals (a diagnostic at the largest N, not judged).
PCC_EXACT = "PCC"
PCC_NOISE = "PCC, send noise"
PCC_LONG_MI = "PCC, long MIs"
#: The diagnostic's MI length, smoothed RTTs: Fig. 16's longest T_m (§4.2.2: 4.8 RTTs), with the
#: default's 0.5-RTT spread. An MI then holds about 2.5× the packets of the default 1.7–2.2 RTTs.
LONG_MI_RTTS = (4.8, 5.3)
#: §4.3.1: "a bundle of 10 parallel TCP flows, which we call TCP-Selfish".
BUNDLE = 10
#: Numbers of selfish flows. The paper's text gives none (the figure's axis only); ours span one
#: selfish flow to ten (101 TCP flows on the link for TCP-Selfish).
SELFISH_FLOWS = (1, 2, 5, 10)
#: The network conditions (rate, RTT), each with a 1-BDP drop-tail buffer. The text says only
#: "under various network conditions": the paper's usual Emulab path (100 Mbit/s, 30 ms; §4.1.6,
#: §4.2.1), the same with a short and a long RTT, and a slower link.
CONDITIONS = (("100Mbps", "30ms"), ("100Mbps", "10ms"), ("100Mbps", "100ms"), ("10Mbps", "30ms"))

# The criteria (issue 19), from Allegro §4.3.1, fixed before the runs. The ratio is the normal
# TCP flow's throughput against N PCC flows over its throughput against N TCP-Selfish bundles
# (the paper does not say which way it divides; this way > 1 means PCC is the friendlier).
#: 11a: "under various network conditions, when the number of selfish flows increases, PCC is
#: actually more friendly than TCP-Selfish". The paper prints no number: the ratio > 1 at the
#: largest N in every condition (the value is the lowest ratio over the conditions).
CRIT_11A = SameSide(1.0, above=True, paper_number=False)
#: 11b: the same sentence's "when the number of selfish flows increases": the ratio grows with N,
#: i.e. its value at the largest N over its value at one selfish flow > 1 in every condition (the
#: lowest over the conditions).
CRIT_11B = SameSide(1.0, above=True, paper_number=False)


#: The why-texts' monitor-interval statistics leave out the start-up before this time.
MI_FROM_S = 10.0
#: The why-texts' sending rates: just after start-up (s), and over the run's last seconds.
START_WINDOW_S = (2.0, 5.0)
END_WINDOW_S = 10.0
#: A loss this far above the safe utility's 5 % knee leaves its sigmoid below e^-5 (α = 100): the
#: utility is then about −x·L, which the why-text's argument needs.
FAR_ABOVE_KNEE = 0.10
#: Mathis et al. (1997): TCP's rate at random loss p is about C·MSS / (RTT·√p), C = √(3/2), for the
#: why-text's comparison; MSS is the Linux model's payload per segment.
MATHIS_C = math.sqrt(1.5)
MSS_BYTES = 1448


def mathis_mbps(loss: float, rtt_ms: float) -> float:
    if loss <= 0 or rtt_ms <= 0:
        return math.nan
    return MATHIS_C * MSS_BYTES * 8 / (rtt_ms / 1e3 * math.sqrt(loss)) / 1e6


def condition_label(rate: str, rtt: str) -> str:
    return f"{num(rate_mbps(rate))} Mbit/s, {num(seconds(rtt) * 1e3)} ms"


def flows(file_flows: Mapping[str, Mapping[str, Any]], kind: str, n: int, rtt: str) -> list[dict[str, Any]]:
    """The normal TCP flow (the kernel's CUBIC on the Linux model) and N selfish flows of `kind`:
    N bundles of `BUNDLE` such flows, or N PCC flows on the default stack (exactly paced but for
    `PCC_NOISE`, which keeps the file's send-time noise)."""
    linux = kernel_flow_keys(TCP)
    normal = {**file_flows["tcp"], **linux, "rtt": rtt}
    if kind == SELFISH:
        return [normal, {**file_flows["tcp"], **linux, "id": "selfish", "rtt": rtt, "count": BUNDLE * n}]
    pcc = {**file_flows["pcc"], "rtt": rtt, "count": n}
    if kind != PCC_NOISE:
        pcc["send_jitter"] = NO_SEND_JITTER
    if kind == PCC_LONG_MI:
        lo, hi = LONG_MI_RTTS
        pcc["cca"] = {"name": PCC, "mi_rtts_min": lo, "mi_rtts_max": hi}
    return [normal, pcc]


def run(ctx: Context) -> Section:
    seeds = 2 if ctx.quick else SEEDS
    duration = "30s" if ctx.quick else "100s"
    conditions = (CONDITIONS[0], CONDITIONS[-1]) if ctx.quick else CONDITIONS
    ns = (SELFISH_FLOWS[0], SELFISH_FLOWS[-1]) if ctx.quick else SELFISH_FLOWS
    file = ctx.scenario_file(SCENARIO)
    file_flows = {str(f["id"]): f for f in file.doc["flows"]}
    kinds = (SELFISH, PCC_EXACT, PCC_NOISE)
    top, low = ns[-1], ns[0]
    cases = [(c, n, k) for c in conditions for n in ns for k in kinds]
    cases += [(c, top, PCC_LONG_MI) for c in conditions]
    points = {
        (cond, n, kind): {
            "flows": flows(file_flows, kind, n, cond[1]),
            "links.0.rate": cond[0],
            "duration": duration,
        }
        for cond, n, kind in cases
    }
    name = "tcp-friendliness"
    res = ctx.sweep_labeled(name, SCENARIO, points, seeds=seeds)

    def normal(cond: tuple[str, str], n: int, kind: str) -> list[float]:
        return per_seed(res[(cond, n, kind)], "flow.tcp.goodput_mbps")

    def ratios(cond: tuple[str, str], n: int, kind: str = PCC_EXACT) -> list[float]:
        return seed_ratios(normal(cond, n, kind), normal(cond, n, SELFISH))

    def tcp_loss(cond: tuple[str, str], n: int, kind: str) -> float:
        """The normal flow's loss rate against `kind` (median of the seeds)."""
        return median(per_seed(res[(cond, n, kind)], "flow.tcp.loss_rate"))

    def pcc_own_loss(cond: tuple[str, str], n: int, kind: str = PCC_EXACT) -> float:
        """The PCC flows' mean loss rate (median of the seeds)."""
        ids = ["pcc"] if n == 1 else [f"pcc-{k}" for k in range(1, n + 1)]
        return median([sum(float(r[f"flow.{f}.loss_rate"]) for f in ids) / n for r in res[(cond, n, kind)]])

    def lowest_per_seed(kind: str) -> tuple[list[float], list[float]]:
        """Per seed, the lowest over the conditions of the ratio at N = top (11a) and of its
        growth from N = low (11b)."""
        at_top = [min(ratios(c, top, kind)[i] for c in conditions) for i in range(seeds)]
        growth = [
            min(ratios(c, top, kind)[i] / ratios(c, low, kind)[i] for c in conditions) for i in range(seeds)
        ]
        return at_top, growth

    table = Table(
        [
            "condition",
            "selfish flows N",
            f"normal TCP vs {SELFISH} (Mbit/s)",
            "normal TCP vs PCC (Mbit/s)",
            f"ratio PCC / {SELFISH} (median)",
            f"normal TCP's loss vs {SELFISH} / vs PCC",
            "PCC flows' loss",
            "with send noise (knob): normal TCP vs PCC (Mbit/s), ratio",
            "with send noise: loss of normal TCP / PCC flows",
            f"MIs of {num(LONG_MI_RTTS[0])}–{num(LONG_MI_RTTS[1])} RTTs (diagnostic): "
            "normal TCP (Mbit/s) / PCC flows' loss",
        ]
    )
    for c in conditions:
        for n in ns:
            long_mi = (
                f"{fmt(median(normal(c, n, PCC_LONG_MI)), 2)} / {pct(pcc_own_loss(c, n, PCC_LONG_MI), 2)}"
                if (c, n, PCC_LONG_MI) in res
                else "–"
            )
            table.add(
                condition_label(*c),
                str(n),
                fmt(median(normal(c, n, SELFISH)), 2),
                fmt(median(normal(c, n, PCC_EXACT)), 2),
                ratio2(median(ratios(c, n))),
                f"{pct(tcp_loss(c, n, SELFISH), 2)} / {pct(tcp_loss(c, n, PCC_EXACT), 2)}",
                pct(pcc_own_loss(c, n), 2),
                f"{fmt(median(normal(c, n, PCC_NOISE)), 2)}, {ratio2(median(ratios(c, n, PCC_NOISE)))}",
                f"{pct(tcp_loss(c, n, PCC_NOISE), 2)} / {pct(pcc_own_loss(c, n, PCC_NOISE), 2)}",
                long_mi,
            )

    def mi_loss(cond: tuple[str, str], n: int) -> tuple[float, float]:
        """The exactly paced PCC flows' monitor intervals' loss rate from MI_FROM_S on: (mean,
        standard deviation) over their bins, the median of each over the seeds."""
        per_run = []
        for r in res[(cond, n, PCC_EXACT)]:
            ts = ctx.timeseries(name, r)
            d = ts[ts["flow"].str.startswith("pcc") & (ts["t_s"] >= MI_FROM_S)]["cc_mi_loss"].dropna()
            per_run.append((float(d.mean()), float(d.std())))
        return median([m for m, _ in per_run]), median([sd for _, sd in per_run])

    def mi_noise_text(cond: tuple[str, str], n: int) -> str:
        mean_loss, sd_loss = mi_loss(cond, n)
        measured = (
            f"the PCC flows' monitor intervals measure a loss of {pct(mean_loss, 0)} with a standard "
            f"deviation of {fmt(100 * sd_loss, 0)} points over the time bins ({condition_label(*cond)}, "
            f"N = {n}, from {num(MI_FROM_S)} s on)"
        )
        if mean_loss < FAR_ABOVE_KNEE:
            # A flow's ±ε step moves the aggregate rate by about ε/N of it, and the loss
            # (1 − C/Σx) by about ε(1 − L)/N: each trial pair differs by twice that.
            step = 2 * EPS_MIN * (1 - mean_loss) / n
            long_loss = pcc_own_loss(cond, n, PCC_LONG_MI)
            long_tcp = median(normal(cond, n, PCC_LONG_MI))
            return (
                f"Why above the knee: {measured}. A trial's ±ε rate step moves the loss a flow "
                f"measures by about 2ε(1 − L)/N, {fmt(100 * step, 2)} points at ε = {num(EPS_MIN)}, "
                f"{fmt(sd_loss / step, 0)}× less than that noise: the trials are decided by the noise "
                "and the rates wander. With monitor intervals of "
                f"{num(LONG_MI_RTTS[0])}–{num(LONG_MI_RTTS[1])} RTTs (Fig. 16's longest T_m; about 2.5× "
                f"the packets each, the last column) the PCC flows' loss is {pct(long_loss, 1)} "
                f"(against {pct(pcc_own_loss(cond, n), 1)}) and the normal flow gets "
                f"{fmt(long_tcp, 2)} Mbit/s (against {fmt(median(normal(cond, n, PCC_EXACT)), 2)}; "
                f"{fmt(median(normal(cond, n, SELFISH)), 2)} against {SELFISH})."
            )
        start, end = rate_path(cond, n)
        fair = rate_mbps(cond[0]) / (n + 1)
        duration_s = seconds(duration)
        return (
            "Above the knee the utility is about −x·L, which grows as the rate falls, but the rate "
            "falls only by the trials' ε steps, and start-up left it far above its share: the PCC "
            f"flows send {fmt(start, 2)} Mbit/s each over {num(START_WINDOW_S[0])}–"
            f"{num(START_WINDOW_S[1])} s, {fmt(start / fair, 1)}× the fair share of "
            f"{fmt(fair, 2)} Mbit/s, and still {fmt(end, 2)} Mbit/s over the last "
            f"{num(END_WINDOW_S)} s ({fmt(end / fair, 1)}×; medians of the seeds): all {n} left "
            "start-up together, each at the rate of its last MI before its utility fell, when "
            f"the {n} together already sent several times the link rate. The steps are slow to "
            f"shed that: a trial's ±ε (ε {num(EPS_MIN)}–{num(EPS_MAX)}) changes the utility by about "
            f"2ε, and {measured}, {fmt(sd_loss / mean_loss, 2)} of the mean, so many trials are "
            f"inconclusive. Monitor intervals of {num(LONG_MI_RTTS[0])}–{num(LONG_MI_RTTS[1])} RTTs "
            f"do not help here (the PCC flows' loss {pct(pcc_own_loss(cond, n, PCC_LONG_MI), 1)}): "
            f"each trial takes longer, and {num(duration_s)} s holds fewer of them."
        )

    def rate_path(cond: tuple[str, str], n: int) -> tuple[float, float]:
        """The exactly paced PCC flows' mean sending rate (`cc_rate_mbps`) over START_WINDOW_S
        and over the run's last END_WINDOW_S, Mbit/s (medians over the seeds)."""
        starts, ends = [], []
        for r in res[(cond, n, PCC_EXACT)]:
            ts = ctx.timeseries(name, r)
            pcc = ts[ts["flow"].str.startswith("pcc")]
            lo, hi = START_WINDOW_S
            starts.append(float(pcc[(pcc["t_s"] >= lo) & (pcc["t_s"] < hi)]["cc_rate_mbps"].mean()))
            ends.append(float(pcc[pcc["t_s"] >= seconds(duration) - END_WINDOW_S]["cc_rate_mbps"].mean()))
        return median(starts), median(ends)

    def lowest(key: Any) -> tuple[str, str]:
        return min(conditions, key=key)

    c_top = lowest(lambda c: median(ratios(c, top)))
    c_top_rtt = median(per_seed(res[(c_top, top, PCC_EXACT)], "flow.tcp.rtt_ms.mean"))
    c_top_loss = tcp_loss(c_top, top, PCC_EXACT)
    why_11a = (
        f"At N = {top} the normal flow gets {fmt(median(normal(c_top, top, PCC_EXACT)), 2)} Mbit/s "
        f"against PCC and {fmt(median(normal(c_top, top, SELFISH)), 2)} against {SELFISH} on "
        f"{condition_label(*c_top)} (medians of the seeds). Against PCC it loses "
        f"{pct(c_top_loss, 1)} of its packets, where Mathis' formula bounds TCP at "
        f"{fmt(mathis_mbps(c_top_loss, c_top_rtt), 2)} Mbit/s at its mean RTT ({fmt(c_top_rtt, 0)} ms); "
        f"against {SELFISH} {pct(tcp_loss(c_top, top, SELFISH), 1)}, while {SELFISH}'s "
        f"{BUNDLE * top} flows leave it about its 1/(10N + 1) share "
        f"({fmt(rate_mbps(c_top[0]) / (BUNDLE * top + 1), 2)} Mbit/s). Two things take it down. "
        "First, the drops fall on its bursts: the exactly paced PCC flows keep the drop-tail queue "
        "full, and the normal flow's window bursts, sent at once, meet it. At N = "
        f"{low} it loses {pct(tcp_loss(c_top, low, PCC_EXACT), 1)} of its packets against the PCC "
        f"flow's {pct(pcc_own_loss(c_top, low), 1)} and gets "
        f"{fmt(median(normal(c_top, low, PCC_EXACT)), 2)} Mbit/s; with the knob's host send-time noise "
        f"on the PCC flow, {pct(tcp_loss(c_top, low, PCC_NOISE), 1)} against "
        f"{pct(pcc_own_loss(c_top, low, PCC_NOISE), 1)}, and "
        f"{fmt(median(normal(c_top, low, PCC_NOISE)), 2)} Mbit/s. At N = {top} it loses "
        f"{pct(c_top_loss, 1)} against the PCC flows' {pct(pcc_own_loss(c_top, top), 1)} (with the "
        f"noise {pct(tcp_loss(c_top, top, PCC_NOISE), 1)} against "
        f"{pct(pcc_own_loss(c_top, top, PCC_NOISE), 1)}). Second, the PCC flows' loss sits "
        f"{'above' if pcc_own_loss(c_top, top) > 0.05 else 'near'} the 5 % knee of the safe utility's "
        f"sigmoid at N = {top}, where at N = {low} it is {pct(pcc_own_loss(c_top, low), 1)}. "
        + mi_noise_text(c_top, top)
        if median(ratios(c_top, top)) <= 1.0
        else ""
    )
    c_growth = lowest(lambda c: median(ratios(c, top)) / median(ratios(c, low)))
    why_11b = (
        f"On {condition_label(*c_growth)} the ratio is {ratio2(median(ratios(c_growth, low)))} at N = "
        f"{low} and {ratio2(median(ratios(c_growth, top)))} at N = {top}: the PCC flows' mean loss "
        f"rises from {pct(pcc_own_loss(c_growth, low), 1)} to {pct(pcc_own_loss(c_growth, top), 1)} "
        f"and the normal flow's from {pct(tcp_loss(c_growth, low, PCC_EXACT), 1)} to "
        f"{pct(tcp_loss(c_growth, top, PCC_EXACT), 1)} (as 11a). " + mi_noise_text(c_growth, top)
        if median(ratios(c_growth, top)) <= median(ratios(c_growth, low))
        else ""
    )
    exact_top, exact_growth = lowest_per_seed(PCC_EXACT)
    noise_top, noise_growth = lowest_per_seed(PCC_NOISE)
    claim_a = (
        f"with N = {top} selfish flows the normal TCP flow keeps more against PCC than against "
        f"{SELFISH} in every condition (the lowest ratio PCC / {SELFISH} over the conditions)"
    )
    claim_b = (
        f"PCC's relative friendliness grows with N: the ratio at N = {top} over that at N = {low}, "
        "lowest over the conditions"
    )
    claims = [
        Reproduction.judge("11a", FIGURE, claim_a, "> 1 (figure)", exact_top, CRIT_11A, ratio2, why_11a),
        Reproduction.judge(
            "11a-jitter", FIGURE, claim_a, "> 1 (figure)", noise_top, CRIT_11A, ratio2, knob=SEND_JITTER_KNOB
        ),
        Reproduction.judge("11b", FIGURE, claim_b, "> 1 (figure)", exact_growth, CRIT_11B, ratio2, why_11b),
        Reproduction.judge(
            "11b-jitter",
            FIGURE,
            claim_b,
            "> 1 (figure)",
            noise_growth,
            CRIT_11B,
            ratio2,
            knob=SEND_JITTER_KNOB,
        ),
    ]
    conds = "; ".join(condition_label(*c) for c in conditions)
    return Section(
        "11",
        "TCP friendliness against parallel TCP",
        FIGURE,
        f"One normal TCP flow against N selfish flows, N = {', '.join(str(n) for n in ns)}: N bundles "
        f"of {BUNDLE} TCP flows ({SELFISH}) or N PCC flows; every flow starts at 0 s and sends "
        f"for the whole run. Network conditions (the paper's text names none, the figure's "
        f"legend is not in the seed text; ours): {conds}, each with a "
        f"{size_text(file.buffer())} drop-tail buffer; {duration.removesuffix('s')} s per run, "
        f"{seeds} seeds. PCC runs on the default stack, exactly paced in the rows judged and with "
        f'the scenario file\'s {SEND_JITTER_KNOB} in the knob rows (ids ending in "-jitter"), '
        f"and, as a diagnostic at N = {top}, exactly paced with monitor intervals of "
        f"{num(LONG_MI_RTTS[0])}–{num(LONG_MI_RTTS[1])} RTTs; the normal flow and {SELFISH} "
        f"(CUBIC, the kernel's default) on {LINUX_MODEL}, which draws nothing from the seed (the "
        f"{SELFISH} runs are alike across seeds). The ratio is the normal flow's goodput against N "
        f"PCC flows over that against N {SELFISH} bundles: above 1, PCC is the friendlier (the "
        "paper does not say which way it divides).",
        [ctx.rel(ctx.scenario(SCENARIO))],
        name,
        table,
        claims,
    )
