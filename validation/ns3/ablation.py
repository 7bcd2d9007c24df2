#!/usr/bin/env python3
"""What each ns-3 setting of the comparison does: a few scenarios run in ns-3 with our settings,
then with one of them returned to ns-3's default at a time, and with all of them at ns-3's
defaults, next to polycc. Prints a Markdown table (VALIDATION.md, "Ablation").

    python validation/ns3/ablation.py [--duration 30s] [--jobs 1]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import sys
from pathlib import Path

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=c.DEFAULT_CACHE)
    args = ap.parse_args()
    if c.ns3_available(build=True) is None:
        print("ablation.py: ns-3 (libns3-dev) not installed: run validation/ns3/install.sh", file=sys.stderr)
        return 2
    duration = c.parse_time(args.duration)
    points = [
        c.Point(cca, c.parse_rate(rate), c.parse_time(rtt), buf, loss, flows, duration)
        for cca, rate, rtt, buf, loss, flows in SCENARIOS
    ]
    runners = [c.Runner(opts, c.Cache(args.cache, opts), [1]) for _, opts in VARIANTS]
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
