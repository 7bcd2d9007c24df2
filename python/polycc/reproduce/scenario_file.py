"""The setup a paper's prose states, read from the scenario file its runs use: link rates, RTTs,
buffers, loss, jitter, start times. REPRODUCTION.md quotes these through `ScenarioFile`, so its
text cannot drift from the runs (a changed file changes the text).

Quantities are parsed as the simulator parses them (crates/polycc-sim/src/scenario/quantity.rs);
a size in packets counts full 1500-byte packets (the simulator's wire size).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polycc.reproduce.common import num
from polycc.video import seconds

__all__ = ["PACKET_BYTES", "ScenarioFile", "rate_mbps", "seconds", "size_text"]

#: A full packet on the wire (crates/polycc-sim/src/scenario/spec.rs: headers included).
PACKET_BYTES = 1500

_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_RATE = {"bps": 1e-6, "kbps": 1e-3, "mbps": 1.0, "gbps": 1e3}
_BYTES = {"B": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0, "MiB": 1024.0**2}
_PACKETS = ("pkt", "pkts", "packets")
_BDP = ("bdp", "BDP")


def _split(text: Any) -> tuple[float, str]:
    m = _NUMBER.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a number with a unit")
    return float(m.group(1)), m.group(2)


def rate_mbps(text: Any) -> float:
    """A scenario rate ("100Mbps", "30Kbps") in Mbit/s."""
    v, unit = _split(text)
    if unit.lower() not in _RATE:
        raise ValueError(f"{text!r} is not a rate")
    return v * _RATE[unit.lower()]


#: Byte units of a transfer size, as the simulator reads them (`scenario/quantity.rs`).
_BYTES = {
    "B": 1.0,
    "KB": 1e3,
    "kB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "KiB": 1024.0,
    "MiB": 1024.0**2,
    "GiB": 1024.0**3,
}


def size_bytes(text: Any) -> float:
    """A transfer size in bytes ("100KB" -> 100000.0)."""
    v, unit = _split(text)
    if unit not in _BYTES:
        raise ValueError(f"{text!r} is not a size in bytes")
    return v * _BYTES[unit]


def size_text(text: Any) -> str:
    """A buffer size as prose: "1-BDP", "50-packet", "375 KB"."""
    v, unit = _split(text)
    if unit in _BDP:
        return f"{num(v)}-BDP"
    if unit in _PACKETS:
        return f"{num(v)}-packet"
    return quantity_text(text)


def quantity_text(text: Any) -> str:
    """A scenario quantity as prose, its number and unit apart: "500KB" as "500 KB", "2s" as
    "2 s"."""
    v, unit = _split(text)
    return f"{num(v)} {unit}"


@dataclass(frozen=True)
class ScenarioFile:
    """A scenario file's document, with the quantities the reproductions quote."""

    doc: Mapping[str, Any]

    @classmethod
    def read(cls, path: Path) -> ScenarioFile:
        return cls(tomllib.loads(path.read_text(encoding="utf-8")))

    def link(self, link: int = 0) -> Mapping[str, Any]:
        links: list[Mapping[str, Any]] = self.doc["links"]
        return links[link]

    def flow(self, flow: int | str = 0) -> Mapping[str, Any]:
        flows: list[Mapping[str, Any]] = self.doc["flows"]
        if isinstance(flow, int):
            return flows[flow]
        return next(f for f in flows if f["id"] == flow)

    def duration_s(self) -> float:
        return seconds(self.doc["duration"])

    def bin_s(self) -> float:
        return seconds(self.doc["bin"])

    def rate_mbps(self, link: int = 0, key: str = "rate") -> float:
        return rate_mbps(self.link(link)[key])

    def loss(self, link: int = 0) -> float:
        return float(self.link(link).get("loss", 0.0))

    def jitter_ms(self, link: int = 0) -> float:
        """The link's per-packet delay jitter bound (U[0, max])."""
        jitter = self.link(link).get("jitter") or {}
        return 1e3 * seconds(jitter.get("max", "0s"))

    def rtt_ms(self, flow: int | str = 0) -> float:
        return 1e3 * seconds(self.flow(flow)["rtt"])

    def one_way_ms(self, flow: int | str = 0, link: int = 0) -> float:
        """Half the flow's RTT plus the link's one-way delay."""
        return self.rtt_ms(flow) / 2 + 1e3 * seconds(self.link(link).get("delay", "0s"))

    def start_s(self, flow: int | str) -> float:
        return seconds(self.flow(flow).get("start", "0s"))

    def stop_s(self, flow: int | str) -> float:
        return seconds(self.flow(flow)["stop"])

    def send_jitter_ms(self, flow: int | str = 0) -> float:
        return 1e3 * seconds(self.flow(flow).get("send_jitter", "0s"))

    def traffic_mbps(self, key: str, flow: int | str = 0) -> float:
        """A rate of the flow's traffic source ("min_rate", "max_rate")."""
        return rate_mbps(self.flow(flow)["traffic"][key])

    def fps(self, flow: int | str = 0) -> float:
        return float(self.flow(flow)["traffic"]["fps"])

    def buffer(self, link: int = 0) -> str:
        """The link's buffer as written ("1bdp", "375KB", "50pkt")."""
        return str(self.link(link)["queue"]["size"])

    def bdp_bytes(self, link: int = 0, flow: int | str = 0) -> float:
        """The link's bandwidth-delay product at its `bdp_rtt` (else the flow's RTT)."""
        queue = self.link(link)["queue"]
        rtt_s = seconds(queue["bdp_rtt"]) if "bdp_rtt" in queue else self.rtt_ms(flow) / 1e3
        return self.rate_mbps(link) * 1e6 / 8 * rtt_s

    def buffer_bytes(self, link: int = 0) -> float:
        v, unit = _split(self.buffer(link))
        if unit in _BDP:
            return v * self.bdp_bytes(link)
        if unit in _PACKETS:
            return v * PACKET_BYTES
        return v * _BYTES[unit]

    def buffer_ms(self, link: int = 0) -> float:
        """How long the full buffer takes to drain at the link's rate."""
        return self.buffer_bytes(link) * 8 / (self.rate_mbps(link) * 1e3)
