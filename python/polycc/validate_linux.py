"""`polycc validate linux`: the simulator's Linux TCP model (`stack = "linux"`) against the real
kernel in the emulated testbed, on a grid of dumbbell scenarios, written as a table into
VALIDATION.md between its markers.

Each row is one scenario: a kernel controller (cubic, bbr, reno) × flows × rate × RTT × buffer ×
random loss. The kernel side runs in real time (the scenario's duration per seed), so its results
are cached in a JSON-lines file keyed by the scenario, the seed and the kernel release; the
simulator side takes milliseconds and is always rerun, so a table shows the simulator that is
installed. A row agrees when the mean per-flow goodput is within 10 % and the flows' mean and
p95 RTT within 15 % of the kernel's; the p95 queueing delay at the bottleneck (measured per
packet on both sides) is shown beside them.

The mean RTT is a mean over time on both sides. The kernel side's is `TCP_INFO`'s smoothed RTT
read every 10 ms (`polycc-emu`'s sampler, `run.rs` `SAMPLE`), so each 10 ms of the run weighs
the same. The simulator's summary mean is per RTT sample, one per ACK, which weighs the periods
with the most ACKs in flight, those with a full buffer, more: with a 4-BDP buffer that made it up
to 60 % higher for the same queue. The simulator's side is therefore taken from its time series
recorded in 10-ms bins (`SIM_RTT_BIN`): per flow the mean over its bins of the bin's mean RTT
sample, bins without an ACK left out (the kernel's srtt only moves on ACKs as well). The p95 RTT
is taken alike: the kernel side's summary p95 is over its 10-ms srtt samples, the simulator's
over the same bins, per flow, then averaged over flows. A p95 of srtt is a p95 of a smoothed
signal (srtt follows a sample by 1/8 per ACK), which is why the raw per-ACK samples' p95 would
not compare.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from polycc.api import run_scenario
from polycc.scenario import Scenario

#: Agreement thresholds (issue 16): goodput within 10 %, mean and p95 RTT within 15 %.
GOODPUT_TOLERANCE = 0.10
RTT_TOLERANCE = 0.15

GRID_CCAS = ("cubic", "bbr", "reno")
GRID_FLOWS = (1, 2)
GRID_RATES = ("10Mbps", "50Mbps")
GRID_RTTS = ("20ms", "80ms")
GRID_BUFFERS = ("0.25bdp", "1bdp", "4bdp")
GRID_LOSSES = (0.0, 0.005)

#: The simulator side's time bin for its mean RTT: the kernel side's sampling period of TCP_INFO
#: (`polycc-emu` `run.rs` `SAMPLE`), so that both means weigh time alike (module docs).
SIM_RTT_BIN = "10ms"

#: VALIDATION.md's markers around the generated section.
BEGIN = "<!-- validate:linux:begin -->"
END = "<!-- validate:linux:end -->"


@dataclass(frozen=True)
class Row:
    cca: str
    flows: int
    rate: str
    rtt: str
    buffer: str
    loss: float

    def scenario(self, duration: str) -> dict[str, Any]:
        """The row's scenario: a dumbbell, the flows started 0.5 s apart on the kernel's TCP."""
        return {
            "name": f"linux-{self.cca}-{self.flows}x{self.rate}-{self.rtt}-{self.buffer}-{self.loss:g}",
            "duration": duration,
            "links": [
                {
                    "id": "bottleneck",
                    "rate": self.rate,
                    "loss": self.loss,
                    "queue": {"kind": "droptail", "size": self.buffer},
                }
            ],
            "flows": [
                {"id": f"f{i}", "cca": self.cca, "stack": "linux", "rtt": self.rtt, "start": f"{0.5 * i}s"}
                for i in range(self.flows)
            ],
        }

    def label(self) -> str:
        return f"{self.cca} {self.flows}× {self.rate} {self.rtt} {self.buffer} {100 * self.loss:g} %"


@dataclass
class Measured:
    """One side's numbers for a row, averaged over its seeds."""

    goodput_mbps: float
    rtt_mean_ms: float
    qdelay_p95_ms: float
    seeds: int
    rtt_p95_ms: float = math.nan


