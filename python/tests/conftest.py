"""Shared helpers: short scenarios (a few simulated seconds) and a CLI runner in a subprocess, so
that exit codes, stderr and the absence of tracebacks are checked exactly as a user sees them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from polycc.api import RunResult

SHORT = """\
name = "short"
description = "two NewReno flows on a lossy 10 Mbit/s link"
duration = "3s"
seed = 7

[[links]]
id = "bottleneck"
{capacity}
loss = 0.01
queue = {{ kind = "droptail", size = "1bdp" }}
{link_extra}

[[flows]]
id = "a"
cca = "{cca}"
rtt = "20ms"

[[flows]]
id = "b"
cca = "newreno"
rtt = "30ms"
start = "0.5s"
"""

FLOW_COLUMNS = {
    "t_s",
    "flow",
    "goodput_mbps",
    "throughput_mbps",
    "rtt_ms",
    "cwnd_bytes",
    "inflight_bytes",
    "pacing_rate_mbps",
    "cc_state",
}
LINK_COLUMNS = {"t_s", "link", "capacity_mbps", "queue_bytes", "queue_delay_ms", "drops"}


def scenario_text(*, cca: str = "newreno", capacity: str = 'rate = "10Mbps"', link_extra: str = "") -> str:
    return SHORT.format(cca=cca, capacity=capacity, link_extra=link_extra)


@pytest.fixture
def short_scenario(tmp_path: Path) -> Path:
    p = tmp_path / "short.toml"
    p.write_text(scenario_text())
    return p


@dataclass
class Cli:
    returncode: int
    stdout: str
    stderr: str


def emulator_or_skip() -> None:
    """Skips a test that emulates where the testbed cannot run (root, TUN, iproute2), except
    under POLYCC_REQUIRE_EMU=1 (CI), where that is a failure."""
    reason = None
    if os.geteuid() != 0:
        reason = "needs root"
    elif not Path("/dev/net/tun").exists():
        reason = "needs /dev/net/tun"
    elif shutil.which("ip") is None:
        reason = "needs iproute2 (scripts/install-emu-deps.sh)"
    if reason is None:
        return
    if os.environ.get("POLYCC_REQUIRE_EMU") == "1":
        pytest.fail(f"the emulator cannot run here ({reason}) and POLYCC_REQUIRE_EMU=1 demands it")
    pytest.skip(f"emulator: {reason}")


def polycc(*args: str | Path) -> Cli:
    """Runs the CLI in this process (fast); a Python exception escaping it fails the test."""
    from click.testing import CliRunner

    from polycc.cli import cli

    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return Cli(res.exit_code, res.stdout, res.stderr)


def polycc_process(*args: str | Path, cwd: Path | None = None) -> Cli:
    """Runs the CLI as a user does, in its own process."""
    proc = subprocess.run(
        [sys.executable, "-m", "polycc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return Cli(proc.returncode, proc.stdout, proc.stderr)


def fake_summary(name: str = "fake", seed: int = 1) -> dict:
    """A summary with the shape of polycc_sim::output::Summary, for tests of the Python layer."""

    def flow(fid: str, goodput: float) -> dict:
        return {
            "id": fid,
            "cca": "newreno",
            "goodput_mbps": goodput,
            "throughput_mbps": goodput * 1.05,
            "loss_rate": 0.01,
            "retransmits": 12,
            "packets_sent": 1000,
            "bytes_delivered": 1_400_000,
            "rtt_ms": {"min": 20.0, "mean": 25.0, "p50": 24.0, "p95": 31.0, "p99": 33.0},
            "queue_delay_ms": {"mean": 5.0, "p95": 11.0},
            "fct_s": None,
            "transfers_completed": 0,
            "active_s": 3.0,
        }

    return {
        "name": name,
        "seed": seed,
        "duration_s": 3.0,
        "wall_s": 0.01,
        "events": 12345,
        "delivered_packets": 999,
        "flows": [flow("a", 6.0), flow("b", 3.0)],
        "links": [
            {
                "id": "bottleneck",
                "capacity_mbps": 10.0,
                "utilization": 0.9,
                "drops": 4,
                "queue_delay_ms": {"mean": 5.0, "p95": 11.0},
            }
        ],
        "jain_index": 0.9,
    }


def fake_result(name: str = "fake") -> RunResult:
    import json

    t = np.round(np.arange(0.1, 3.01, 0.1), 3)
    flows = pd.concat(
        [
            pd.DataFrame(
                {
                    "t_s": t,
                    "flow": pd.Series([f] * len(t), dtype=object),
                    "goodput_mbps": np.full(len(t), g),
                    "throughput_mbps": np.full(len(t), g * 1.05),
                    "rtt_ms": 20 + 5 * np.sin(t),
                    "cwnd_bytes": 30_000 + 1000 * t,
                    "inflight_bytes": 25_000 + 1000 * t,
                    "pacing_rate_mbps": np.full(len(t), np.nan),
                    "cc_state": pd.Series(["cong_avoid"] * len(t), dtype=object),
                    "cc_ssthresh": np.full(len(t), 40_000.0),
                }
            )
            for f, g in (("a", 6.0), ("b", 3.0))
        ],
        ignore_index=True,
    )
    links = pd.DataFrame(
        {
            "t_s": t,
            "link": pd.Series(["bottleneck"] * len(t), dtype=object),
            "capacity_mbps": np.full(len(t), 10.0),
            "queue_bytes": 15_000 + 100 * t,
            "queue_delay_ms": 12 + t,
            "drops": np.zeros(len(t)),
        }
    )
    summary = fake_summary(name)
    return RunResult(
        name=name,
        summary=summary,
        flows=flows,
        links=links,
        resolved_toml=f'name = "{name}"\n',
        summary_json=json.dumps(summary, indent=2),
        origin="fake.toml",
    )


def encode(columns: dict[str, list]) -> dict:
    """Columns of Python values in the simulator's encoding (`polycc.columns`): str columns
    as (levels, int32 codes), the others as float64 (None -> NaN)."""
    out: dict = {}
    for name, values in columns.items():
        if any(isinstance(v, str) for v in values):
            levels = list(dict.fromkeys(v for v in values if v is not None))
            codes = np.array([-1 if v is None else levels.index(v) for v in values], dtype="<i4")
            out[name] = (levels, codes.tobytes())
        else:
            out[name] = np.array([np.nan if v is None else v for v in values], dtype="<f8").tobytes()
    return out


def _fake_native_output(text: str, fmt: str, seed: int | None) -> dict:
    """What polycc._native.run_* returns, built from the scenario's flow and link ids."""
    import json
    import tomllib

    doc = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    seed = doc.get("seed", 1) if seed is None else seed
    summary = fake_summary(doc["name"], seed)
    flow_ids = [f["id"] for f in doc["flows"]]
    link_ids = [lk["id"] for lk in doc["links"]]
    summary["flows"] = [
        dict(summary["flows"][0], id=f, goodput_mbps=1.0 + i + seed) for i, f in enumerate(flow_ids)
    ]
    summary["links"] = [dict(summary["links"][0], id=lk) for lk in link_ids]
    n = 5
    flows: dict[str, list] = {c: [] for c in sorted(FLOW_COLUMNS)}
    flows["cc_ssthresh"] = []
    for f in flow_ids:
        for k in range(n):
            row = {c: float(k + seed) for c in flows}
            row.update(t_s=0.1 * (k + 1), flow=f, cc_state="cong_avoid", pacing_rate_mbps=None)
            for c in flows:
                flows[c].append(row[c])
    links: dict[str, list] = {c: [] for c in sorted(LINK_COLUMNS)}
    for lk in link_ids:
        for k in range(n):
            row = {c: float(k) for c in links}
            row.update(t_s=0.1 * (k + 1), link=lk)
            for c in links:
                links[c].append(row[c])
    return {
        "summary_json": json.dumps(summary, indent=2),
        "resolved_toml": "",
        "flows": encode(flows),
        "links": encode(links),
    }


class FakeSimulation:
    """Stands in for polycc._native.Simulation: the fake output, all of it at `finish`."""

    def __init__(self, text, origin, base_dir, seed=None, fusions=None, format="toml") -> None:
        self._out = _fake_native_output(text, format, seed)
        self.duration_s = 0.5
        self.bin_s = 0.1
        self.now_s = 0.0
        self.pending_rows = 0

    def advance(self, until_s=None, budget_s=None, max_rows=None) -> bool:
        self.now_s = self.duration_s
        return True

    def drain(self) -> dict:
        return {"flows": {}, "links": {}}

    def finish(self) -> dict:
        return self._out


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaces the simulator with a stand-in, to test the Python layer on its own."""
    from polycc import _native

    monkeypatch.setattr(
        _native, "run_toml", lambda text, origin, base_dir, seed=None: _fake_native_output(text, "toml", seed)
    )
    monkeypatch.setattr(
        _native, "run_json", lambda text, origin, base_dir, seed=None: _fake_native_output(text, "json", seed)
    )
    monkeypatch.setattr(_native, "Simulation", FakeSimulation)
