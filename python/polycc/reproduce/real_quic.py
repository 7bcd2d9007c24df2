"""Key claims of the PolyCC, Janus and PCC reproductions over real QUIC (REPRODUCTION.md, the
section "Key claims over real QUIC").

Each claim's scenario runs twice: in the simulator, and in the emulated testbed with the flows
on real QUIC (s2n-quic driven by the same polycc controller through `polycc-quic`,
`stack = "quic"`); the TCP baselines the papers compared with run on the kernel's own TCP there
(`stack = "linux"`). The quantities and criteria are the reproductions' own (runs shorter
than the papers' where stated), over several seeds: each side's median decides, and the table
shows the range. Needs root and the testbed; about seven minutes of real time per seed.

    sudo .venv/bin/python -m polycc.reproduce.real_quic [--doc]
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from polycc.reproduce.common import Table, fmt, inflight_on_the_wire, pct, safe_div, span
from polycc.reproduce.janus import MMF_WINDOW, mmf_deviation, mmf_shares, mmf_targets, switching_outcome
from polycc.reproduce.polycc import POLY_BBR_COPA, POLY_BBR_CUBIC, convergence_time, rtt_variance_point
from polycc.reproduce.real_stacks import section_main, sim_and_testbed
from polycc.reproduce.scenario_file import ScenarioFile

if TYPE_CHECKING:
    from polycc.api import RunResult

#: The section's name in REPRODUCTION.md (`<!-- reproduce:real-quic:begin -->`).
SECTION = "real-quic"
#: PCC's random-loss runs here: shorter than the paper's 60 s (real time), same loss rates.
PCC_DURATION = "30s"
#: The scenario seeds each claim runs with (loss, cross traffic, the controllers' own draws).
SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class Claim:
    """A claim's outcome in one seed's runs. `parts`: the quantities it is computed from, by
    name, each as (simulator, real QUIC) and how to show it."""

    id: str
    claim: str
    paper: str
    criterion: str
    holds: Callable[[float], bool]
    show: Callable[[float], str]
    sim: float
    real: float
    parts: dict[str, tuple[float, float]] = field(default_factory=dict)
    show_parts: Callable[[float], str] = fmt


@dataclass(frozen=True)
class Outcome:
    """A claim over all seeds: its values per seed on each side."""

    first: Claim
    sims: list[float]
    reals: list[float]
    parts: dict[str, tuple[list[float], list[float]]]

    @staticmethod
    def of(runs: Sequence[Claim]) -> Outcome:
        first = runs[0]
        return Outcome(
            first,
            [c.sim for c in runs],
            [c.real for c in runs],
            {k: ([c.parts[k][0] for c in runs], [c.parts[k][1] for c in runs]) for k in first.parts},
        )

    def median(self, side: Sequence[float]) -> float:
        """The median, NaN where a run had none (a convergence never reached)."""
        return statistics.median(side) if side and not any(math.isnan(v) for v in side) else math.nan

    def cell(self, side: Sequence[float], show: Callable[[float], str]) -> str:
        text = show(self.median(side))
        if len(side) < 2:
            return text
        values = [v for v in side if not math.isnan(v)]
        missing = len(side) - len(values)
        ranged = [span(values, show)] if values else []
        return f"{text} ({', '.join([*ranged, *([f'{missing} without'] if missing else [])])})"

    def holds(self, side: Sequence[float]) -> bool:
        return self.first.holds(self.median(side))

    def held(self, side: Sequence[float]) -> str:
        return f"{sum(self.first.holds(v) for v in side)}/{len(side)}"


def _goodput(r: RunResult) -> float:
    return float(r.summary["flows"][0]["goodput_mbps"])


def _ratio(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.2f}×"


#: The controllers PolyCC's claims compare.
LABELS = {"poly": "PolyCC", "bbr": "BBR v1"}


def polycc_claims(papers: Path, seed: int) -> list[Claim]:
    rtt = papers / "polycc" / "rtt-variance.toml"
    g: dict[tuple[str, int, str], float] = {}
    for label, cca in (("poly", POLY_BBR_CUBIC), ("bbr", "bbr")):
        for d in (20, 70):
            sim, emu = sim_and_testbed(rtt, {**rtt_variance_point(d), "flows.0.cca": cca, "seed": seed})
            g[(label, d, "sim")], g[(label, d, "real")] = _goodput(sim), _goodput(emu)
    halving = papers / "polycc" / "bandwidth-halving.toml"
    conv: dict[tuple[str, str], float] = {}
    for label, cca in (("poly", POLY_BBR_COPA), ("bbr", "bbr")):
        runs = sim_and_testbed(halving, {"flows.0.cca": cca, "seed": seed})
        for side, r in zip(("sim", "real"), runs, strict=True):
            f = r.flows[r.flows["flow"] == "sender"]
            inflight = f[inflight_on_the_wire(f)].to_numpy()
            conv[(label, side)] = convergence_time(f["t_s"].to_numpy(), inflight)

    def ratio_at(d: int, side: str) -> float:
        return safe_div(g[("poly", d, side)], g[("bbr", d, side)])

    def goodputs(d: int) -> dict[str, tuple[float, float]]:
        return {
            f"{name} goodput (Mbit/s)": (g[(k, d, "sim")], g[(k, d, "real")]) for k, name in LABELS.items()
        }

    conv_parts = {
        f"{name} convergence time (s)": (conv[(k, "sim")], conv[(k, "real")]) for k, name in LABELS.items()
    }

    return [
        Claim(
            "PolyCC 1a",
            "Similar goodput at ±20 ms RTT variation (ACK aggregation): PolyCC / BBR v1",
            "similar",
            "0.8 .. 1.25",
            lambda v: 0.8 <= v <= 1.25,
            _ratio,
            ratio_at(20, "sim"),
            ratio_at(20, "real"),
            goodputs(20),
        ),
        Claim(
            "PolyCC 1c",
            "Higher goodput at ±70 ms: PolyCC / BBR v1",
            "1.82× .. 10.35×",
            "≥ 1.5×",
            lambda v: v >= 1.5,
            _ratio,
            ratio_at(70, "sim"),
            ratio_at(70, "real"),
            goodputs(70),
        ),
        Claim(
            "PolyCC 2a",
            "Bandwidth halving (20 → 10 Mbit/s): convergence time of PolyCC / BBR v1",
            "0.459×",
            "≤ 0.6×",
            lambda v: v <= 0.6,
            _ratio,
            safe_div(conv[("poly", "sim")], conv[("bbr", "sim")]),
            safe_div(conv[("poly", "real")], conv[("bbr", "real")]),
            conv_parts,
        ),
    ]


def janus_claims(papers: Path, seed: int) -> list[Claim]:
    sim, emu = sim_and_testbed(papers / "janus" / "switching.toml", {"seed": seed})
    s, k = switching_outcome(sim), switching_outcome(emu)
    mmf = papers / "janus" / "mmf-25.toml"
    mmf_file = ScenarioFile.read(mmf)
    shares = mmf_shares(mmf_file.rate_mbps(), mmf_targets(mmf_file))
    mmf_sim, mmf_emu = sim_and_testbed(mmf, {"seed": seed})
    yes = 1.0
    return [
        Claim(
            "Janus 1a",
            "A new flow turns conservative once its throughput reaches its target (Fig. 6)",
            "0.7 s",
            "≤ 1.5 s",
            lambda v: v <= 1.5,
            lambda v: f"{v:.1f} s",
            s.first_conservative,
            k.first_conservative,
        ),
        Claim(
            "Janus 1b",
            "Bursty cross traffic turns it aggressive (Fig. 6)",
            "yes",
            "yes",
            lambda v: v == yes,
            lambda v: fmt(v == yes),
            float(s.aggressive_in_burst),
            float(k.aggressive_in_burst),
        ),
        Claim(
            "Janus 1c",
            "After the burst, back to conservative, and stays (Fig. 6)",
            "≈ 10 s",
            "≤ 12 s",
            lambda v: v <= 12.0,
            lambda v: f"{v:.1f} s",
            s.back if s.stays else float("nan"),
            k.back if k.stays else float("nan"),
        ),
        Claim(
            "Janus 2a",
            f"On {mmf_file.rate_mbps():g} Mbit/s every Janus flow gets its max-min fair share "
            f"(largest deviation, {MMF_WINDOW[0]:g}–{MMF_WINDOW[1]:g} s; Figs. 11–12)",
            "close match",
            "≤ 10 %",
            lambda v: v <= 0.10,
            pct,
            mmf_deviation(mmf_sim, shares),
            mmf_deviation(mmf_emu, shares),
        ),
    ]


def pcc_claims(papers: Path, seed: int) -> list[Claim]:
    loss = papers / "pcc" / "random-loss.toml"
    share: dict[tuple[str, float, str], float] = {}
    for cca, stack in (("pcc-allegro", "quic"), ("cubic", "linux")):
        for p in (0.01, 0.02):
            over = {
                "flows.0.cca": cca,
                "links.0.loss": p,
                "links.0.ack_loss": p,
                "duration": PCC_DURATION,
                "seed": seed,
            }
            sim, emu = sim_and_testbed(loss, {**over, "flows.0.stack": stack}, sim_noise=stack != "linux")
            share[(cca, p, "sim")], share[(cca, p, "real")] = _goodput(sim) / 100.0, _goodput(emu) / 100.0
    return [
        Claim(
            "PCC 1a",
            "PCC keeps > 95 % of 100 Mbit/s at 1 % random loss (Fig. 7)",
            "> 95 %",
            "≥ 90 %",
            lambda v: v >= 0.90,
            pct,
            share[("pcc-allegro", 0.01, "sim")],
            share[("pcc-allegro", 0.01, "real")],
        ),
        Claim(
            "PCC 1b",
            "PCC degrades gracefully at 2 % loss (Fig. 7)",
            "74 %",
            "≥ 50 %",
            lambda v: v >= 0.5,
            pct,
            share[("pcc-allegro", 0.02, "sim")],
            share[("pcc-allegro", 0.02, "real")],
        ),
        Claim(
            "PCC 1c",
            "PCC / CUBIC at 1 % loss (CUBIC: the kernel's in the testbed, its model in the simulator)",
            "10×",
            "≥ 3×",
            lambda v: v >= 3.0,
            _ratio,
            safe_div(share[("pcc-allegro", 0.01, "sim")], share[("cubic", 0.01, "sim")]),
            safe_div(share[("pcc-allegro", 0.01, "real")], share[("cubic", 0.01, "real")]),
            {
                "PCC's share of the link": (
                    share[("pcc-allegro", 0.01, "sim")],
                    share[("pcc-allegro", 0.01, "real")],
                ),
                "CUBIC's share of the link": (share[("cubic", 0.01, "sim")], share[("cubic", 0.01, "real")]),
            },
            pct,
        ),
    ]


def render(outcomes: list[Outcome], seeds: Sequence[int] = SEEDS) -> str:
    table = Table(["#", "claim", "paper", "criterion", "simulator", "real QUIC", "holds: sim / real (runs)"])
    parts = Table(["#", "quantity", "simulator", "real QUIC"])
    for o in outcomes:
        c = o.first
        table.add(
            c.id,
            c.claim,
            c.paper,
            c.criterion,
            o.cell(o.sims, c.show),
            o.cell(o.reals, c.show),
            f"{fmt(o.holds(o.sims))} / {fmt(o.holds(o.reals))} ({o.held(o.sims)} / {o.held(o.reals)})",
        )
        for name, (sims, reals) in o.parts.items():
            parts.add(c.id, name, o.cell(sims, c.show_parts), o.cell(reals, c.show_parts))
    held = sum(o.holds(o.reals) for o in outcomes)
    seed_list = ", ".join(str(s) for s in seeds)
    return "\n".join(
        [
            "## Key claims over real QUIC",
            "",
            "Generated by `sudo .venv/bin/python -m polycc.reproduce.real_quic --doc`; do not edit by hand.",
            "Each claim's scenario (the reproductions' files) runs in the simulator and in the emulated",
            "testbed with the polycc controller on real QUIC (s2n-quic through `polycc-quic`,",
            "`stack = \"quic\"`); the papers' TCP baseline runs on the kernel's TCP there. Each runs",
            f"with seeds {seed_list}: a cell is the median with the range in brackets, and the median",
            "decides (a dash: a run without a value, e.g. a convergence never reached).",
            f"PCC's runs last {PCC_DURATION} (the paper's 60 s in the simulator's own section), and the",
            "testbed's hosts replace the scenario's send-time noise. Criteria are the reproductions'.",
            f"{held} of {len(outcomes)} claims hold over real QUIC.",
            "",
            table.markdown(),
            "",
            "The quantities behind the ratios:",
            "",
            parts.markdown(),
            "",
        ]
    )


def render_all(papers: Path, seeds: Sequence[int] = SEEDS) -> str:
    runs = [[*polycc_claims(papers, s), *janus_claims(papers, s), *pcc_claims(papers, s)] for s in seeds]
    return render([Outcome.of(list(claim_runs)) for claim_runs in zip(*runs, strict=True)], seeds)


def main(argv: list[str] | None = None) -> None:
    section_main((__doc__ or "").splitlines()[0], SECTION, render_all, argv)


if __name__ == "__main__":
    main()
