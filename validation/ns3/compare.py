#!/usr/bin/env python3
"""Runs one dumbbell scenario (or a grid of them) in polycc and in ns-3 and prints one table.

    python validation/ns3/compare.py --cca cubic --rate 100Mbps --rtt 20ms --buffer 1bdp \
        --loss 0.001 --flows 4 --duration 30s
    python validation/ns3/compare.py --grid --ccas newreno,cubic --jobs 2 --markdown out.md

For each scenario the table shows, for polycc (p) and ns-3 (n): goodput per flow, link utilisation,
mean and p95 queueing delay at the bottleneck, drops (queue overflow; random losses separately),
wall time, and the ratio polycc/ns-3 of each. A row agrees when the mean per-flow goodput is within
10 % and the mean and p95 queueing delays are within 25 % (or within one packet's transmission
time, the resolution of a queue that holds whole packets).

The ns-3 side is validation/ns3/build/dumbbell (built by validation/ns3/install.sh). ns-3 results
are cached in a JSON-lines file (default results/ns3/cache.jsonl) keyed by the scenario, the seed
and a hash of dumbbell.cc, so an interrupted grid resumes where it stopped; polycc runs take
milliseconds and are always redone, so the table reflects the polycc that is installed.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import itertools
import json
import math
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SOURCE = HERE / "dumbbell.cc"
BINARY = HERE / "build" / "dumbbell"
INSTALL = HERE / "install.sh"
DEFAULT_CACHE = REPO / "results" / "ns3" / "cache.jsonl"

#: Bytes of a full data packet on the wire in both simulators (1448 payload + 52 header bytes).
PACKET_BYTES = 1500
#: Agreement thresholds of the issue: goodput within 10 %, queueing delay within 25 %.
GOODPUT_TOLERANCE = 0.10
QDELAY_TOLERANCE = 0.25

#: polycc CCA name -> the name dumbbell.cc takes (its --cca), which selects the ns-3 TypeId.
NS3_CCAS: dict[str, str] = {
    "newreno": "newreno",
    "cubic": "cubic",
    "vegas": "vegas",
    "bbr": "bbr",
    "ledbat": "ledbat",
    "westwood": "westwood",  # ns3::TcpWestwood with ProtocolType=WestwoodPlus
    "hybla": "hybla",
    "illinois": "illinois",
    "htcp": "htcp",
}

GRID_FLOWS = (1, 4)
GRID_RATES = ("10Mbps", "100Mbps")
GRID_RTTS = ("20ms", "100ms")
GRID_BUFFERS = ("0.2bdp", "1bdp", "4bdp")
GRID_LOSSES = (0.0, 0.001, 0.01)


# --------------------------------------------------------------------------------------------
# Quantities


_RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_NUMBER = r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*"


def parse_rate(text: str) -> float:
    """'100Mbps' -> 1e8 (bit/s)."""
    m = re.fullmatch(_NUMBER + r"([A-Za-z]+)\s*", text)
    if not m or m.group(2).lower() not in _RATE_UNITS:
        raise ValueError(f"{text!r} is not a rate; write a number with bps, Kbps, Mbps or Gbps")
    return float(m.group(1)) * _RATE_UNITS[m.group(2).lower()]


def parse_time(text: str) -> float:
    """'20ms' -> 0.02 (seconds)."""
    m = re.fullmatch(_NUMBER + r"([a-z]+)\s*", text)
    if not m or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"{text!r} is not a duration; write a number with ns, us, ms, s or min")
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]


def parse_buffer(text: str) -> tuple[float, str]:
    """'1bdp' -> (1.0, 'bdp'); '100pkt' -> (100.0, 'pkt')."""
    m = re.fullmatch(_NUMBER + r"(bdp|pkt)\s*", text)
    if not m:
        raise ValueError(f"{text!r} is not a buffer size; write e.g. 1bdp, 0.2bdp or 100pkt")
    return float(m.group(1)), m.group(2)


def fmt_rate(bps: float) -> str:
    for unit, scale in (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3)):
        if bps >= scale and (bps / scale) == round(bps / scale, 6):
            return f"{bps / scale:g}{unit}"
    return f"{bps:g}bps"


def fmt_time(seconds: float) -> str:
    if seconds >= 1 and seconds == round(seconds, 6):
        return f"{seconds:g}s"
    return f"{seconds * 1e3:g}ms"


# --------------------------------------------------------------------------------------------
# Scenarios


@dataclass(frozen=True)
class Point:
    """One dumbbell scenario: N identical bulk flows through one drop-tail bottleneck."""

    cca: str
    rate_bps: float
    rtt_s: float
    buffer: str
    loss: float
    flows: int
    duration_s: float

    @property
    def queue_packets(self) -> int:
        """Buffer in whole 1500-byte packets (both simulators get this packet count)."""
        value, unit = parse_buffer(self.buffer)
        if unit == "pkt":
            return max(1, int(value))
        bdp_bytes = self.rate_bps * self.rtt_s / 8
        return max(1, math.floor(value * bdp_bytes / PACKET_BYTES + 1e-9))

    @property
    def label(self) -> str:
        return (
            f"{self.cca} {self.flows}x {fmt_rate(self.rate_bps)} {fmt_time(self.rtt_s)} "
            f"{self.buffer} loss={self.loss:g}"
        )

    def key(self, seed: int) -> str:
        d = asdict(self)
        d["seed"] = seed
        return json.dumps(d, sort_keys=True)


@dataclass(frozen=True)
class Ns3Options:
    """Settings of the ns-3 side that are not part of the scenario (VALIDATION.md explains them)."""

    min_rto_ms: float = 200.0
    delack: int = 1
    recovery: str = "prr"
    pacing: str = "auto"
    sack: bool = True
    #: "linux": RTO = srtt + max(4 rttvar, MinRto) as Linux; "ns3": ns-3's max(MinRto, srtt + 4 rttvar).
    rto: str = "linux"
    #: ns-3 attribute defaults for an ablation of ns-3's side, each "ns3::Class::Attribute=value"
    #: (passed to dumbbell as --ns3::Class::Attribute=value, which ns-3's CommandLine applies).
    attributes: tuple[str, ...] = ()

    def args(self) -> list[str]:
        return [
            f"--min-rto={self.min_rto_ms:g}",
            f"--delack={self.delack}",
            f"--recovery={self.recovery}",
            f"--rto={self.rto}",
            f"--pacing={self.pacing}",
            f"--sack={'true' if self.sack else 'false'}",
            *(f"--{a}" for a in self.attributes),
        ]

    def key(self) -> dict[str, Any]:
        """The options as they enter the cache key. `attributes` is left out while empty, so the
        runs cached before it existed keep their keys."""
        d = asdict(self)
        if not self.attributes:
            del d["attributes"]
        else:
            d["attributes"] = list(self.attributes)
        return d


@dataclass
class SimResult:
    """What one simulator reported for one run, in the table's units."""

    goodput_mbps: list[float]
    utilization: float
    qdelay_mean_ms: float
    qdelay_p95_ms: float
    drops: float
    random_losses: float
    retransmits: float
    wall_s: float
    extra: dict[str, Any] = field(default_factory=dict)
    #: Per-seed values behind an average: mean per-flow goodput, mean and p95 queueing delay.
    samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def mean_goodput(self) -> float:
        return sum(self.goodput_mbps) / len(self.goodput_mbps) if self.goodput_mbps else 0.0

    @property
    def seeds(self) -> int:
        return len(self.samples.get("goodput", [])) or 1

    def stderr(self, metric: str) -> float:
        """Standard error of the mean over seeds (0 for a single seed)."""
        xs = self.samples.get(metric, [])
        n = len(xs)
        if n < 2:
            return 0.0
        m = sum(xs) / n
        return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)

    @staticmethod
    def average(results: Sequence[SimResult]) -> SimResult:
        """Mean over seeds, flow by flow; keeps the per-seed values for the standard errors."""
        n = len(results)
        samples = {
            "goodput": [r.mean_goodput for r in results],
            "qdelay_mean": [r.qdelay_mean_ms for r in results],
            "qdelay_p95": [r.qdelay_p95_ms for r in results],
        }
        if n == 1:
            results[0].samples = samples
            return results[0]

        def mean(f: Callable[[SimResult], float]) -> float:
            return sum(f(r) for r in results) / n

        extra: dict[str, Any] = {}
        for k, v in results[0].extra.items():
            if isinstance(v, int | float):
                extra[k] = sum(float(r.extra.get(k, 0)) for r in results) / n
        flows = len(results[0].goodput_mbps)
        return SimResult(
            goodput_mbps=[sum(r.goodput_mbps[i] for r in results) / n for i in range(flows)],
            utilization=mean(lambda r: r.utilization),
            qdelay_mean_ms=mean(lambda r: r.qdelay_mean_ms),
            qdelay_p95_ms=mean(lambda r: r.qdelay_p95_ms),
            drops=mean(lambda r: r.drops),
            random_losses=mean(lambda r: r.random_losses),
            retransmits=mean(lambda r: r.retransmits),
            wall_s=mean(lambda r: r.wall_s),
            extra=extra,
            samples=samples,
        )


