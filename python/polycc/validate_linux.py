"""`polycc validate linux`: the simulator's Linux TCP model (`stack = "linux"`) against the real
kernel in the emulated testbed, on a grid of dumbbell scenarios, written as a table into
VALIDATION.md between its markers.

Each row is one scenario: a kernel controller (cubic, bbr, reno) × flows × rate × RTT × buffer ×
random loss. The kernel side runs in real time (the scenario's duration per seed), so its results
are cached in a JSON-lines file keyed by the scenario, the seed and the kernel release; the
simulator side takes milliseconds and is always rerun, so a table shows the simulator that is
installed. When only the model changed, the kernel side can be read back from the table already
in VALIDATION.md (`kernel_from_table`; the CLI's `--kernel-from-doc`), so the simulator is judged
again against the same kernel runs without hours of real time. A row agrees when the mean
per-flow goodput is within 10 % and the flows' mean and p95 RTT within 15 % of the kernel's;
the p95 queueing delay at the bottleneck (measured per packet on both sides) is shown beside
them.

The RTTs are compared like for like. The kernel side's are `TCP_INFO`'s smoothed RTT read every
10 ms (`polycc-emu`'s sampler, `run.rs` `SAMPLE`): its mean and p95 are over time (each 10 ms of
the run weighs the same) and over a smoothed signal (srtt follows each ACK's sample by 1/8, RFC
6298 / `tcp_rtt_estimator`, which flattens the peaks of a sawtooth). The simulator's summary is
per RTT sample instead, one per ACK: its mean weighs the periods with the most ACKs, those with a
full buffer, more (with a 4-BDP buffer up to 60 % higher for the same queue), and its p95 is that
of the raw samples. So the simulator's side is taken from its time series recorded in 1-ms bins
(`SIM_SRTT_BIN`): per flow an srtt-like series follows each bin's mean sample by 1 − (7/8)^n for
the bin's n ACKs (its delivered packets over the delayed-ACK ratio, at least one; bins without a
sample leave it alone), read every 10 ms as the kernel's is; mean and p95 per flow over those
readings, then averaged over flows.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
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

#: The kernel side's sampling period of TCP_INFO (`polycc-emu` `run.rs` `SAMPLE`), in seconds.
KERNEL_SAMPLE_S = 0.010
#: The simulator side's time bin from which its srtt-like series is rebuilt: fine enough that a
#: bin holds about one ACK at 10 Mbit/s (module docs).
SIM_SRTT_BIN = "1ms"
SIM_SRTT_BIN_S = 0.001
#: RFC 6298 §2.3 alpha (Linux `tcp_rtt_estimator`: srtt += (sample − srtt) / 8 per ACK).
SRTT_GAIN = 1.0 / 8.0
#: Full-sized packets per ACK of the Linux model's receiver (delayed ACKs, RFC 1122 §4.2.3.2).
PACKETS_PER_ACK = 2.0

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


def srtt_like(flows: pd.DataFrame, *, packet_bytes: float = 1500.0) -> pd.DataFrame:
    """An srtt series per flow rebuilt from a time series in bins of `SIM_SRTT_BIN` (columns t_s,
    flow, rtt_ms, goodput_mbps), read every `KERNEL_SAMPLE_S` as the kernel's srtt is: columns
    flow, srtt_ms (readings before the flow's first sample left out)."""
    per_reading = round(KERNEL_SAMPLE_S / SIM_SRTT_BIN_S)
    out: list[pd.DataFrame] = []
    for flow, f in flows.groupby("flow", sort=False):
        rtt = f["rtt_ms"].to_numpy(dtype=float)
        goodput = f["goodput_mbps"].fillna(0.0).to_numpy(dtype=float)
        packets = goodput * 1e6 * SIM_SRTT_BIN_S / 8 / packet_bytes
        srtt, series = math.nan, []
        for k, (sample, n) in enumerate(zip(rtt, packets, strict=True)):
            if math.isfinite(sample):
                acks = max(1.0, n / PACKETS_PER_ACK)
                gain = 1.0 - (1.0 - SRTT_GAIN) ** acks
                srtt = sample if math.isnan(srtt) else srtt + gain * (sample - srtt)
            if (k + 1) % per_reading == 0 and math.isfinite(srtt):
                series.append(srtt)
        out.append(pd.DataFrame({"flow": flow, "srtt_ms": series}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame({"flow": [], "srtt_ms": []})


def _per_flow_srtt(readings: pd.DataFrame) -> Any:
    return readings.groupby("flow", sort=False)["srtt_ms"]


def srtt_mean_ms(readings: pd.DataFrame) -> float:
    """The flows' mean RTT over time from srtt readings (`srtt_like`): per flow, then averaged."""
    per_flow = _per_flow_srtt(readings).mean()
    return float(per_flow.mean()) if len(per_flow) else math.nan


def srtt_p95_ms(readings: pd.DataFrame) -> float:
    """As `srtt_mean_ms`, the 95th percentile of each flow's readings."""
    per_flow = _per_flow_srtt(readings).quantile(0.95)
    return float(per_flow.mean()) if len(per_flow) else math.nan


def _sim_numbers(scenario: dict[str, Any], seed: int) -> Numbers:
    """The simulator side's numbers, its RTTs from an srtt-like series (the bin only changes what
    is recorded, not the run)."""
    result = run_scenario(Scenario.from_dict({**scenario, "bin": SIM_SRTT_BIN}), seed=seed)
    goodput, _, qdelay, _ = _summary_numbers(result.summary)
    readings = srtt_like(result.flows)
    return goodput, srtt_mean_ms(readings), qdelay, srtt_p95_ms(readings)


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


class KernelTableError(ValueError):
    """A Linux table to read the kernel's numbers from is missing, or lacks a row."""


@dataclass
class KernelTable:
    """The kernel side of a table already written: its release and each row's numbers."""

    release: str
    rows: dict[str, Measured]


_HEADER_RELEASE = re.compile(r"Kernel (\S+?)\.? RTT over time")
_MEASURED_ROW = re.compile(
    r"^\| (?P<label>[^|]+?) \| (?P<g>[\d.]+) / [\d.]+ \| [\d.]+ \| (?P<r>[\d.]+) / [\d.]+ \| [\d.]+ "
    r"\| (?P<p>[\d.]+|nan) / [\d.a-z]+ \| [\d.a-z]+ \| (?P<q>[\d.]+) / [\d.]+ \|"
)


def kernel_from_table(text: str, *, lossy_seeds: int) -> KernelTable:
    """The kernel's numbers from the Linux section of `text` (VALIDATION.md), as `markdown`
    wrote them (rounded as printed). Raises KernelTableError naming what is missing."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise KernelTableError(f"no {BEGIN} ... {END} markers around a Linux table")
    section = text[begin:end]
    release = _HEADER_RELEASE.search(section)
    if release is None:
        raise KernelTableError("the Linux table's first line names no kernel release")
    rows: dict[str, Measured] = {}
    for line in section.splitlines():
        m = _MEASURED_ROW.match(line)
        if m is None:
            continue
        label = m["label"]
        lossy = not label.endswith(" 0 %")
        rows[label] = Measured(
            float(m["g"]),
            float(m["r"]),
            float(m["q"]),
            seeds=lossy_seeds if lossy else 1,
            rtt_p95_ms=float(m["p"]),
        )
    if not rows:
        raise KernelTableError("the Linux section has no table rows")
    return KernelTable(release.group(1), rows)


def compare(
    rows: Sequence[Row],
    *,
    duration: str = "20s",
    lossy_seeds: int = 3,
    cache: Path | None = None,
    kernel_table: KernelTable | None = None,
    progress: Callable[[int, int, Row], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Compared]:
    """Runs every row on the kernel (or takes it from `cache`, or from `kernel_table`) and in
    the simulator."""
    store = KernelCache(cache)
    out = []
    for i, row in enumerate(rows):
        if progress is not None:
            progress(i, len(rows), row)
        scenario = row.scenario(duration)
        seeds = list(range(1, 1 + (lossy_seeds if row.loss > 0 else 1)))
        if kernel_table is not None:
            measured = kernel_table.rows.get(row.label())
            if measured is None:
                raise KernelTableError(f"the kernel table has no row {row.label()!r}")
            sim_side = _average(_sim_numbers(scenario, seed) for seed in seeds)
            out.append(Compared(row, measured, sim_side))
            continue
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


def markdown(
    results: Sequence[Compared], *, duration: str, lossy_seeds: int, kernel_release: str | None = None
) -> str:
    """The table of VALIDATION.md's Linux section; the kernel's release is this machine's unless
    the kernel side came from elsewhere."""
    agree = sum(r.agrees for r in results)
    lines = [
        f"{agree} of {len(results)} rows agree (goodput within {GOODPUT_TOLERANCE:.0%}, mean and p95 RTT "
        f"within {RTT_TOLERANCE:.0%}); {duration} per run, 1 seed without random loss and {lossy_seeds} with "
        f"it (means over seeds). Kernel {kernel_release or os.uname().release}. RTT over time on both "
        f"sides: the kernel's srtt read every 10 ms, the simulator's RTT samples smoothed alike (srtt's "
        f"1/8 per ACK) from {SIM_SRTT_BIN} bins and read every 10 ms.",
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