@dataclass
class Compared:
    row: Row
    kernel: Measured
    sim: Measured

    @property
    def goodput_ratio(self) -> float:
        return self.sim.goodput_mbps / self.kernel.goodput_mbps if self.kernel.goodput_mbps > 0 else math.nan

    @property
    def rtt_ratio(self) -> float:
        return self.sim.rtt_mean_ms / self.kernel.rtt_mean_ms if self.kernel.rtt_mean_ms > 0 else math.nan

    @property
    def rtt_p95_ratio(self) -> float:
        return self.sim.rtt_p95_ms / self.kernel.rtt_p95_ms if self.kernel.rtt_p95_ms > 0 else math.nan

    @property
    def agrees(self) -> bool:
        return (
            abs(self.goodput_ratio - 1) <= GOODPUT_TOLERANCE
            and abs(self.rtt_ratio - 1) <= RTT_TOLERANCE
            and abs(self.rtt_p95_ratio - 1) <= RTT_TOLERANCE
        )


def grid(
    ccas: Sequence[str] = GRID_CCAS,
    flows: Sequence[int] = GRID_FLOWS,
    rates: Sequence[str] = GRID_RATES,
    rtts: Sequence[str] = GRID_RTTS,
    buffers: Sequence[str] = GRID_BUFFERS,
    losses: Sequence[float] = GRID_LOSSES,
) -> list[Row]:
    return [Row(*p) for p in itertools.product(ccas, flows, rates, rtts, buffers, losses)]


#: The few rows `--quick` runs (and the test suite, shorter still).
QUICK = [
    Row("cubic", 1, "20Mbps", "40ms", "1bdp", 0.0),
    Row("bbr", 1, "20Mbps", "40ms", "1bdp", 0.0),
    Row("reno", 2, "20Mbps", "40ms", "1bdp", 0.0),
    Row("cubic", 1, "20Mbps", "40ms", "1bdp", 0.005),
]


#: One side's numbers for one run: goodput, mean RTT, p95 queueing delay, p95 RTT.
Numbers = tuple[float, float, float, float]


def _summary_numbers(summary: dict[str, Any]) -> Numbers:
    """The kernel side's numbers: its summary's RTT mean and p95 are already over time (10-ms
    samples of srtt)."""
    flows = summary["flows"]
    goodput = sum(f["goodput_mbps"] for f in flows) / len(flows)
    rtt = sum(f["rtt_ms"]["mean"] for f in flows) / len(flows)
    rtt_p95 = sum(f["rtt_ms"].get("p95", math.nan) for f in flows) / len(flows)
    qdelay = summary["links"][0]["queue_delay_ms"]["p95"]
    return goodput, rtt, qdelay, rtt_p95


def _per_flow_rtt(flows: pd.DataFrame) -> Any:
    return flows.dropna(subset=["rtt_ms"]).groupby("flow", sort=False)["rtt_ms"]


def time_weighted_rtt_ms(flows: pd.DataFrame) -> float:
    """The flows' mean RTT over time from a run's time series (columns flow, rtt_ms; one row per
    flow per bin): per flow the mean of its bins' RTT, bins without a sample left out; then the
    mean over flows, as the summary's per-flow means are averaged."""
    per_flow = _per_flow_rtt(flows).mean()
    return float(per_flow.mean()) if len(per_flow) else math.nan


def time_weighted_rtt_p95_ms(flows: pd.DataFrame) -> float:
    """As [`time_weighted_rtt_ms`], the 95th percentile of each flow's bins instead of their
    mean."""
    per_flow = _per_flow_rtt(flows).quantile(0.95)
    return float(per_flow.mean()) if len(per_flow) else math.nan


def _sim_numbers(scenario: dict[str, Any], seed: int) -> Numbers:
    """The simulator side's numbers, its RTT over time from bins of `SIM_RTT_BIN` (the bin only
    changes what is recorded, not the run)."""
    result = run_scenario(Scenario.from_dict({**scenario, "bin": SIM_RTT_BIN}), seed=seed)
    goodput, _, qdelay, _ = _summary_numbers(result.summary)
    return goodput, time_weighted_rtt_ms(result.flows), qdelay, time_weighted_rtt_p95_ms(result.flows)


def _average(values: Iterable[Numbers]) -> Measured:
    vs = list(values)
    n = len(vs)
    goodput, rtt, qdelay, rtt_p95 = (sum(v[k] for v in vs) / n for k in range(4))
    return Measured(goodput, rtt, qdelay, seeds=n, rtt_p95_ms=rtt_p95)