# --------------------------------------------------------------------------------------------
# The two simulators


def polycc_scenario(p: Point, seed: int, cca_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The polycc scenario equivalent to the ns-3 dumbbell (see VALIDATION.md). `cca_params`, when
    given, are parameters of polycc's CCA (e.g. {"reno_friendly": False}); ns-3 does not see them."""
    cca: str | dict[str, Any] = {"name": p.cca, **cca_params} if cca_params else p.cca
    return {
        "name": "ns3-compare",
        "description": p.label,
        "duration": fmt_time(p.duration_s),
        "seed": seed,
        "bin": "1s" if p.duration_s >= 1 else fmt_time(p.duration_s),
        "links": [
            {
                "id": "bottleneck",
                "rate": fmt_rate(p.rate_bps),
                "queue": {"kind": "droptail", "size": f"{p.queue_packets}pkt"},
                "loss": p.loss,
            }
        ],
        "flows": [
            {
                "id": "f",
                "cca": cca,
                "rtt": fmt_time(p.rtt_s),
                "count": p.flows,
                "ack": "every",
                # ns-3 paces only BBR (which sets its own rate); polycc's pacing=false likewise
                # leaves only a controller's own pacing rate in force.
                "pacing": False,
            }
        ],
    }


def run_polycc(p: Point, seed: int, cca_params: dict[str, Any] | None = None) -> SimResult:
    import polycc

    r = polycc.run(polycc_scenario(p, seed, cca_params))
    s = r.summary
    link = s["links"][0]
    return SimResult(
        goodput_mbps=[float(f["goodput_mbps"]) for f in s["flows"]],
        utilization=float(link["utilization"]),
        qdelay_mean_ms=float(link["queue_delay_ms"]["mean"]),
        qdelay_p95_ms=float(link["queue_delay_ms"]["p95"]),
        drops=float(link["drops"]),
        random_losses=float(link.get("random_losses", 0)),
        retransmits=float(sum(f["retransmits"] for f in s["flows"])),
        wall_s=float(s["wall_s"]),
    )


_NS3_ATTRIBUTE = re.compile(r"ns3::[A-Za-z0-9_]+::[A-Za-z0-9_]+=[^\s=]+")


def parse_ns3_attribute(text: str) -> str:
    """Checks one "ns3::Class::Attribute=value" (a leading "--" is dropped)."""
    a = text.strip().removeprefix("--")
    if not _NS3_ATTRIBUTE.fullmatch(a):
        raise ValueError(f"ns-3 attribute {text!r}: expected ns3::Class::Attribute=value")
    return a


def ns3_args(p: Point, seed: int, opts: Ns3Options) -> list[str]:
    return [
        f"--cca={NS3_CCAS.get(p.cca, p.cca)}",
        f"--rate={int(p.rate_bps)}bps",
        f"--rtt={p.rtt_s * 1e3:g}ms",
        f"--flows={p.flows}",
        f"--queue={p.queue_packets}",
        f"--loss={p.loss:g}",
        f"--duration={p.duration_s:g}",
        f"--seed={seed}",
        *opts.args(),
    ]


def run_ns3_raw(p: Point, seed: int, opts: Ns3Options, binary: Path = BINARY) -> dict[str, Any]:
    cmd = [str(binary), *ns3_args(p, seed, opts)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"{' '.join(cmd)} printed no JSON line: {proc.stdout[-500:]}")
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def ns3_result(raw: dict[str, Any]) -> SimResult:
    link = raw["link"]
    return SimResult(
        goodput_mbps=[float(f["goodput_mbps"]) for f in raw["flows"]],
        utilization=float(link["utilization"]),
        qdelay_mean_ms=float(link["queue_delay_ms"]["mean"]),
        qdelay_p95_ms=float(link["queue_delay_ms"]["p95"]),
        drops=float(link["drops"]),
        random_losses=float(link["random_losses"]),
        retransmits=float(sum(f["retransmits"] for f in raw["flows"])),
        wall_s=float(raw["wall_s"]),
        extra={
            "rtos": sum(f["rtos"] for f in raw["flows"]),
            "repeat_retransmits": sum(f.get("repeat_retransmits", 0) for f in raw["flows"]),
            # Counted since dumbbell.cc gained them (runs cached before report 0).
            "rto_expiries": sum(f.get("rto_expiries", 0) for f in raw["flows"]),
            "rto_lost_retransmissions": sum(f.get("rto_lost_retransmissions", 0) for f in raw["flows"]),
        },
    )


def ns3_available(build: bool = True) -> Path | None:
    """The dumbbell binary, building it (install.sh) first when asked; None when ns-3 is absent."""
    if build and INSTALL.exists():
        subprocess.run(["bash", str(INSTALL)], check=False, stdout=sys.stderr)
    return BINARY if BINARY.exists() else None


def model_version() -> int:
    """dumbbell.cc's kModelVersion, bumped whenever a change alters its results."""
    m = re.search(r"kModelVersion\s*=\s*(\d+)", SOURCE.read_text())
    if not m:
        raise RuntimeError(f"{SOURCE}: no kModelVersion")
    return int(m.group(1))


def cca_model_versions() -> dict[str, int]:
    """dumbbell.cc's kCcaModelVersion: per-CCA versions, bumped when a change alters one CCA only."""
    m = re.search(r"kCcaModelVersion\s*=\s*\{(.*?)\};", SOURCE.read_text(), re.S)
    if not m:
        return {}
    return {name: int(v) for name, v in re.findall(r'\{\s*"([^"]+)"\s*,\s*(\d+)\s*\}', m.group(1))}


def model_hash(opts: Ns3Options, cca: str | None = None) -> str:
    """Cache key of the ns-3 model of one CCA: dumbbell.cc's model version, the CCA's own version
    (only when it has one, so adding a CCA's entry leaves the other CCAs' keys unchanged) and the
    ns-3 options."""
    key: dict[str, Any] = {"version": model_version(), "opts": opts.key()}
    cca_version = cca_model_versions().get(cca, 0) if cca is not None else 0
    if cca_version:
        key["cca_version"] = cca_version
    text = json.dumps(key, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Cache


class Cache:
    """ns-3 results, one JSON object per line: {"key", "model", "raw"}; appended as runs finish.
    Entries are looked up by the point's CCA's model hash (`model_hash(opts, cca)`), so a change
    to one CCA's model in dumbbell.cc invalidates that CCA's runs only."""

    def __init__(self, path: Path | None, opts: Ns3Options) -> None:
        self.path = path
        self.opts = opts
        self.lock = threading.Lock()
        self.models: dict[str, str] = {}
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interruption
                self.entries[(e.get("model", ""), e["key"])] = e["raw"]

    def model(self, p: Point) -> str:
        if p.cca not in self.models:
            self.models[p.cca] = model_hash(self.opts, p.cca)
        return self.models[p.cca]

    def get(self, p: Point, seed: int) -> dict[str, Any] | None:
        return self.entries.get((self.model(p), p.key(seed)))

    def put(self, p: Point, seed: int, raw: dict[str, Any]) -> None:
        model, key = self.model(p), p.key(seed)
        with self.lock:
            self.entries[(model, key)] = raw
            if self.path is None:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                f.write(json.dumps({"key": key, "model": model, "raw": raw}) + "\n")


# --------------------------------------------------------------------------------------------
# Comparison


def ratio(a: float, b: float) -> float:
    if b == 0:
        return 1.0 if a == 0 else math.inf
    return a / b


@dataclass
class Row:
    point: Point
    polycc: SimResult
    ns3: SimResult

    @property
    def goodput_ratio(self) -> float:
        return ratio(self.polycc.mean_goodput, self.ns3.mean_goodput)

    @property
    def packet_time_ms(self) -> float:
        return PACKET_BYTES * 8 / self.point.rate_bps * 1e3

    def qdelay_close(self, a: float, b: float) -> bool:
        return abs(a - b) <= max(QDELAY_TOLERANCE * b, self.packet_time_ms)

    def _se_ratio(self, metric: str, a: float, b: float) -> float:
        """Standard error of a/b from the seeds' spread (delta method); 0 with one seed each."""
        if a == 0 or b == 0:
            return 0.0
        return (a / b) * math.hypot(self.polycc.stderr(metric) / a, self.ns3.stderr(metric) / b)

    @property
    def goodput_se(self) -> float:
        return self._se_ratio("goodput", self.polycc.mean_goodput, self.ns3.mean_goodput)

    @property
    def goodput_ok(self) -> bool:
        return abs(self.goodput_ratio - 1) <= GOODPUT_TOLERANCE

    @property
    def goodput_noise(self) -> bool:
        """Beyond the threshold, but not by more than two standard errors (seed noise)."""
        return abs(self.goodput_ratio - 1) - 2 * self.goodput_se <= GOODPUT_TOLERANCE

    def _qdelay_excess(self, metric: str, a: float, b: float, sigmas: float) -> float:
        se = math.hypot(self.polycc.stderr(metric), self.ns3.stderr(metric))
        return abs(a - b) - sigmas * se - max(QDELAY_TOLERANCE * b, self.packet_time_ms)

    def _qdelay_within(self, sigmas: float) -> bool:
        p, n = self.polycc, self.ns3
        return (
            self._qdelay_excess("qdelay_mean", p.qdelay_mean_ms, n.qdelay_mean_ms, sigmas) <= 0
            and self._qdelay_excess("qdelay_p95", p.qdelay_p95_ms, n.qdelay_p95_ms, sigmas) <= 0
        )

    @property
    def qdelay_ok(self) -> bool:
        return self._qdelay_within(0)

    @property
    def qdelay_noise(self) -> bool:
        return self._qdelay_within(2)

    @property
    def verdict(self) -> str:
        """'ok', or per metric 'DIFF <metric>' (significant) / 'noise <metric>' (within 2 SE)."""
        parts = []
        for name, ok, noise in (
            ("goodput", self.goodput_ok, self.goodput_noise),
            ("qdelay", self.qdelay_ok, self.qdelay_noise),
        ):
            if not ok:
                parts.append(f"{'noise' if noise else 'DIFF'} {name}")
        return ", ".join(parts) or "ok"

    @property
    def disagrees(self) -> bool:
        return "DIFF" in self.verdict


COLUMNS = [
    "cca",
    "flows",
    "rate",
    "rtt",
    "buffer",
    "loss",
    "seeds",
    "goodput/flow p",
    "goodput/flow n",
    "g ratio",
    "util p",
    "util n",
    "u ratio",
    "qdelay mean p",
    "qdelay mean n",
    "qm ratio",
    "qdelay p95 p",
    "qdelay p95 n",
    "q95 ratio",
    "drops p",
    "drops n",
    "d ratio",
    "wall p",
    "wall n",
    "w ratio",
    "verdict",
]


def _flows(values: Sequence[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _r(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.2f}"


def _r_se(x: float, se: float) -> str:
    return _r(x) if se == 0 else f"{_r(x)}±{se:.2f}"


def row_cells(r: Row) -> list[str]:
    p, n, pt = r.polycc, r.ns3, r.point
    return [
        pt.cca,
        str(pt.flows),
        fmt_rate(pt.rate_bps),
        fmt_time(pt.rtt_s),
        f"{pt.buffer} ({pt.queue_packets}p)",
        f"{pt.loss * 100:g}%",
        str(n.seeds),
        _flows(p.goodput_mbps),
        _flows(n.goodput_mbps),
        _r_se(r.goodput_ratio, r.goodput_se),
        f"{p.utilization:.3f}",
        f"{n.utilization:.3f}",
        _r(ratio(p.utilization, n.utilization)),
        f"{p.qdelay_mean_ms:.2f}",
        f"{n.qdelay_mean_ms:.2f}",
        _r(ratio(p.qdelay_mean_ms, n.qdelay_mean_ms)),
        f"{p.qdelay_p95_ms:.2f}",
        f"{n.qdelay_p95_ms:.2f}",
        _r(ratio(p.qdelay_p95_ms, n.qdelay_p95_ms)),
        f"{p.drops:g}",
        f"{n.drops:g}",
        _r(ratio(p.drops, n.drops)),
        f"{p.wall_s:.3f}s",
        f"{n.wall_s:.1f}s",
        f"{ratio(p.wall_s, n.wall_s):.4f}",
        r.verdict,
    ]


def text_table(rows: Sequence[Row]) -> str:
    cells = [COLUMNS] + [row_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(len(COLUMNS))).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows: Sequence[Row], polycc_params: dict[str, Any] | None = None) -> str:
    """One table per CCA under a `### cca` heading, with that CCA's summary line below it."""
    out: list[str] = []
    ccas = list(dict.fromkeys(r.point.cca for r in rows))
    suffix = f" (polycc parameters {json.dumps(polycc_params)})" if polycc_params else ""
    for cca in ccas:
        group = [r for r in rows if r.point.cca == cca]
        cols = COLUMNS[1:]
        lines = [f"### {cca}{suffix}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in group:
            cells = row_cells(r)[1:]
            cells[-1] = f"**{r.verdict}**" if r.disagrees else r.verdict
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", summary_text(group), ""]
        out.append("\n".join(lines))
    return "\n".join(out)


def summary_text(rows: Sequence[Row]) -> str:
    if not rows:
        return "no rows"

    def count(ok: Callable[[Row], bool], noise: Callable[[Row], bool]) -> str:
        n_ok = sum(ok(r) for r in rows)
        n_noise = sum(noise(r) and not ok(r) for r in rows)
        return f"{n_ok} within, {n_noise} more within seed noise (2 SE), {len(rows) - n_ok - n_noise} beyond"

    return (
        f"{len(rows)} scenarios. goodput (10 %): "
        + count(lambda r: r.goodput_ok, lambda r: r.goodput_noise)
        + ". queueing delay (25 % or one packet time): "
        + count(lambda r: r.qdelay_ok, lambda r: r.qdelay_noise)
        + ". both: "
        + count(lambda r: r.goodput_ok and r.qdelay_ok, lambda r: r.goodput_noise and r.qdelay_noise)
        + "."
    )


# --------------------------------------------------------------------------------------------
# Running


@dataclass
class Runner:
    """Runs points in both simulators: `seeds` for loss-free points (both simulators are then
    deterministic), `lossy_seeds` for points with random loss (results are averaged)."""

    opts: Ns3Options
    cache: Cache
    seeds: Sequence[int]
    binary: Path = BINARY
    log: Callable[[str], None] = lambda _msg: None
    lossy_seeds: Sequence[int] | None = None
    #: Parameters of polycc's CCA (an ablation of polycc's side; the ns-3 side is unchanged).
    polycc_params: dict[str, Any] | None = None

    def seeds_for(self, p: Point) -> Sequence[int]:
        return self.lossy_seeds if p.loss > 0 and self.lossy_seeds else self.seeds

    def ns3(self, p: Point, seed: int) -> SimResult:
        raw = self.cache.get(p, seed)
        if raw is None:
            raw = run_ns3_raw(p, seed, self.opts, self.binary)
            self.cache.put(p, seed, raw)
        return ns3_result(raw)

    def both(self, p: Point, seed: int) -> tuple[SimResult, SimResult]:
        return run_polycc(p, seed, self.polycc_params), self.ns3(p, seed)

    def row(self, p: Point) -> Row:
        runs = [self.both(p, s) for s in self.seeds_for(p)]
        return Row(p, SimResult.average([a for a, _ in runs]), SimResult.average([b for _, b in runs]))

    def rows(self, points: Sequence[Point], jobs: int) -> list[Row]:
        """Runs every (point, seed), `jobs` at a time (each one ns-3 process and one polycc run);
        returns the rows in the order of `points`."""
        tasks = [(i, s) for i, p in enumerate(points) for s in self.seeds_for(p)]
        done_runs: dict[int, dict[int, tuple[SimResult, SimResult]]] = {i: {} for i in range(len(points))}
        out: dict[int, Row] = {}
        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            futures = {ex.submit(self.both, points[i], s): (i, s) for i, s in tasks}
            for fut in cf.as_completed(futures):
                i, s = futures[fut]
                done_runs[i][s] = fut.result()
                seeds = self.seeds_for(points[i])
                if len(done_runs[i]) < len(seeds):
                    continue
                runs = [done_runs[i][k] for k in seeds]
                row = Row(
                    points[i],
                    SimResult.average([a for a, _ in runs]),
                    SimResult.average([b for _, b in runs]),
                )
                out[i] = row
                self.log(
                    f"[{len(out)}/{len(points)} {time.monotonic() - t0:.0f}s] {points[i].label}: "
                    f"goodput ratio {row.goodput_ratio:.2f}, {row.verdict}"
                )
        return [out[i] for i in range(len(points))]


def grid_points(
    ccas: Iterable[str],
    flows: Iterable[int],
    rates: Iterable[str],
    rtts: Iterable[str],
    buffers: Iterable[str],
    losses: Iterable[float],
    duration_s: float,
) -> list[Point]:
    return [
        Point(cca, parse_rate(rate), parse_time(rtt), buf, loss, n, duration_s)
        for cca, n, rate, rtt, buf, loss in itertools.product(ccas, flows, rates, rtts, buffers, losses)
    ]


def _csv(cast: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        return [cast(v.strip()) for v in text.split(",") if v.strip()]

    return parse


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description="Run a dumbbell scenario in polycc and in ns-3 and compare them.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument("--cca", default="newreno", help="congestion control (polycc name)")
    ap.add_argument("--rate", default="10Mbps", help="bottleneck rate")
    ap.add_argument("--rtt", default="20ms", help="base RTT of every flow")
    ap.add_argument("--buffer", default="1bdp", help="drop-tail buffer: N bdp or N pkt")
    ap.add_argument("--loss", type=float, default=0.0, help="random loss probability of data packets")
    ap.add_argument("--flows", type=int, default=1, help="number of identical flows")
    ap.add_argument("--duration", default="30s", help="simulated time")
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--seeds", type=int, default=1, help="seeds per loss-free scenario (averaged)")
    ap.add_argument(
        "--lossy-seeds",
        type=int,
        default=None,
        help="seeds per scenario with random loss (averaged; default: --seeds)",
    )
    ap.add_argument("--grid", action="store_true", help="run the cartesian product of the grid lists")
    ap.add_argument("--ccas", type=_csv(str), default=["newreno", "cubic"], help="grid: CCAs")
    ap.add_argument("--flows-list", type=_csv(int), default=list(GRID_FLOWS), help="grid: flow counts")
    ap.add_argument("--rates", type=_csv(str), default=list(GRID_RATES), help="grid: rates")
    ap.add_argument("--rtts", type=_csv(str), default=list(GRID_RTTS), help="grid: RTTs")
    ap.add_argument("--buffers", type=_csv(str), default=list(GRID_BUFFERS), help="grid: buffers")
    ap.add_argument("--losses", type=_csv(float), default=list(GRID_LOSSES), help="grid: loss rates")
    ap.add_argument("--jobs", type=int, default=1, help="scenarios run at once (one ns-3 process each)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="JSON-lines cache of ns-3 results")
    ap.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    ap.add_argument("--markdown", type=Path, help="also write the table as Markdown to this file")
    ap.add_argument("--json", type=Path, help="also write every row (both results) as JSON lines")
    ap.add_argument("--ns3-min-rto", type=float, default=200.0, help="ns-3 TcpSocketBase::MinRto (ms)")
    ap.add_argument("--ns3-delack", type=int, default=1, help="ns-3 TcpSocket::DelAckCount")
    ap.add_argument("--ns3-recovery", choices=["prr", "classic"], default="prr", help="ns-3 recovery")
    ap.add_argument("--ns3-pacing", choices=["auto", "on", "off"], default="auto", help="ns-3 pacing")
    ap.add_argument(
        "--ns3-rto",
        choices=["linux", "ns3"],
        default="linux",
        help="ns-3 RTO rule: linux = srtt + max(4 rttvar, MinRto); ns3 = max(MinRto, srtt + 4 rttvar)",
    )
    ap.add_argument(
        "--polycc-params",
        type=json.loads,
        default=None,
        help="JSON object of parameters for polycc's CCA, e.g. '{\"reno_friendly\": false}' "
        "(an ablation of polycc's side; ns-3 is unchanged)",
    )
    ap.add_argument(
        "--ns3-attribute",
        action="append",
        default=[],
        metavar="ns3::Class::Attribute=value",
        help="set an ns-3 attribute default (repeatable), e.g. ns3::TcpCubic::HyStart=false "
        "(an ablation of ns-3's side; cached apart from the runs without it)",
    )
    ap.add_argument("--no-build", action="store_true", help="do not run install.sh first")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        duration_s = parse_time(args.duration)
        if args.grid:
            points = grid_points(
                args.ccas, args.flows_list, args.rates, args.rtts, args.buffers, args.losses, duration_s
            )
        else:
            points = grid_points(
                [args.cca], [args.flows], [args.rate], [args.rtt], [args.buffer], [args.loss], duration_s
            )
        for p in points:
            _ = p.queue_packets
    except ValueError as e:
        print(f"compare.py: error: {e}", file=sys.stderr)
        return 2
    unknown = sorted({p.cca for p in points} - set(NS3_CCAS))
    if unknown:
        known = sorted(NS3_CCAS)
        print(f"compare.py: error: no ns-3 counterpart for {unknown}; known: {known}", file=sys.stderr)
        return 2
    if args.polycc_params is not None and not isinstance(args.polycc_params, dict):
        print("compare.py: error: --polycc-params must be a JSON object", file=sys.stderr)
        return 2
    import polycc

    missing = sorted({p.cca for p in points} - set(polycc.cca_names()))
    if missing:
        print(
            f"compare.py: error: polycc has no {missing}; registered: {polycc.cca_names()}",
            file=sys.stderr,
        )
        return 2
    binary = ns3_available(build=not args.no_build)
    if binary is None:
        print(
            "compare.py: error: ns-3 (libns3-dev) not installed: run validation/ns3/install.sh",
            file=sys.stderr,
        )
        return 2
    opts = Ns3Options(
        min_rto_ms=args.ns3_min_rto,
        delack=args.ns3_delack,
        recovery=args.ns3_recovery,
        pacing=args.ns3_pacing,
        rto=args.ns3_rto,
        attributes=tuple(parse_ns3_attribute(a) for a in args.ns3_attribute),
    )
    cache = Cache(None if args.no_cache else args.cache, opts)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    lossy = args.lossy_seeds or args.seeds
    runner = Runner(
        opts,
        cache,
        [args.seed + k for k in range(args.seeds)],
        binary,
        log,
        [args.seed + k for k in range(lossy)],
        args.polycc_params,
    )
    t0 = time.monotonic()
    rows = runner.rows(points, args.jobs)
    elapsed = time.monotonic() - t0
    print(text_table(rows))
    print()
    print(summary_text(rows))
    ns3_wall = sum(r.ns3.wall_s for r in rows)
    print(f"wall time: {elapsed:.0f} s for this invocation; ns-3 wall time summed over rows {ns3_wall:.0f} s")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        text = markdown_table(rows, args.polycc_params)
        if len({r.point.cca for r in rows}) > 1:
            text += "\nAll: " + summary_text(rows) + "\n"
        args.markdown.write_text(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        with args.json.open("w") as f:
            for r in rows:
                f.write(
                    json.dumps(
                        {
                            "point": asdict(r.point),
                            "queue_packets": r.point.queue_packets,
                            "polycc": asdict(r.polycc),
                            "ns3": asdict(r.ns3),
                            "verdict": r.verdict,
                            "goodput_ratio": r.goodput_ratio,
                            "goodput_ratio_se": r.goodput_se,
                        }
                    )
                    + "\n"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
