"""Cost of a PolyCC fusion written in Python (BENCHMARKS.md, "Python fusion functions").

Run the four modes under `perf stat -e instructions:u .venv/bin/python
python/bench/python_fusion_cost.py MODE` with MODE in builtin-ack, py-ack, builtin-rtt, py-rtt:
§3.2's pool (pilot BBR, copilot Copa, min pacing rate, 20 -> 10 Mbit/s at 5 s, 100 ms, 20 s) with
the built-in `min` or a Python `min`, fused per ACK or per RTT. The difference in instructions
between a `py-` mode and its `builtin-` twin, over the number of calls printed, is the cost of one
Python call; the goodput printed must be the same in both.
"""

from __future__ import annotations

import sys
from typing import Any

import polycc


def main(mode: str) -> None:
    kind, every = mode.split("-")
    calls = 0

    def lowest(values: list[float], pilot: int, quantity: str, target: float | None) -> float:
        nonlocal calls
        calls += 1
        return min(values)

    cca: dict[str, Any] = {
        "name": "poly",
        "pilot": "bbr",
        "copilots": ["copa"],
        "on": "rate",
        "fuse_every": every,
        "fuse": "min" if kind == "builtin" else "py:lowest",
    }
    scenario = {
        "name": "python-fusion-cost",
        "duration": "20s",
        "links": [
            {
                "id": "bottleneck",
                "queue": {"kind": "droptail", "size": "250KB"},
                "schedule": [{"at": "0s", "rate": "20Mbps"}, {"at": "5s", "rate": "10Mbps"}],
            }
        ],
        "flows": [{"id": "sender", "cca": cca, "rtt": "100ms"}],
    }
    r = polycc.run(scenario, fusions={"lowest": lowest})
    print(f"{mode}: {calls} Python calls, goodput {r.summary['flows'][0]['goodput_mbps']:.6f} Mbit/s")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("builtin-ack", "py-ack", "builtin-rtt", "py-rtt"):
        sys.exit("usage: python_fusion_cost.py builtin-ack|py-ack|builtin-rtt|py-rtt")
    main(sys.argv[1])
