"""Reading one run's time series (`RunResult.flows` / `.links`, one row per flow or link and bin):
a flow's values over a time window and their mean. Bins are selected by their start time, with a
nanosecond of slack so that a window's edges fall on bin boundaries."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult

#: Slack (s) on a window's edges, below the simulator's 1 ns resolution of bin times.
EDGE_S = 1e-9


def window(df: pd.DataFrame, key: str, name: str, t0: float, t1: float) -> pd.DataFrame:
    """The rows of `df` whose `key` column is `name`, in bins starting in [t0, t1)."""
    return df[(df[key] == name) & (df["t_s"] >= t0 - EDGE_S) & (df["t_s"] < t1 - EDGE_S)]


def column(r: RunResult, flow: str, col: str, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """Times and values of `col` for `flow` in bins starting in [t0, t1) (empty when the run has
    no such column)."""
    if col not in r.flows.columns:
        return np.array([]), np.array([])
    sel = window(r.flows, "flow", flow, t0, t1)
    return sel["t_s"].to_numpy(dtype=float), sel[col].to_numpy(dtype=float)


def flow_mean(r: RunResult, flow: str, col: str, t0: float, t1: float) -> float:
    """The mean of the finite values of `col` for `flow` over [t0, t1); NaN when there are none."""
    _, v = column(r, flow, col, t0, t1)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan
