"""Exit statuses and cleanup when the CLI is interrupted, in a real process sent real signals:
Ctrl-C (SIGINT) exits 130, SIGTERM 143, and neither leaves a temporary directory behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import scenario_text

#: Upper bound for anything in these tests; they take a few seconds.
TIMEOUT_S = 120


def start(*args: str | Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "polycc.cli", *map(str, args)],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(cond: object, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def handles(pid: int, sig: signal.Signals) -> bool:
    """Whether the process has installed its handler for `sig` (Linux: SigCgt in /proc), so
    that a signal sent while Python is still starting is not taken for the CLI's answer."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return True
    for line in status.read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return True


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(
    ("sig", "status", "says"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_during_a_sweep_removes_its_temporary_directory(
    tmp_path: Path, sig: signal.Signals, status: int, says: str
) -> None:
    scen = tmp_path / "s.toml"
    scen.write_text(scenario_text().replace('duration = "3s"', 'duration = "20s"'))
    out = tmp_path / "results" / "sw"
    proc = start(
        "sweep",
        scen,
        "--grid",
        "seed=1,2,3,4,5,6,7,8",
        "--jobs",
        "1",
        "--out",
        out,
        "--no-plots",
        cwd=tmp_path,
    )
    try:
        # Signal once the first run has written its directory inside the temporary one.
        wait_for(
            lambda: any(out.parent.glob(".sw.tmp-*/runs/*/summary.json")) or proc.poll() is not None, "a run"
        )
        assert proc.poll() is None, "the sweep ended before the signal; make its runs longer"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert says in err and "Traceback" not in err and "bug in polycc" not in err, err
    assert leftovers(out.parent) == [] and not out.exists()


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_a_long_single_run_at_once(tmp_path: Path, sig: signal.Signals, status: int) -> None:
    scen = tmp_path / "s.toml"
    scen.write_text(scenario_text().replace('duration = "3s"', 'duration = "100000s"'))
    proc = start("run", scen, "--out", tmp_path / "out", "--no-plots", cwd=tmp_path)
    try:
        wait_for(lambda: handles(proc.pid, sig) or proc.poll() is not None, "the signal handler")
        time.sleep(0.5)  # into the run
        assert proc.poll() is None
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=TIMEOUT_S)
        waited = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert waited < 30, f"the run went on for {waited:.0f} s after the signal"
    assert leftovers(tmp_path) == [] and not (tmp_path / "out").exists()
