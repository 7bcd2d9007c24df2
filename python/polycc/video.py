"""Video-flow quantities derived from a resolved scenario: the frame-delay lower bound of PIBES's
Figs. 10 and 12.

The bound is the delay of a frame sized for a sender that uses a fraction `share` of the capacity
C (0.95, PIBES's s_max: "the minimum delay for transmitting video data at 95 % of the link
bandwidth"): its share·C·T bytes take share·T to cross the bottleneck at C, plus the one-way
propagation delay. It does not depend on C, so it holds for trace-driven links too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: PIBES §IV-B a): the lower bound sends at 95 % of the capacity, the same as its s_max.
BOUND_SHARE = 0.95

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|ms|s|min)?\s*$")


def seconds(text: Any) -> float:
    """A scenario duration ("40ms", "1.5s", "0") in seconds; ValueError when it is not one."""
    m = _DURATION.match(str(text))
    if not m or (m.group(2) is None and float(m.group(1)) != 0.0):
        raise ValueError(f"{text!r} is not a duration")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


def _flow_ids(flow: Mapping[str, Any]) -> list[str]:
    n = int(flow.get("count", 1))
    base = str(flow["id"])
    return [base] if n == 1 else [f"{base}-{k}" for k in range(1, n + 1)]


def frame_delay_lower_bounds(scenario: Mapping[str, Any], share: float = BOUND_SHARE) -> dict[str, float]:
    """{flow id: lower bound on its frame delay in ms} for the video flows of a resolved scenario
    (one-way delay = rtt / 2 plus the `delay` of each link on the flow's path)."""
    links = {str(link["id"]): link for link in scenario.get("links", []) if isinstance(link, Mapping)}
    first = next(iter(links), None)
    out: dict[str, float] = {}
    for flow in scenario.get("flows", []):
        traffic = flow.get("traffic")
        if not isinstance(traffic, Mapping) or traffic.get("kind") != "video":
            continue
        try:
            path = flow.get("path") or ([first] if first else [])
            one_way = seconds(flow["rtt"]) / 2 + sum(seconds(links[p].get("delay", "0s")) for p in path)
            fps = float(traffic.get("fps", 30.0))
        except (KeyError, ValueError, TypeError):
            continue  # not a resolved scenario: no bound rather than a wrong one
        bound_ms = 1000.0 * (one_way + share / fps)
        for fid in _flow_ids(flow):
            out[fid] = bound_ms
    return out
