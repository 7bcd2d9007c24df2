"""Synthetic cellular link traces in mahimahi format, generated from a seed (the suite's
`scenarios/suite/traces/`), so the suite has cellular paths without third-party traces.

Model: a Markov-modulated capacity. The link is in one of a few radio states (e.g. good, fair,
poor, outage), each with a mean capacity; it stays in a state for an exponentially distributed
time, then moves to another state drawn from that state's transition row. Within a state the
capacity follows a mean-reverting bounded random walk updated every 10 ms:
``c += theta * (mean - c) + sigma * mean * (2u - 1)``, clamped to [0.1, 2] × mean (an outage
state has capacity 0). The capacity is turned into delivery opportunities of 1500 bytes (what
mahimahi's format means by a line) by accumulating bytes per millisecond; a line is a
millisecond timestamp, repeated once per opportunity in that millisecond.

Only `random.Random.random()` is drawn (its Mersenne Twister stream is part of Python's
compatibility promise) and every other step is plain arithmetic, so the same seed writes the
same bytes on any machine: `python -m polycc.cell_traces scenarios/suite/traces` regenerates
the shipped files identically (tests/test_suite.py checks it).
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path

#: Bytes per delivery opportunity in mahimahi's format.
OPPORTUNITY_BYTES = 1500
#: Period of the within-state random walk.
STEP_MS = 10


@dataclass(frozen=True)
class RadioState:
    name: str
    mean_mbps: float
    #: Mean time in the state (exponential).
    mean_dwell_s: float
    #: Probabilities of the next state, by index (the state's own entry is ignored).
    next_state: tuple[float, ...]


@dataclass(frozen=True)
class TraceModel:
    name: str
    seed: int
    duration_s: int
    states: tuple[RadioState, ...]
    #: Mean reversion per step and relative step size of the within-state walk.
    theta: float = 0.1
    sigma: float = 0.15


#: The shipped traces: LTE while walking in a city (rarely poor, no outage), LTE while driving
#: (frequent state changes, short outages), and a slow 3G-like link. The means are of the order
#: of the public mahimahi LTE / UMTS traces (several to ~20 Mbit/s for LTE, ~1-3 for UMTS).
MODELS: tuple[TraceModel, ...] = (
    TraceModel(
        "lte-walking",
        seed=2101,
        duration_s=20,
        states=(
            RadioState("good", 18.0, 4.0, (0, 0.8, 0.2)),
            RadioState("fair", 9.0, 3.0, (0.6, 0, 0.4)),
            RadioState("poor", 3.0, 1.5, (0.3, 0.7, 0)),
        ),
    ),
    TraceModel(
        "lte-driving",
        seed=2102,
        duration_s=20,
        states=(
            RadioState("good", 14.0, 2.0, (0, 0.7, 0.2, 0.1)),
            RadioState("fair", 6.0, 1.5, (0.5, 0, 0.35, 0.15)),
            RadioState("poor", 1.5, 1.0, (0.2, 0.6, 0, 0.2)),
            RadioState("outage", 0.0, 0.3, (0.1, 0.3, 0.6, 0)),
        ),
        sigma=0.25,
    ),
    TraceModel(
        "3g-slow",
        seed=2103,
        duration_s=20,
        states=(
            RadioState("fair", 2.5, 3.0, (0, 0.8, 0.2)),
            RadioState("poor", 1.0, 2.0, (0.7, 0, 0.3)),
            RadioState("outage", 0.0, 0.4, (0.5, 0.5, 0)),
        ),
    ),
)


def _exponential(rng: random.Random, mean: float) -> float:
    return -mean * math.log(1.0 - rng.random())


def _choose(rng: random.Random, weights: tuple[float, ...], skip: int) -> int:
    total = sum(w for i, w in enumerate(weights) if i != skip)
    u = rng.random() * total
    for i, w in enumerate(weights):
        if i == skip:
            continue
        u -= w
        if u < 0:
            return i
    return max(i for i in range(len(weights)) if i != skip)


def capacity_mbps(model: TraceModel) -> list[float]:
    """The capacity of every STEP_MS step of the trace."""
    rng = random.Random(model.seed)
    steps = model.duration_s * 1000 // STEP_MS
    state = 0
    left_ms = _exponential(rng, model.states[0].mean_dwell_s) * 1000
    c = model.states[0].mean_mbps
    out: list[float] = []
    for _ in range(steps):
        if left_ms <= 0:
            state = _choose(rng, model.states[state].next_state, state)
            left_ms = _exponential(rng, model.states[state].mean_dwell_s) * 1000
            c = model.states[state].mean_mbps
        mean = model.states[state].mean_mbps
        c += model.theta * (mean - c) + model.sigma * mean * (2 * rng.random() - 1)
        c = min(max(c, 0.1 * mean), 2.0 * mean)
        out.append(c)
        left_ms -= STEP_MS
    return out


def mahimahi_lines(model: TraceModel) -> list[int]:
    """Opportunity timestamps (ms). The last line is at the trace's duration, so that the trace
    loops with that period (mahimahi's rule) even when it ends in an outage."""
    lines: list[int] = []
    credit = 0.0
    for k, c in enumerate(capacity_mbps(model)):
        per_ms = c * 1e6 / 8 / 1000
        for ms in range(k * STEP_MS + 1, (k + 1) * STEP_MS + 1):
            credit += per_ms
            while credit >= OPPORTUNITY_BYTES:
                lines.append(ms)
                credit -= OPPORTUNITY_BYTES
    end = model.duration_s * 1000
    if not lines or lines[-1] != end:
        lines.append(end)
    return lines


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for m in MODELS:
        path = out_dir / f"{m.name}.down"
        path.write_text("".join(f"{t}\n" for t in mahimahi_lines(m)), encoding="ascii")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m polycc.cell_traces OUT_DIR", file=sys.stderr)
        return 2
    for m, p in zip(MODELS, write_all(Path(argv[0])), strict=True):
        lines = p.read_text(encoding="ascii").count("\n")
        mean_mbps = lines * OPPORTUNITY_BYTES * 8 / 1e6 / m.duration_s
        print(f"{p}: {lines} opportunities, {mean_mbps:.2f} Mbit/s mean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
