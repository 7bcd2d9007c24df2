"""The notebook-facing API: `polycc.run(...)` returns summaries and pandas DataFrames."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from polycc import tomlw
from polycc._native import ScenarioError
from polycc.columns import NativeTable, to_frame
from polycc.scenario import Scenario, ScenarioSource
from polycc.tasks import BACKENDS

if TYPE_CHECKING:
    from polycc._native import FusionFn, NativeOutput


@dataclass
class RunResult:
    """One simulated run.

    `flows` has one row per flow per time bin (t_s, flow, goodput_mbps, throughput_mbps, rtt_ms,
    cwnd_bytes, inflight_bytes, pacing_rate_mbps, cc_state, cc_<telemetry>...), `links` one row per
    link per bin (t_s, link, capacity_mbps, queue_bytes, queue_delay_ms, drops). Missing numbers are NaN,
    missing text (the cc_state of an inactive flow) None.
    `frames` has one row per video frame of each video flow (flow, frame, generated_s, first_sent_s,
    decodable_s, complete_s, delay_ms, packets, data_packets, bytes, target_mbps, competing,
    decoded, settled); empty without video flows.
    `transfers` has one row per transfer of each sized or web flow (flow, transfer, bytes,
    requested_s, started_s, completed_s, fct_s; NaN for a time not reached); empty without them.
    """

    name: str
    summary: dict[str, Any]
    flows: pd.DataFrame
    links: pd.DataFrame
    resolved_toml: str
    #: summary.json exactly as the simulator serialised it.
    summary_json: str
    #: Where the scenario came from (file path or "<dict>").
    origin: str
    notes: list[str] = field(default_factory=list)
    #: Directory that relative trace paths in the scenario refer to.
    base_dir: Path = field(default_factory=Path.cwd)
    frames: pd.DataFrame = field(default_factory=pd.DataFrame)
    transfers: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def seed(self) -> int:
        return int(self.summary["seed"])

    def flow_summary(self) -> pd.DataFrame:
        """Per-flow summary metrics as a DataFrame, nested values flattened (rtt_ms.p95 ...)."""
        return pd.json_normalize(self.summary.get("flows", []))

    def link_summary(self) -> pd.DataFrame:
        return pd.json_normalize(self.summary.get("links", []))

    def write(self, out_dir: str | os.PathLike[str], *, plots: bool = True) -> Path:
        """Writes the results directory (see `polycc.results.write_run`) and returns its path."""
        from polycc.results import write_run

        return write_run(self, Path(out_dir), plots=plots)


def columns_to_frame(columns: NativeTable) -> pd.DataFrame:
    """A table as the simulator hands it over (`polycc.columns`) as a DataFrame: numbers as
    float64 with NaN for null, text as str with None for null (an inactive flow's cc_state)."""
    return to_frame(columns)


def result_of(scenario: Scenario, out: NativeOutput) -> RunResult:
    """The RunResult of a run of `scenario` from what the simulator returned."""
    summary = json.loads(out["summary_json"])
    resolved = out["resolved_toml"]
    if not resolved.strip():
        # The engine fills this; until it does, keep what the user wrote so the run is reproducible.
        resolved = scenario.text if scenario.format == "toml" else tomlw.dumps(scenario.to_dict())
    return RunResult(
        name=str(summary.get("name", "")),
        summary=summary,
        flows=columns_to_frame(out["flows"]),
        links=columns_to_frame(out["links"]),
        resolved_toml=resolved,
        summary_json=out["summary_json"],
        origin=scenario.origin,
        notes=list(scenario.notes),
        base_dir=scenario.base_dir,
        frames=columns_to_frame(out.get("frames", {})),
        transfers=columns_to_frame(out.get("transfers", {})),
    )


def check_seed(scenario: Scenario, seed: int | None) -> None:
    """Raises ScenarioError unless `seed` is None or a seed (0 ..= 2^64-1)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64):
        raise ScenarioError(
            f"{scenario.origin}: seed: {seed!r} is not a seed; allowed: integers 0 ..= 2^64-1"
        )


def run_scenario(
    scenario: Scenario,
    *,
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
    backend: str = "sim",
    cancelled: Callable[[], bool] | None = None,
    log_dir: Path | None = None,
) -> RunResult:
    """Runs a prepared scenario on `backend` ("sim", or "emu": the emulated testbed, as root).
    Raises ScenarioError for a bad scenario, RuntimeError otherwise; KeyboardInterrupt when
    `cancelled()` turned true during an emulated run (which has cleaned up by then). In an
    emulated run, outside programs (`stack = "external"`) write their stdout and stderr into
    `log_dir` (a fresh temporary directory when None)."""
    check_seed(scenario, seed)
    if backend not in BACKENDS:
        raise ScenarioError(f"backend: {backend!r}; allowed: {', '.join(BACKENDS)}")
    if backend == "sim":
        return result_of(scenario, scenario.run_native(seed, fusions))
    if fusions:
        raise ScenarioError("fusions: Python fusions run in the simulator only (backend='sim')")
    out = scenario.emulate_native(seed, cancelled or (lambda: False), log_dir)
    if out is None:
        raise KeyboardInterrupt
    return result_of(scenario, out)


def run(
    source: ScenarioSource | Scenario,
    *,
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
    backend: str = "sim",
    log_dir: Path | None = None,
) -> RunResult:
    """Runs a scenario given as a TOML file path or a dict (the same keys as the TOML file).

    Relative trace paths resolve against the file's directory (for a dict: the current directory).
    `seed` replaces the scenario's seed. Bad scenarios raise `polycc.ScenarioError` (a ValueError)
    whose message names the file, the key path and what is allowed.

    `fusions` are PolyCC fusion functions written in Python, by name: a `poly` flow of the
    scenario uses one with `fuse = "py:<name>"`. Each is called as
    `fn(values, pilot, quantity, target) -> float` with the members' own values in pool order
    (bytes for quantity "cwnd", bit/s for "rate"), the pilot's index and the target (or None),
    once per smoothed RTT unless the flow sets `fuse_every = "ack"` (see BENCHMARKS.md for the
    cost per call). An exception raised by the function ends in a RuntimeError after the run,
    with the function's exception as its cause. A scenario may instead name the function by
    reference, `fuse = "py:<module>:<function>"` or `"py:<file.py>:<function>"`
    (`polycc.fusion_refs`).

    `backend="emu"` runs it in the emulated testbed instead of the simulator: real network
    stacks between two network namespaces joined by a user-space link emulator (needs root;
    see the README's "Emulated testbed"). Its outside programs (`stack = "external"`) write
    their stdout and stderr into `log_dir` (a fresh temporary directory when None).

    >>> r = polycc.run("scenarios/demo/bottleneck.toml", seed=2)   # doctest: +SKIP
    >>> r.flows.groupby("flow").goodput_mbps.mean()                 # doctest: +SKIP
    >>> polycc.run(s, fusions={"lowest": lambda v, pilot, q, target: min(v)})  # doctest: +SKIP
    """
    from polycc.grid import load_base

    return run_scenario(load_base(source), seed=seed, fusions=fusions, backend=backend, log_dir=log_dir)
