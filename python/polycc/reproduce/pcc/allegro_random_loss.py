"""Allegro §4.1.4, Fig. 7: goodput under random loss (PCC against CUBIC and Illinois), and the
loss-resilient utility of §4.4.2 under heavy forward loss."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from polycc.reproduce.common import (
    AtLeast,
    Band,
    Context,
    Reproduction,
    Section,
    Table,
    WithinFactor,
    WithinPoints,
    fmt,
    num,
    pct,
    pct_exact,
    prose,
    ratio,
    safe_div,
    span,
)
from polycc.reproduce.kernel_tcp import KERNEL_PORTS, LINUX_CCA, LINUX_MODEL, PORTS_ON_MODEL, kernel_tcp_flows
from polycc.reproduce.pcc.shared import (
    ALLEGRO,
    BOUND_POINTS,
    EPS_MAX,
    EPS_MIN,
    NO_SEND_JITTER,
    RATIO_FACTOR,
    SAFE_UTILITY_KNEE,
    SEEDS,
    SEND_JITTER_KNOB,
    SHARE_POINTS,
    median,
    per_seed_goodput,
    seed_ratios,
)
from polycc.reproduce.scenario_file import PACKET_BYTES, ScenarioFile, size_text

SCENARIO = "random-loss.toml"
FIGURE = f"{ALLEGRO} Fig. 7"
PCC = "pcc-allegro"
LOSS_RESILIENT = "pcc-allegro/loss-resilient"
#: The knob rows (the scenario file's send-time noise kept on PCC; Illinois, on the Linux model,
#: takes none): PCC at 0.7 % and 2 %.
PCC_JITTER = "pcc-allegro/send-jitter"
#: Claim 1a: PCC keeps the link up to this loss rate.
LOW_LOSS = 0.01
#: The losses claims 1b-1g compare at (Fig. 7's points the paper quotes).
AT_2, AT_07, AT_01, ABOVE_KNEE = 0.02, 0.007, 0.001, 0.06
#: Seeds whose goodputs differ by more than this share of the capacity make a loss "split".
SPLIT_SHARE = 0.2
#: A run below this share of the capacity is trapped (the note).
TRAPPED_SHARE = 0.5
#: Start-up's MIs hold about a dozen packets (claim 1h's why).
MI_PACKETS = 12
#: Mathis et al. 1997: a Reno flow's rate is at most C·MSS / (RTT·√p), C = √(3/2).
MATHIS_C = math.sqrt(1.5)

# The criteria (issue 19), from Allegro §4.1.4 and §4.4.2, fixed before the runs.
#: 1a: "> 95 % of achievable throughput capacity until loss rate reaches 1 %" (a bound).
CRIT_1A = AtLeast(0.95 - BOUND_POINTS / 100, paper=0.95)
#: 1b: "graceful performance degradation from 95 % to 74 % of capacity" at 2 % (a value).
CRIT_1B = WithinPoints(0.74, SHARE_POINTS)
#: 1c / 1d: "CUBIC's performance collapse to 10× smaller than PCC with only 0.1 % loss rate and
#: 37× smaller than PCC with 2 % random loss".
CRIT_1C = WithinFactor(10.0, RATIO_FACTOR)
CRIT_1D = WithinFactor(37.0, RATIO_FACTOR)
#: 1e: Illinois "less than 10 % of PCC's throughput with only 0.7 % loss rate": a bound (> 10×),
#: and the paper's Illinois ratios run from it to 16× at 2 % (its abstract: "10–37×" over both
#: TCPs), so a band from 10× / 1.5 to 16× · 1.5 (a result far above the paper's range fails).
CRIT_1E = Band(10.0, 10.0 / RATIO_FACTOR, 16.0 * RATIO_FACTOR)
#: 1f: Illinois "16× smaller than PCC with 2 % random loss".
CRIT_1F = WithinFactor(16.0, RATIO_FACTOR)
#: 1g: "PCC's performance does decrease to 3 % of the optimal ... when loss rate increases to 6 %".
CRIT_1G = WithinPoints(0.03, SHARE_POINTS)
#: 1h (§4.4.2): "within 97 % of the optimal possible achieved throughput even under 50 % loss".
CRIT_1H = AtLeast(0.97 - BOUND_POINTS / 100, paper=0.97)
#: 1i (§4.4.2): "... and achieves 151× higher throughput than CUBIC under 10 % loss rate"
#: (forward loss only; added after the first run under issue 19, at the paper's number and the
#: ratio tolerance).
CRIT_1I = WithinFactor(151.0, RATIO_FACTOR)
#: 1i's loss rate, forward only, and the CUBIC row run there.
AT_10_FORWARD = 0.1
CUBIC_FORWARD = "cubic/forward-only"


@dataclass(frozen=True)
class _Sweep:
    """The sweep's axes and results: goodputs by (CCA, loss), mean and per seed."""

    losses: list[float]
    ccas: list[str]
    heavy: list[float]
    duration: str
    seeds: int
    g: dict[Any, float]
    per_seed: dict[Any, list[float]]
    capacity: float
    file: ScenarioFile

    def share(self, cca: str, loss: float) -> float:
        """The median share of the capacity over seeds."""
        return self.g[(cca, loss)] / self.capacity

    def shares(self, cca: str, loss: float) -> list[float]:
        """The share of the capacity per seed."""
        return [v / self.capacity for v in self.per_seed[(cca, loss)]]

    def ratios(self, a: str, b: str, loss: float) -> list[float]:
        """Goodput of `a` over `b` per seed."""
        return seed_ratios(self.per_seed[(a, loss)], self.per_seed[(b, loss)])

    @property
    def knob_losses(self) -> list[float]:
        return [AT_07, AT_2] if "illinois" in self.ccas else []


