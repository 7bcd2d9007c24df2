"""Experiment 1's runs (PIBES §IV-A, Figs. 6-9, scenarios/papers/pibes/estimation.toml): one PIBES
flow with a fixed burst size and α, alone or with CUBIC flows joining in the forward or reverse
direction, and the per-seed detection runs; each set without the receive-timestamp noise (the
paper's setup) and with it (our knob, labelled apart: issue 19)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polycc.reproduce.common import Context
from polycc.reproduce.pibes.model import QUICK_SEEDS, SEEDS

if TYPE_CHECKING:
    import pandas as pd

SCENARIO = "estimation.toml"
COMPETITOR_EVERY_S = 5.0
#: Ours (1f diagnostic): shifts of the competitors' joining times, off the 30 fps frame grid.
JOIN_SHIFTS_MS = (4.0, 12.0, 17.0, 25.0)
#: Ours (1f diagnostic): the forward CUBIC flows' RTT instead of the scenario's 40 ms (the video's
#: stays 40 ms): how the flag depends on the phase of their ACK clock against the frame clock.
CUBIC_RTTS_MS = (20.0, 25.0, 30.0, 35.0, 45.0, 50.0, 55.0, 60.0)
#: Ours (1f diagnostic): the forward CUBIC flows on polycc's default stack, paced at 1.2 cwnd/srtt
#: (where they ran before issue 19) instead of the Linux model's unpaced, ACK-clocked sender.
PACED_STACK = "quic"
#: The burst size and α the other parameter's sweep and the competition runs use.
DEFAULT_BURST, DEFAULT_ALPHA = 6, 0.1
#: Switches the scenario's receive-timestamp noise off (the runs of the paper's setup).
NO_NOISE = {"links.0.jitter.max": "0s"}
#: Detection across seeds: one CUBIC flow joins at COMPETITOR_EVERY_S of a run this long.
DETECT_RUN_S = 9.0
#: Estimates are compared with the capacity from here on (start-up left out).
SETTLE_S = 2.0


@dataclass(frozen=True)
class Plan:
    """The experiment's size: full, or shortened for the tests (`quick`)."""

    quick: bool

    @property
    def duration(self) -> float:
        return 12.0 if self.quick else 40.0

    @property
    def bursts(self) -> list[int]:
        return [2, 3, 6, 10] if self.quick else [2, 3, 4, 5, 6, 8, 10]

    @property
    def alphas(self) -> list[float]:
        return [0.1, 0.5] if self.quick else [0.05, 0.1, 0.2, 0.3, 0.5]

    @property
    def n_comp(self) -> int:
        return 2 if self.quick else 4

    @property
    def comp_duration(self) -> float:
        return COMPETITOR_EVERY_S * (self.n_comp + 1) + (4.0 if self.quick else 15.0)

    @property
    def seeds(self) -> int:
        """Seeds of the detection runs (1g)."""
        return 3 if self.quick else 10

    @property
    def claim_seeds(self) -> int:
        """Seeds of every other run (issue 19: >= 5)."""
        return QUICK_SEEDS if self.quick else SEEDS

    @property
    def shifts(self) -> tuple[float, ...]:
        return JOIN_SHIFTS_MS[:1] if self.quick else JOIN_SHIFTS_MS

    @property
    def cubic_rtts(self) -> tuple[float, ...]:
        return CUBIC_RTTS_MS[2:3] if self.quick else CUBIC_RTTS_MS

    @property
    def arrivals(self) -> list[float]:
        return [COMPETITOR_EVERY_S * (k + 1) for k in range(self.n_comp)]

    def phase(self, n: int) -> tuple[float, float]:
        """The span with n forward competitors, from 1 s after the n-th arrival."""
        return self.arrivals[n - 1] + 1.0, self.arrivals[n] if n < self.n_comp else self.comp_duration


def competitors(direction: str, n: int, shift_ms: float = 0.0) -> dict[str, Any]:
    """Overrides starting `n` CUBIC flows in `direction` ("fwd" or "rev") at 5, 10, ... s, each
    `shift_ms` later."""
    first = 1 if direction == "fwd" else 5  # flows 1-4 are forward, 5-8 reverse
    return {
        f"flows.{first + k}.start": f"{1000 * COMPETITOR_EVERY_S * (k + 1) + shift_ms:g}ms" for k in range(n)
    }


def forward_flows(n: int, key: str, value: Any) -> dict[str, Any]:
    """Overrides setting `key` of the `n` forward CUBIC flows (flows 1..n) to `value`."""
    return {f"flows.{1 + k}.{key}": value for k in range(n)}


def cca(burst: int, alpha: float) -> dict[str, Any]:
    return {"flows.0.cca": {"name": "pibes", "burst": burst, "alpha": alpha}}


def points(plan: Plan, noise: bool) -> dict[Any, dict[str, Any]]:
    """The sweep's points, with the scenario's receive-timestamp noise (`noise`) or without it;
    the 1f diagnostic of the joining times runs only with it, those of the CUBIC flows' RTT and
    pacing only without it (the paper's setup, 1f)."""
    dur = {"duration": f"{plan.duration:g}s"} | ({} if noise else NO_NOISE)
    comp = {"duration": f"{plan.comp_duration:g}s"} | ({} if noise else NO_NOISE)
    out: dict[Any, dict[str, Any]] = {}
    for b in plan.bursts:
        out[("burst", b)] = cca(b, DEFAULT_ALPHA) | dur
    for a in plan.alphas:
        out[("alpha", a)] = cca(DEFAULT_BURST, a) | dur
    for direction in ("fwd", "rev"):
        out[(direction, plan.n_comp)] = (
            cca(DEFAULT_BURST, DEFAULT_ALPHA) | competitors(direction, plan.n_comp) | comp
        )
    # 1f diagnostic: the forward runs again with every join a few ms later (5 s is a frame
    # boundary at 30 fps; these are not).
    for shift in plan.shifts if noise else ():
        out[("fwd-shift", shift)] = (
            cca(DEFAULT_BURST, DEFAULT_ALPHA) | competitors("fwd", plan.n_comp, shift) | comp
        )
    fwd = cca(DEFAULT_BURST, DEFAULT_ALPHA) | competitors("fwd", plan.n_comp) | comp
    for rtt in plan.cubic_rtts if not noise else ():
        out[("fwd-rtt", rtt)] = fwd | forward_flows(plan.n_comp, "rtt", f"{rtt:g}ms")
    if not noise:
        out[("fwd-paced", plan.n_comp)] = fwd | forward_flows(plan.n_comp, "stack", PACED_STACK)
    return out


@dataclass(frozen=True)
class Runs:
    """The results of sweep `name`, by point label: time series, frames, run directory."""

    ctx: Context
    name: str
    res: dict[Any, list[dict[str, Any]]]

    def run_dir(self, key: Any, seed: int = 0) -> Path:
        return self.ctx.out / self.name / "runs" / str(self.res[key][seed]["run_id"])

    @property
    def seeds(self) -> int:
        return min(len(v) for v in self.res.values())

    def ts(self, key: Any, seed: int = 0) -> pd.DataFrame:
        return self.ctx.timeseries(self.name, self.res[key][seed])

    def frames(self, key: Any, seed: int = 0) -> pd.DataFrame:
        import pandas as pd

        return pd.read_parquet(self.run_dir(key, seed) / "frames.parquet")