class KernelCache:
    """Kernel runs by (scenario, seed, kernel release), one JSON line each, so an interrupted grid
    resumes where it stopped."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    e = json.loads(line)
                    self.entries[e["key"]] = e["summary"]
                except (ValueError, KeyError):
                    continue  # a line cut by an interrupted write

    @staticmethod
    def key(scenario: dict[str, Any], seed: int) -> str:
        text = json.dumps({"scenario": scenario, "seed": seed, "kernel": os.uname().release}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def get(self, scenario: dict[str, Any], seed: int) -> dict[str, Any] | None:
        return self.entries.get(self.key(scenario, seed))

    def put(self, scenario: dict[str, Any], seed: int, summary: dict[str, Any]) -> None:
        k = self.key(scenario, seed)
        self.entries[k] = summary
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"key": k, "summary": summary}) + "\n")


def compare(
    rows: Sequence[Row],
    *,
    duration: str = "20s",
    lossy_seeds: int = 3,
    cache: Path | None = None,
    progress: Callable[[int, int, Row], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Compared]:
    """Runs every row on the kernel (or takes it from `cache`) and in the simulator."""
    store = KernelCache(cache)
    out = []
    for i, row in enumerate(rows):
        if progress is not None:
            progress(i, len(rows), row)
        scenario = row.scenario(duration)
        seeds = list(range(1, 1 + (lossy_seeds if row.loss > 0 else 1)))
        kernel, sim = [], []
        for seed in seeds:
            got = store.get(scenario, seed)
            if got is None:
                got = run_scenario(
                    Scenario.from_dict(scenario), seed=seed, backend="emu", cancelled=cancelled
                ).summary
                store.put(scenario, seed, got)
            kernel.append(_summary_numbers(got))
            sim.append(_sim_numbers(scenario, seed))
        out.append(Compared(row, _average(kernel), _average(sim)))
    return out


def markdown(results: Sequence[Compared], *, duration: str, lossy_seeds: int) -> str:
    """The table of VALIDATION.md's Linux section."""
    agree = sum(r.agrees for r in results)
    lines = [
        f"{agree} of {len(results)} rows agree (goodput within {GOODPUT_TOLERANCE:.0%}, mean and p95 RTT "
        f"within {RTT_TOLERANCE:.0%}); {duration} per run, 1 seed without random loss and {lossy_seeds} with "
        f"it (means over seeds). Kernel {os.uname().release}. RTT over time on both sides: the "
        f"kernel's srtt read every 10 ms, the simulator's RTT samples in {SIM_RTT_BIN} bins.",
        "",
        "| row | goodput kernel / sim (Mbit/s) | ratio | mean RTT kernel / sim (ms) | ratio | "
        "p95 RTT kernel / sim (ms) | ratio | p95 queue delay kernel / sim (ms) | agrees |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        k, m = r.kernel, r.sim
        lines.append(
            f"| {r.row.label()} | {k.goodput_mbps:.2f} / {m.goodput_mbps:.2f} | {r.goodput_ratio:.3f} "
            f"| {k.rtt_mean_ms:.1f} / {m.rtt_mean_ms:.1f} | {r.rtt_ratio:.3f} "
            f"| {k.rtt_p95_ms:.1f} / {m.rtt_p95_ms:.1f} | {r.rtt_p95_ratio:.3f} "
            f"| {k.qdelay_p95_ms:.1f} / {m.qdelay_p95_ms:.1f} | {'yes' if r.agrees else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def write_section(doc: Path, table: str) -> None:
    """Replaces the text between VALIDATION.md's Linux markers (which must be there)."""
    text = doc.read_text(encoding="utf-8")
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise ValueError(f"{doc}: no {BEGIN} ... {END} markers to write the Linux table between")
    doc.write_text(text[: begin + len(BEGIN)] + "\n" + table + text[end:], encoding="utf-8")


def to_json(results: Sequence[Compared]) -> list[dict[str, Any]]:
    return [
        {"row": asdict(r.row), "kernel": asdict(r.kernel), "sim": asdict(r.sim), "agrees": r.agrees}
        for r in results
    ]
