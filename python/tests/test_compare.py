"""`polycc compare`: one scenario in the simulator and in the emulated testbed, side by side —
the metrics table with the testbed's over the simulator's, both results directories, overlaid
plots; what the testbed cannot run is refused before anything runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import emulator_or_skip, polycc_process

import polycc
from polycc.compare import compare_rows, write_comparison

KERNEL_CUBIC = """\
name = "cmp"
duration = "3s"
seed = 4

[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }

[[flows]]
id = "cubic"
cca = "cubic"
stack = "linux"
rtt = "40ms"
"""

LOSSY = KERNEL_CUBIC.replace('rate = "20Mbps"', 'rate = "20Mbps"\nloss = 0.01')


def test_rows_pair_each_flow_and_link_metric_with_its_ratio(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(LOSSY)
    a, b = polycc.run(f, seed=1), polycc.run(f, seed=2)
    rows = compare_rows(a.summary, b.summary)
    assert [(r.kind, r.metric) for r in rows] == [
        ("flow", "goodput_mbps"),
        ("flow", "rtt_ms.mean"),
        ("flow", "rtt_ms.p95"),
        ("flow", "loss_rate"),
        ("link", "utilization"),
        ("link", "queue_delay_ms.mean"),
        ("link", "drops"),
    ]
    goodput = rows[0]
    assert goodput.sim == a.summary["flows"][0]["goodput_mbps"]
    assert goodput.emu == b.summary["flows"][0]["goodput_mbps"]
    assert goodput.ratio is not None and math.isclose(goodput.ratio, goodput.emu / goodput.sim)
    # Two seeds of a 1 %-loss link: different loss draws, so the goodputs differ, but not by much.
    assert goodput.ratio != 1.0 and 0.5 < goodput.ratio < 2.0
    # A flow the other run lacks has no value there and no ratio.
    lacking = {**b.summary, "flows": []}
    missing = compare_rows(a.summary, lacking)[0]
    assert missing.emu is None and missing.ratio is None and missing.sim == goodput.sim


def test_the_directory_holds_both_runs_the_table_and_the_overlays(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(LOSSY)
    a, b = polycc.run(f, seed=1), polycc.run(f, seed=2)
    out = tmp_path / "cmp"
    rows = write_comparison(a, b, out)
    doc = json.loads((out / "compare.json").read_text())
    assert doc["name"] == "cmp" and len(doc["rows"]) == len(rows) == 7
    assert doc["rows"][0]["ratio"] == pytest.approx(rows[0].ratio)
    for side, run in (("sim", a), ("emu", b)):
        assert json.loads((out / side / "summary.json").read_text())["seed"] == run.seed
        assert (out / side / "report.html").exists() and (out / side / "goodput.png").exists()
    page = (out / "report.html").read_text()
    assert "compare-flows.png" in page and "compare-links.png" in page and 'href="sim/report.html"' in page
    assert (out / "compare-flows.png").stat().st_size > 10_000
    # Written again over an earlier comparison, not refused as a foreign directory.
    write_comparison(b, a, out, plots=False)
    assert json.loads((out / "compare.json").read_text())["rows"][0]["sim"] == rows[0].emu
    assert not (out / "compare-flows.png").exists()


def test_the_cli_compares_a_kernel_cubic_flow_with_its_model(tmp_path: Path) -> None:
    emulator_or_skip()
    f = tmp_path / "k.toml"
    f.write_text(KERNEL_CUBIC)
    out = tmp_path / "out"
    r = polycc_process("compare", f, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "testbed / simulator" in r.stdout
    sim = json.loads((out / "sim" / "summary.json").read_text())
    emu = json.loads((out / "emu" / "summary.json").read_text())
    assert sim.get("backend", "sim") == "sim" and emu["backend"] == "emu"
    ratio = {row["metric"]: row["ratio"] for row in json.loads((out / "compare.json").read_text())["rows"]}
    # VALIDATION.md's Linux section: loss-free CUBIC rows agree within 10 % in goodput and 15 %
    # in RTT.
    assert 0.9 < ratio["goodput_mbps"] < 1.1, ratio
    assert 0.85 < ratio["rtt_ms.mean"] < 1.15, ratio
    assert 0.9 < ratio["utilization"] < 1.1, ratio


def test_what_the_testbed_cannot_run_is_refused_before_anything_runs(tmp_path: Path) -> None:
    # Refused before anything is made: no privileges needed.
    f = tmp_path / "v.toml"
    # Host send-time noise is a simulator model; a real host brings its own.
    f.write_text(KERNEL_CUBIC.replace('stack = "linux"\n', "") + 'send_jitter = "1ms"\n')
    r = polycc_process("compare", f, "--out", tmp_path / "o")
    assert r.returncode == 2, r.stderr
    assert "flows (cubic).send_jitter" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_a_flow_the_simulator_cannot_run_is_refused_before_the_testbed_runs(tmp_path: Path) -> None:
    # An outside program runs only in the testbed: compare must say so at once (exit 2, naming
    # the flow), not after a real-time testbed run, and leave no results directory. Needs no root.
    f = tmp_path / "x.toml"
    f.write_text(
        KERNEL_CUBIC.split("[[flows]]")[0]
        + '[[flows]]\nid = "prog"\nstack = "external"\nrtt = "20ms"\n'
        + 'sender = "sleep 10"\nreceiver = "sleep 10"\n'
    )
    out = tmp_path / "out"
    r = polycc_process("compare", f, "--out", out)
    assert r.returncode == 2, r.stderr
    assert "flows (prog).stack" in r.stderr and "emulated testbed" in r.stderr
    assert not out.exists()
