"""The time series a run's plots are drawn from, at most MAX_POINTS bins per flow or link.

A figure is 9 inches at 100 dpi, 800 pixels of plot width: a series of more points than that
shows nothing more. A run of up to MAX_POINTS bins (100 s at the default 100 ms bin) is plotted
as recorded. A longer one is plotted from groups of k = ceil(bins / MAX_POINTS) consecutive bins,
each point at the start of its group: the mean of the group's values (its goodput is the goodput
over the group), or for the series drawn as steps (`STEP_COLUMNS`: states, flags, indices) the
group's first value. So the plots take memory for MAX_POINTS bins whatever the simulated time;
the series are fed chunk by chunk as the simulator hands them over (`Rebinner.add`), and only
the columns the plots use are kept (`plotted`).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

MAX_POINTS = 1000
#: Series drawn as steps: a mean of a state or flag would draw values it never took.
STEP_COLUMNS = frozenset({"cc_stage", "cc_share", "cc_competing", "cc_pilot"})
#: At most this many partial aggregates are kept before they are combined.
_MAX_PARTS = 8

_PLOTTED = frozenset(
    {
        "t_s",
        "flow",
        "link",
        # flows
        "goodput_mbps",
        "rtt_ms",
        "cwnd_bytes",
        "inflight_bytes",
        "pacing_rate_mbps",
        "target_rate_mbps",
        "satisfaction",
        "cc_stage",
        "cc_target_rate_mbps",
        "cc_p_avg_mbps",
        "cc_dp_ms",
        "cc_share",
        "cc_bw_estimate_mbps",
        "cc_target_mbps",
        "cc_competing",
        "cc_fused_cwnd_bytes",
        "cc_fused_rate_mbps",
        "cc_pilot",
        # links
        "capacity_mbps",
        "queue_delay_ms",
        "queue_bytes",
        "drops",
    }
)
_POOL_MEMBER = re.compile(r"cc_m\d+_(cwnd_bytes|rate_mbps)")


def plotted(column: str) -> bool:
    """Whether `polycc.plots` draws `column` (of the flows or links table)."""
    return column in _PLOTTED or _POOL_MEMBER.fullmatch(column) is not None


def group_size(bins: int, max_points: int = MAX_POINTS) -> int:
    """Bins per plotted point."""
    return max(1, math.ceil(bins / max_points))


class Rebinner:
    """Collects a long-format table (t_s, `key`, values; one row per key per bin) chunk by chunk
    and returns it with at most `max_points` rows per key (see the module documentation).
    `bins` and `bin_s` are the run's number of bins and bin width."""

    def __init__(self, key: str, bins: int, bin_s: float, max_points: int = MAX_POINTS) -> None:
        self.key = key
        self.k = group_size(bins, max_points)
        self.bin_s = bin_s
        self._parts: list[pd.DataFrame] = []
        self._columns: list[str] = []

    def add(self, chunk: pd.DataFrame) -> None:
        """Adds rows that follow those added before (whole bins, in time order)."""
        chunk = chunk[[c for c in chunk.columns if plotted(c)]]
        if chunk.empty or "t_s" not in chunk.columns or self.key not in chunk.columns:
            return
        self._columns += [c for c in chunk.columns if c not in self._columns]
        if self.k == 1:
            self._parts.append(chunk)
            return
        self._parts.append(self._partial(chunk))
        if len(self._parts) > _MAX_PARTS:
            self._parts = [self._combine(self._parts)]

    def _values(self, frame: pd.DataFrame) -> list[str]:
        return [c for c in frame.columns if c not in ("t_s", self.key, "_group")]

    def _partial(self, chunk: pd.DataFrame) -> pd.DataFrame:
        """Per (group, key): the sum and count of each column's values, the first of step ones."""
        group = (np.rint(chunk["t_s"].to_numpy(dtype=float) / self.bin_s) // self.k).astype(np.int64)
        keys = [pd.Series(group, index=chunk.index, name="_group"), chunk[self.key]]
        by = chunk[self._values(chunk)].groupby(keys, sort=False)
        means = [c for c in self._values(chunk) if c not in STEP_COLUMNS]
        steps = [c for c in self._values(chunk) if c in STEP_COLUMNS]
        parts = [by[means].sum().add_suffix(":sum"), by[means].count().add_suffix(":n")]
        if steps:
            parts.append(by[steps].first().add_suffix(":first"))
        return pd.concat(parts, axis=1)

    @staticmethod
    def _combine(parts: list[pd.DataFrame]) -> pd.DataFrame:
        both = pd.concat(parts)
        by = both.groupby(level=[0, 1], sort=False)
        sums = [c for c in both.columns if not c.endswith(":first")]
        firsts = [c for c in both.columns if c.endswith(":first")]
        out = by[sums].sum()
        if firsts:
            out = pd.concat([out, by[firsts].first()], axis=1)
        return out

    def frame(self) -> pd.DataFrame:
        """The rows added, at most `max_points` bins per key, in the columns first seen order."""
        if not self._parts:
            return pd.DataFrame(columns=self._columns)
        if self.k == 1:
            return pd.concat(self._parts, ignore_index=True)[self._columns]
        combined = self._combine(self._parts)
        groups = combined.index.get_level_values(0).to_numpy()
        data: dict[str, object] = {
            "t_s": groups * (self.k * self.bin_s),
            self.key: combined.index.get_level_values(1).to_numpy(),
        }
        for c in self._columns:
            if c in ("t_s", self.key):
                continue
            if f"{c}:first" in combined.columns:
                data[c] = combined[f"{c}:first"].to_numpy(dtype=float)
            elif f"{c}:sum" in combined.columns:
                n = combined[f"{c}:n"].to_numpy(dtype=float)
                with np.errstate(invalid="ignore", divide="ignore"):
                    data[c] = np.where(n > 0, combined[f"{c}:sum"].to_numpy(dtype=float) / n, np.nan)
        return pd.DataFrame(data)[self._columns]


def bins_of(frame: pd.DataFrame) -> tuple[int, float]:
    """(number of bins, bin width in s) of a table held whole (`RunResult.flows`)."""
    if frame.empty or "t_s" not in frame.columns:
        return 0, 1.0
    t = np.unique(frame["t_s"].to_numpy(dtype=float))
    return len(t), float(t[1] - t[0]) if len(t) > 1 else 1.0