def _cca(cca: str, flows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The sender: CUBIC as the paper's, the Linux kernel's, and Illinois as polycc's port of the
    kernel module over the same Linux model (issue 19; that model's sender takes no send-time
    noise, its own host timing); PCC on the default stack, exactly paced (the scenario file's
    send-time noise is the knob)."""
    if cca in LINUX_CCA or cca in KERNEL_PORTS:
        return kernel_tcp_flows(flows, cca)
    return {"flows.0.cca": cca, "flows.0.send_jitter": NO_SEND_JITTER}


def _points(
    losses: list[float],
    ccas: list[str],
    heavy: list[float],
    knob: list[float],
    duration: str,
    flows: Sequence[Mapping[str, Any]],
) -> dict[Any, dict[str, Any]]:
    # The rows judged first send exactly paced (the scenario file's host send-time noise is the
    # knob, kept only in the labelled rows).
    points: dict[Any, dict[str, Any]] = {
        (cca, loss): {
            **_cca(cca, flows),
            "links.0.loss": loss,
            "links.0.ack_loss": loss,
            "duration": duration,
        }
        for cca in ccas
        for loss in losses
    }
    # §4.4.2: forward loss only, the loss-resilient utility T·(1 − L).
    for loss in heavy:
        points[(LOSS_RESILIENT, loss)] = {
            "flows.0.cca": {"name": "pcc-allegro", "utility": "loss-resilient"},
            "links.0.loss": loss,
            "links.0.ack_loss": 0.0,
            "flows.0.send_jitter": NO_SEND_JITTER,
            "duration": duration,
        }
    # 1i: CUBIC under the same forward-only loss as the loss-resilient PCC.
    if AT_10_FORWARD in heavy:
        points[(CUBIC_FORWARD, AT_10_FORWARD)] = {
            **{
                k: v for k, v in points[(LOSS_RESILIENT, AT_10_FORWARD)].items() if not k.startswith("flows.")
            },
            **_cca("cubic", flows),
        }
    # The knob rows: PCC with the scenario's send-time noise kept (1e, 1f with it).
    for loss in knob:
        points[(PCC_JITTER, loss)] = {
            k: v for k, v in points[(PCC, loss)].items() if k != "flows.0.send_jitter"
        }
    return points


def _sweep(ctx: Context) -> tuple[_Sweep, dict[Any, list[dict[str, Any]]]]:
    losses = (
        [0.001, 0.01, 0.02] if ctx.quick else [0.0, 0.001, 0.005, 0.007, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06]
    )
    ccas = [PCC, "cubic"] if ctx.quick else [PCC, "cubic", "illinois"]
    heavy = [0.1, 0.3] if ctx.quick else [0.1, 0.2, 0.3, 0.4, 0.5]
    duration = "15s" if ctx.quick else "60s"
    seeds = 2 if ctx.quick else SEEDS
    knob = [AT_07, AT_2] if "illinois" in ccas else []
    file = ctx.scenario_file(SCENARIO)
    res = ctx.sweep_labeled(
        "random-loss", SCENARIO, _points(losses, ccas, heavy, knob, duration, file.doc["flows"]), seeds=seeds
    )
    sweep = _Sweep(
        losses,
        ccas,
        heavy,
        duration,
        seeds,
        {k: median(per_seed_goodput(v)) for k, v in res.items()},
        {k: per_seed_goodput(v) for k, v in res.items()},
        file.rate_mbps(),
        file,
    )
    return sweep, res


def _table(s: _Sweep) -> Table:
    table = Table(["loss (each direction)", *[f"{c} goodput (Mbit/s)" for c in s.ccas], "PCC / CUBIC"])
    for loss in s.losses:
        table.add(
            pct(loss),
            *[s.g[(c, loss)] for c in s.ccas],
            ratio(safe_div(s.g[(PCC, loss)], s.g[("cubic", loss)])),
        )
    for loss in s.heavy:
        cubic = s.g.get((CUBIC_FORWARD, loss))
        table.add(
            f"{pct(loss, 0)} forward only, loss-resilient utility",
            fmt(s.g[(LOSS_RESILIENT, loss)]),
            "" if cubic is None else fmt(cubic, 2),
            *["" for _ in s.ccas[2:]],
            f"{pct(s.share(LOSS_RESILIENT, loss))} of capacity",
        )
    for loss in s.knob_losses:
        table.add(
            f"{pct(loss)}, with send jitter (knob)",
            fmt(s.g[(PCC_JITTER, loss)]),
            *["" for _ in s.ccas[1:]],
            "",
        )
    return table


def _mathis_mbps(loss: float, rtt_ms: float) -> float:
    """The Mathis bound for Reno (Mbit/s) at `loss` and `rtt_ms`, full-size packets."""
    return MATHIS_C * PACKET_BYTES * 8 / (rtt_ms * 1e3 * math.sqrt(loss))


def _claims_cubic(s: _Sweep) -> list[Reproduction]:
    """1a-1d: PCC keeps the link at low loss and degrades gracefully at 2 %; CUBIC collapses."""
    low = [x for x in s.losses if x <= LOW_LOSS]
    rtt_ms = s.file.rtt_ms()
    worst_low = [min(v) for v in zip(*(s.shares(PCC, x) for x in low), strict=True)]
    return [
        Reproduction.judge(
            "1a",
            FIGURE,
            f"PCC keeps > 95 % of capacity up to {pct_exact(LOW_LOSS)} loss "
            f"(worst of {', '.join(pct(x) for x in low)}, per seed)",
            "> 95 %",
            worst_low,
            CRIT_1A,
            pct,
        ),
        Reproduction.judge(
            "1b",
            FIGURE,
            f"PCC degrades gracefully at {pct_exact(AT_2)} loss",
            "74 %",
            s.shares(PCC, AT_2),
            CRIT_1B,
            pct,
            prose(
                f"""
                Per seed: {", ".join(fmt(v) for v in sorted(s.per_seed[(PCC, AT_2)]))} Mbit/s.
                Below the safe utility's {pct_exact(SAFE_UTILITY_KNEE)} knee a higher rate has the
                higher utility, so a flow that reaches the link's rate holds it; one that leaves
                start-up low can stay there (see this section's note). The paper gives no
                per-trial values, so whether its drop from 95 % to 74 % between 1 % and 2 %
                mixes such outcomes is not known. The buffer (not given) also matters: with a
                {size_text(s.file.buffer())} buffer the overflow losses PCC causes add to the
                random ones.
                """
            ),
        ),
        Reproduction.judge(
            "1c",
            FIGURE,
            f"CUBIC collapses under random loss: PCC / CUBIC at {pct(AT_01)} loss",
            "10×",
            s.ratios(PCC, "cubic", AT_01),
            CRIT_1C,
            ratio,
            prose(
                f"""
                Our CUBIC (the Linux model: the kernel's CUBIC with HyStart, RACK and PRR
                recovery) keeps more of the link at {pct(AT_01)} than the paper's 2015 Linux CUBIC
                ({fmt(s.g[("cubic", AT_01)])} Mbit/s, median); the Mathis bound for Reno at
                {pct(AT_01)} and {num(rtt_ms)} ms is {fmt(_mathis_mbps(AT_01, rtt_ms), 0)} Mbit/s,
                and CUBIC's concave growth adds to it.
                """
            ),
        ),
        Reproduction.judge(
            "1d",
            FIGURE,
            f"PCC / CUBIC at {pct_exact(AT_2)} loss",
            "37×",
            s.ratios(PCC, "cubic", AT_2),
            CRIT_1D,
            ratio,
        ),
    ]


def _claims_illinois(s: _Sweep) -> list[Reproduction]:
    """1e-1g (full runs only): Illinois far below PCC; the safe utility gives up above its knee.
    1e and 1f also as labelled rows with the scenario's host send-time noise (the knob)."""
    if "illinois" not in s.ccas:
        return []
    noise_ms = s.file.send_jitter_ms()
    g = s.g
    e_claim = f"Illinois below 10 % of PCC at {pct(AT_07)} loss: PCC / Illinois"
    f_claim = f"PCC / Illinois at {pct_exact(AT_2)} loss"
    return [
        Reproduction.judge(
            "1e",
            FIGURE,
            e_claim,
            "> 10× (10–16× at 0.7–2 %)",
            s.ratios(PCC, "illinois", AT_07),
            CRIT_1E,
            ratio,
            prose(
                f"""
                Illinois, polycc's port of Linux tcp_illinois over the simulator's model of the
                kernel's TCP (as the paper ran the kernel module), gets
                {fmt(g[("illinois", AT_07)])} Mbit/s at {pct(AT_07)} and
                {fmt(g[("illinois", AT_2)])} at {pct_exact(AT_2)} (medians). It sets its AIMD
                parameters from the average queueing delay d_a against the largest it has seen,
                d_m: α = 10 packets and β = 1/8 while d_a stays below d_m / 100, moving to
                α = 0.3 and β = 1/2 (Reno-like) as it rises, so the timing of its packets decides
                how hard it pushes. Exactly paced on the default stack, where d_a stays near zero
                and it runs at its most aggressive point, it got 38.0 and 21.5 Mbit/s (2.5× and
                4.4×); with {num(noise_ms)} ms of host send-time noise there it ran as Reno does
                under random loss (a ratio of about 12× at {pct(AT_07)}). The kernel model's
                window bursts and delayed ACKs lie between the two. The knob rows (1e-jitter,
                1f-jitter) give PCC that noise against the same Illinois runs.
                """
            ),
        ),
        Reproduction.judge(
            "1e-jitter",
            FIGURE,
            e_claim,
            "> 10× (10–16× at 0.7–2 %)",
            s.ratios(PCC_JITTER, "illinois", AT_07),
            CRIT_1E,
            ratio,
            knob=SEND_JITTER_KNOB,
        ),
        Reproduction.judge(
            "1f",
            FIGURE,
            f_claim,
            "16×",
            s.ratios(PCC, "illinois", AT_2),
            CRIT_1F,
            ratio,
            "As 1e.",
        ),
        Reproduction.judge(
            "1f-jitter",
            FIGURE,
            f_claim,
            "16×",
            s.ratios(PCC_JITTER, "illinois", AT_2),
            CRIT_1F,
            ratio,
            knob=SEND_JITTER_KNOB,
        ),
        Reproduction.judge(
            "1g",
            FIGURE,
            f"the safe utility gives up above its {pct_exact(SAFE_UTILITY_KNEE)} loss cap "
            f"(PCC at {pct_exact(ABOVE_KNEE)} loss)",
            "3 %",
            s.shares(PCC, ABOVE_KNEE),
            CRIT_1G,
            pct,
        ),
    ]


def _claim_loss_resilient(s: _Sweep) -> Reproduction:
    """1h: the loss-resilient utility near optimal under heavy forward loss (per seed, the worst
    of the forward losses)."""
    # Simulated random loss drops packets before they reach the bottleneck queue, so they take
    # none of its capacity: the best possible goodput is the capacity itself.
    worst = min(s.heavy, key=lambda x: s.g[(LOSS_RESILIENT, x)])
    worst_per_seed = [min(v) for v in zip(*(s.shares(LOSS_RESILIENT, x) for x in s.heavy), strict=True)]
    top = s.heavy[-2:]
    p = top[-1]
    # The binomial standard error of a loss rate p measured over an MI of MI_PACKETS packets.
    error = math.sqrt(p * (1 - p) / MI_PACKETS)
    return Reproduction.judge(
        "1h",
        f"{ALLEGRO} §4.4.2",
        f"the loss-resilient utility stays near optimal at {pct(s.heavy[0], 0)}–{pct(s.heavy[-1], 0)} "
        "forward loss (worst case per seed)",
        ">= 97 %",
        worst_per_seed,
        CRIT_1H,
        pct,
        prose(
            f"""
            Optimal here is the capacity: the simulator drops randomly lost packets before the
            bottleneck, so they cost no capacity (an emulator that drops after the link would
            make it capacity × (1 − loss)). Per seed at {pct(worst, 0)}: {
                ", ".join(fmt(v) for v in sorted(s.per_seed[(LOSS_RESILIENT, worst)]))
            } Mbit/s. T·(1 − L) rises with the rate at any loss, but an MI of a dozen packets
            measures a {"–".join(num(100 * x) for x in top)} % loss rate only to about
            ±{pct(error, 0)} (binomial), so in start-up a doubled rate can measure the lower
            utility and end the doubling at a few Mbit/s; from there RCTs of
            ±{num(100 * EPS_MIN)}–{pct_exact(EPS_MAX)} under that
            noise rarely agree, and the rate climbs only slowly. The authors' NSDI'15 code
            counts the first start-up MI's utility at half, as `pcc-allegro` now does
            (`first_mi_weight`), so the first doubling nearly always stands: on 20 Mbit/s at 50 %
            loss in the testbed that took our start-ups that stop low from 4 in 20 seeds to 1,
            against none of the authors' code's (VALIDATION.md, "The PCC authors' code in the
            testbed"). On this link the start takes five doublings, and the later comparisons
            still can stop it.
            """
        ),
    )


def _claim_vs_cubic_forward(s: _Sweep) -> list[Reproduction]:
    """1i: the loss-resilient PCC against CUBIC at 10 % forward loss."""
    if (CUBIC_FORWARD, AT_10_FORWARD) not in s.per_seed:
        return []
    return [
        Reproduction.judge(
            "1i",
            f"{ALLEGRO} §4.4.2",
            f"the loss-resilient utility against CUBIC at {pct(AT_10_FORWARD, 0)} forward loss (PCC / CUBIC)",
            "151×",
            s.ratios(LOSS_RESILIENT, CUBIC_FORWARD, AT_10_FORWARD),
            CRIT_1I,
            ratio,
        )
    ]


def _note(ctx: Context, s: _Sweep, res: Mapping[Any, list[dict[str, Any]]]) -> list[str]:
    """Why the table gives means over seeds: PCC is bistable near the knee (when it was here)."""
    split = [
        x
        for x in s.losses
        if max(s.per_seed[(PCC, x)]) - min(s.per_seed[(PCC, x)]) > SPLIT_SHARE * s.capacity
    ]
    if not split:
        return []

    def startup_exit_rate(row: Mapping[str, Any]) -> float:
        """PCC's rate (Mbit/s) in the first time bin after its start-up state."""
        ts = ctx.timeseries("random-loss", row)
        after = ts[(ts["flow"] == "sender") & (ts["cc_state"] != "starting")]
        return float(after["cc_rate_mbps"].iloc[0]) if len(after) else math.nan

    trapped_exits = [
        startup_exit_rate(r)
        for x in split
        for r in res[(PCC, x)]
        if float(r["flow.sender.goodput_mbps"]) < TRAPPED_SHARE * s.capacity
    ]
    per_seed = "; ".join(
        f"{', '.join(fmt(v) for v in sorted(s.per_seed[(PCC, x)]))} Mbit/s at {pct(x)}" for x in split
    )
    return [
        prose(
            f"""
            Near the safe utility's {pct_exact(SAFE_UTILITY_KNEE)} knee PCC is bistable (the
            table gives medians over seeds): per seed it gets {per_seed}. A flow whose start-up
            doubling reaches the link's rate measures each MI's loss over hundreds of packets,
            close to the path's rate, and stays. One that leaves start-up at a few Mbit/s (an
            early MI that lost more than {pct_exact(SAFE_UTILITY_KNEE)}) has MIs of a few dozen
            packets, in which one loss more or less moves the loss rate by several per cent
            across the knee: its trials then often favour the lower rate, and it stays trapped
            far below the link (the trapped runs left start-up at {
                span(trapped_exits, lambda v: f"{fmt(v, 1)} Mbit/s")
            }).
            """
        )
    ]


def run(ctx: Context) -> Section:
    s, res = _sweep(ctx)
    f = s.file
    return Section(
        "1",
        "Random loss",
        FIGURE,
        f"{num(s.capacity)} Mbit/s, {num(f.rtt_ms())} ms RTT, {size_text(f.buffer())} drop-tail buffer "
        "(not given in the paper), random loss on data and ACK directions; "
        f"{s.duration} per run (the paper does not give the duration), median of {s.seeds} seeds. "
        "Goodput counts unique application bytes. The loss-resilient rows drop data packets only, "
        "as §4.4.2. Senders pace exactly; the rows *with send jitter* keep the scenario file's "
        f"{SEND_JITTER_KNOB} (a knob we added, not counted). CUBIC runs on {LINUX_MODEL}, as the "
        f"paper's kernel CUBIC; Illinois, which that model lacks, as {PORTS_ON_MODEL}.",
        [ctx.rel(ctx.scenario(SCENARIO))],
        "random-loss",
        _table(s),
        [*_claims_cubic(s), *_claims_illinois(s), _claim_loss_resilient(s), *_claim_vs_cubic_forward(s)],
        _note(ctx, s, res),
    )
