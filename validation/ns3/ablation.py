#!/usr/bin/env python3
"""Ablations behind VALIDATION.md, printed as Markdown tables.

- `settings`: what each ns-3 setting of the comparison does: a few scenarios run in ns-3 with our
  settings, then with one of them returned to ns-3's default at a time, and with all of them at
  ns-3's defaults, next to polycc ("Ablation").
- model ablations (`bbr-quantum`, `cubic-hystart`): an explanation of a disagreement tested by
  changing the modelled mechanism in polycc (CCA parameters) and/or in ns-3 (attributes), each next
  to the unchanged runs; averaged over seeds when the scenario has random loss.

    python validation/ns3/ablation.py [--duration 30s] [--jobs 1] [--only settings,bbr-quantum]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare as c

#: (label, options): ours, each default restored alone, then all of ns-3's defaults.
VARIANTS: list[tuple[str, c.Ns3Options]] = [
    ("ours", c.Ns3Options()),
    ("RTO rule of ns-3", c.Ns3Options(rto="ns3")),
    ("MinRto 1 s", c.Ns3Options(min_rto_ms=1000)),
    ("DelAckCount 2", c.Ns3Options(delack=2)),
    ("ns-3 defaults", c.Ns3Options(rto="ns3", min_rto_ms=1000, delack=2)),
]

SCENARIOS = [
    ("newreno", "10Mbps", "20ms", "1bdp", 0.0, 1),
    ("newreno", "10Mbps", "100ms", "1bdp", 0.0, 1),
    ("newreno", "10Mbps", "100ms", "1bdp", 0.0, 4),
    ("cubic", "10Mbps", "100ms", "1bdp", 0.0, 1),
    ("cubic", "10Mbps", "100ms", "4bdp", 0.0, 1),
    ("vegas", "10Mbps", "20ms", "1bdp", 0.0, 1),
]


Scenario = tuple[str, str, str, str, float, int]


@dataclass(frozen=True)
class ModelAblation:
    """One explanation under test: polycc with `polycc_params` and/or ns-3 with `ns3_attributes`,
    next to the unchanged runs (polycc with `base_params`, ns-3 with our settings)."""

    name: str
    title: str
    scenarios: list[Scenario]
    polycc_params: dict[str, Any]
    base_params: dict[str, Any] = field(default_factory=dict)
    ns3_attributes: tuple[str, ...] = ()
    #: Seeds of scenarios with random loss (loss-free ones run seed 1: both are deterministic).
    lossy_seeds: int = 20


MODEL_ABLATIONS = [
    # D8: ns-3's TcpBbr::SetSendQuantum is one segment, Linux's (and polycc's) TSO goal is about
    # 1 ms of the pacing rate; the budget of three quanta stands in the queue.
    ModelAblation(
        name="bbr-quantum",
        title="BBR with ns-3's one-segment send quantum (D8)",
        scenarios=[
            ("bbr", rate, rtt, "1bdp", 0.0, flows)
            for flows in (1, 4)
            for rate in ("10Mbps", "100Mbps")
            for rtt in ("20ms", "100ms")
        ],
        polycc_params={"send_quantum_packets": 1},
    ),
    # D14: the single-flow CUBIC 0.1 % rows are decided by how far the initial slow start
    # overshoots; both simulators without their slow-start exit (HyStart++ in polycc, HyStart in
    # ns-3), next to both with it. polycc runs the curve only, as ns-3's TcpCubic.
    ModelAblation(
        name="cubic-hystart",
        title="CUBIC (curve only) with and without the slow-start exit (D14)",
        scenarios=[
            ("cubic", "10Mbps", "100ms", "1bdp", 0.001, 1),
            ("cubic", "10Mbps", "100ms", "4bdp", 0.001, 1),
            ("cubic", "100Mbps", "20ms", "1bdp", 0.001, 1),
        ],
        base_params={"reno_friendly": False},
        polycc_params={"reno_friendly": False, "hystart": False},
        ns3_attributes=("ns3::TcpCubic::HyStart=false",),
    ),
]


def _cell(r: c.SimResult) -> str:
    return (
        f"{r.mean_goodput:.2f} Mb/s, {r.qdelay_mean_ms:.2f} / {r.qdelay_p95_ms:.1f} ms, {r.drops:.0f} drops"
    )


def model_ablation_table(a: ModelAblation, duration_s: float, cache: Path, jobs: int) -> None:
    points = [
        c.Point(cca, c.parse_rate(rate), c.parse_time(rtt), buf, loss, flows, duration_s)
        for cca, rate, rtt, buf, loss, flows in a.scenarios
    ]
    lossy = list(range(1, a.lossy_seeds + 1))
    runners = {}
    for label, params, attrs in (
        ("base", a.base_params, ()),
        ("variant", a.polycc_params, a.ns3_attributes),
    ):
        opts = c.Ns3Options(attributes=attrs)
        runners[label] = c.Runner(
            opts, c.Cache(cache, opts), [1], lossy_seeds=lossy, polycc_params=params or None
        )
    base = runners["base"].rows(points, jobs)
    variant = runners["variant"].rows(points, jobs) if a.ns3_attributes else None
    polycc_variant = [
        c.SimResult.average([c.run_polycc(p, s, a.polycc_params) for s in runners["base"].seeds_for(p)])
        for p in points
    ]

    def shown(params: dict[str, Any]) -> str:
        return f"polycc ({json.dumps(params)})" if params else "polycc"

    head = ["scenario", "seeds", shown(a.base_params), shown(a.polycc_params), "ns-3"]
    if a.ns3_attributes:
        head.append(f"ns-3 ({', '.join(a.ns3_attributes)})")
    head += ["verdict", "verdict with the change"]
    print(f"**{a.title}**")
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for i, p in enumerate(points):
        b = base[i]
        changed = c.Row(p, polycc_variant[i], variant[i].ns3 if variant else b.ns3)
        label = f"{p.cca} {p.flows}× {c.fmt_rate(p.rate_bps)} {c.fmt_time(p.rtt_s)} {p.buffer}"
        if p.loss:
            label += f" {p.loss * 100:g} %"
        cells = [label, str(b.polycc.seeds), _cell(b.polycc), _cell(polycc_variant[i]), _cell(b.ns3)]
        if variant:
            cells.append(_cell(variant[i].ns3))
        cells += [b.verdict, changed.verdict]
        print("| " + " | ".join(cells) + " |")
    print()
    print(
        "Cells: mean goodput per flow, mean / p95 queueing delay, queue-overflow drops (means over "
        "seeds); verdicts as compare.py's (tolerances and seed noise)."
    )
    print()


def settings_table(duration: float, cache: Path, jobs: int) -> None:
    points = [
        c.Point(cca, c.parse_rate(rate), c.parse_time(rtt), buf, loss, flows, duration)
        for cca, rate, rtt, buf, loss, flows in SCENARIOS
    ]
    runners = [c.Runner(opts, c.Cache(cache, opts), [1]) for _, opts in VARIANTS]
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futures = {
            (i, j): ex.submit(runner.ns3, p, 1)
            for i, p in enumerate(points)
            for j, runner in enumerate(runners)
        }
        ns3 = {k: f.result() for k, f in futures.items()}
    head = ["scenario", "polycc"] + [label for label, _ in VARIANTS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for i, p in enumerate(points):
        pc = c.run_polycc(p, 1)

        def cell(r: c.SimResult, rtos: int | None = None) -> str:
            extra = f", {rtos} RTO" if rtos else ""
            return f"{r.mean_goodput:.2f} Mb/s, {r.qdelay_mean_ms:.1f} ms{extra}"

        label = f"{p.cca} {p.flows}× {c.fmt_rate(p.rate_bps)} {c.fmt_time(p.rtt_s)} {p.buffer}"
        cells = [label, cell(pc)]
        cells += [cell(ns3[(i, j)], int(ns3[(i, j)].extra["rtos"])) for j in range(len(VARIANTS))]
        print("| " + " | ".join(cells) + " |")
    print()
    print("Cells: mean goodput per flow, mean queueing delay, ns-3 retransmission timeouts (all flows).")
    print()


def main() -> int:
    names = ["settings"] + [a.name for a in MODEL_ABLATIONS]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=c.DEFAULT_CACHE)
    ap.add_argument(
        "--only",
        type=lambda t: [x for x in t.split(",") if x],
        default=names,
        help=f"comma list of tables among {', '.join(names)} (default: all)",
    )
    args = ap.parse_args()
    unknown = [n for n in args.only if n not in names]
    if unknown:
        ap.error(f"--only: unknown table(s) {', '.join(unknown)}; known: {', '.join(names)}")
    if c.ns3_available(build=True) is None:
        print("ablation.py: ns-3 (libns3-dev) not installed: run validation/ns3/install.sh", file=sys.stderr)
        return 2
    duration = c.parse_time(args.duration)
    if "settings" in args.only:
        settings_table(duration, args.cache, args.jobs)
    for a in MODEL_ABLATIONS:
        if a.name in args.only:
            model_ablation_table(a, duration, args.cache, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
