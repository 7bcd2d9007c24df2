"""`polycc run`'s peak memory does not grow with simulated time (issue 15): the time series go
to Parquet as they are recorded and the plots take at most `plot_data.MAX_POINTS` bins per
series, so a run 20 times longer peaks within 1.5 times the short one's resident set.

A reduced case of BENCHMARKS.md's (50 CUBIC flows at 1 Gbit/s, 30 s against 600 s): the same 50
flows at 100 Mbit/s, with 10 ms bins, so that the long run records 1 000 000 flow rows (more
than the 300 000 of the 600 s run) in a few seconds of simulation. Held in memory, they alone
would be 120 MB of numbers against a process of about 150 MB (Python, pandas, pyarrow). Each
run is measured in a process of its own, by its peak resident set (`os.wait4`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

SCENARIO = """\
name = "memory-{secs}s"
duration = "{secs}s"
bin = "10ms"
seed = 1

[[links]]
id = "bottleneck"
rate = "100Mbps"
queue = {{ kind = "droptail", size = "1bdp" }}

[[flows]]
id = "cubic"
cca = "cubic"
rtt = "40ms"
count = 50
"""


def peak_rss_kb(tmp_path: Path, secs: int, *options: str) -> int:
    """Runs `polycc run` on the scenario of `secs` simulated seconds; its peak RSS in kB."""
    scenario = tmp_path / f"m{secs}.toml"
    scenario.write_text(SCENARIO.format(secs=secs))
    out = tmp_path / f"out{secs}{''.join(options)}"
    log = tmp_path / f"log{secs}"
    with log.open("w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "polycc.cli", "run", str(scenario), "--out", str(out), *options],
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, log.read_text()
    rows = pq.ParquetFile(out / "timeseries.parquet").metadata.num_rows
    assert rows == 50 * secs * 100, rows  # every bin of every flow was written
    return int(usage.ru_maxrss)  # kB on Linux


@pytest.mark.skipif(not hasattr(os, "wait4"), reason="needs os.wait4 (POSIX)")
@pytest.mark.parametrize("plots", [False, True], ids=["no-plots", "plots"])
def test_peak_memory_does_not_grow_with_simulated_time(tmp_path: Path, plots: bool) -> None:
    options = () if plots else ("--no-plots",)
    short = peak_rss_kb(tmp_path, 10, *options)
    long = peak_rss_kb(tmp_path, 200, *options)
    print(f"peak RSS {short} kB (10 s) -> {long} kB (200 s), {long / short:.2f}x")
    assert long <= 1.5 * short, f"peak RSS grew with simulated time: {short} kB -> {long} kB"
    if plots:
        # 20 000 bins are plotted as 1 000 means of 20; the file keeps every bin.
        flows = pd.read_parquet(tmp_path / "out200" / "timeseries.parquet", columns=["t_s"])
        assert flows["t_s"].nunique() == 20_000
        assert (tmp_path / "out200" / "goodput.png").exists()
