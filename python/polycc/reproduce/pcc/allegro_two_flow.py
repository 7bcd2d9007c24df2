"""Allegro §4.2.2, Fig. 16's measures: a second flow B joins flow A on the same link; B's
convergence time (§4.2.2's forward-looking definition) and its rate's standard deviation over
the stability window after it, and what PCC's MIs saw there."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polycc.reproduce.pcc.shared import SAFE_UTILITY_KNEE, series

if TYPE_CHECKING:
    import pandas as pd

    from polycc.reproduce.common import Context

SCENARIO = "two-flow-convergence.toml"
FAIR_SHARE_BAND = 0.25  # §4.2.2: within ±25 % of the ideal equal rate
CONVERGED_FOR_S = 5  # ... for every second of t to t + 5 s
STABILITY_WINDOW_S = 60  # rate standard deviation over the 60 s after convergence


def convergence_time(per_second: list[float], fair: float) -> float:
    """§4.2.2's forward-looking convergence time (seconds from the first sample): the smallest t
    whose next CONVERGED_FOR_S one-second throughputs are all within ±25 % of `fair`."""
    ok = [abs(x - fair) <= FAIR_SHARE_BAND * fair for x in per_second]
    for t in range(len(ok) - CONVERGED_FOR_S + 1):
        if all(ok[t : t + CONVERGED_FOR_S]):
            return float(t)
    return math.nan


@dataclass
class TwoFlow:
    """Flow B's mean convergence time (s), rate standard deviation (Mbit/s) over the stability
    window, and (PCC only) the share of its MIs sampled in that window whose loss rate was above
    the safe utility's knee, and their mean loss rate. `conv_seeds` and `dev_seeds` hold the
    per-seed values (NaN where B never converged), in seed order."""

    conv: dict[str, float]
    dev: dict[str, float]
    above_knee: dict[str, float]
    mi_loss: dict[str, float]
    conv_seeds: dict[str, list[float]] = field(default_factory=dict)
    dev_seeds: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class _Run:
    """One run's measures (NaN-free lists; a run that never converged adds only its time)."""

    conv: list[float]
    dev: list[float]
    knee: list[float]
    loss: list[float]
    #: One per run, NaN where B never converged.
    dev_all: list[float] = field(default_factory=list)


def _measure(ts: pd.DataFrame, join_s: float, fair: float, dur: int, into: _Run) -> None:
    b = series(ts, "b", join_s, float(dur))
    ct = convergence_time(b, fair)
    into.conv.append(ct)
    if math.isnan(ct):
        into.dev_all.append(math.nan)
        return
    after = b[int(ct) : int(ct) + STABILITY_WINDOW_S]
    into.dev.append(statistics.pstdev(after) if len(after) > 1 else math.nan)
    into.dev_all.append(into.dev[-1])
    t0 = join_s + int(ct)
    sel = ts[(ts["flow"] == "b") & (ts["t_s"] >= t0) & (ts["t_s"] < t0 + STABILITY_WINDOW_S)]
    if "cc_mi_loss" in sel:
        mi = sel["cc_mi_loss"].dropna()
        if len(mi):
            into.knee.append(float((mi > SAFE_UTILITY_KNEE).mean()))
            into.loss.append(float(mi.mean()))


def _fmean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else math.nan


def two_flow(
    ctx: Context, name: str, configs: Mapping[str, Mapping[str, Any]], dur: int, seeds: int
) -> TwoFlow:
    """Flow B's convergence and stability per configuration ({label: overrides of the scenario})
    in the sweep `name`; B's fair share is half the link."""
    runs = ctx.sweep_labeled(
        name, SCENARIO, {c: {"duration": f"{dur}s", **o} for c, o in configs.items()}, seeds=seeds
    )
    file = ctx.scenario_file(SCENARIO)
    join_s, fair = file.start_s("b"), file.rate_mbps() / 2
    out = TwoFlow({}, {}, {}, {})
    for c in configs:
        m = _Run([], [], [], [])
        for row in runs[c]:
            _measure(ctx.timeseries(name, row), join_s, fair, dur, m)
        out.conv[c], out.dev[c] = _fmean(m.conv), _fmean(m.dev)
        out.above_knee[c], out.mi_loss[c] = _fmean(m.knee), _fmean(m.loss)
        out.conv_seeds[c], out.dev_seeds[c] = m.conv, m.dev_all
    return out
