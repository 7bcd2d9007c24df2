"""BENCHMARKS.md "Sweeps on Ray": the per-run overhead of the Ray executor against the local
one, on a sweep of N short runs (wall and CPU of this process and its children), and the speed-up
of two parallel runs over one.

Usage: .venv/bin/python scripts/bench-executors.py [N]   (needs `pip install "polycc[ray]"`)
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import polycc

SCENARIO = """
name = "bench-executors"
duration = "1s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "a"
cca = "cubic"
rtt = "40ms"
"""


def cpu_s() -> float:
    """CPU seconds of this process and every process below it, alive (Ray's node manager and
    workers, read from /proc) or reaped."""
    ticks = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    used: dict[int, float] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d.name)] = int(fields[1])
        used[int(d.name)] = (int(fields[11]) + int(fields[12])) / ticks
    me = os.getpid()

    def below(pid: int) -> bool:
        while pid > 1:
            if pid == me:
                return True
            pid = parent.get(pid, 1)
        return False

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return sum(t for pid, t in used.items() if below(pid)) + kids.ru_utime + kids.ru_stime


def timed(label: str, fn: object, n: int) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), cpu_s()
    df = fn()  # type: ignore[operator]
    wall, cpu = time.perf_counter() - w0, cpu_s() - c0
    assert (df["status"] == "ok").all() and len(df) == n
    print(f"{label:32} wall {wall:7.2f} s ({1e3 * wall / n:6.1f} ms/run)  CPU {cpu:7.2f} s", flush=True)
    return wall, cpu


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    print(f"{n} runs of 1 s simulated; load average {os.getloadavg()[0]:.2f}")
    with TemporaryDirectory() as tmp:
        f = Path(tmp) / "s.toml"
        f.write_text(SCENARIO)
        grid = {"seed": list(range(1, n + 1))}
        polycc.sweep(f, {"seed": [1, 2]}, jobs=1)  # imports and first-use costs out of the way
        timed("local, 1 job", lambda: polycc.sweep(f, grid, jobs=1), n)
        timed("local, 2 jobs", lambda: polycc.sweep(f, grid, jobs=2), n)
        t0 = time.perf_counter()
        from polycc.ray_executor import RayExecutor

        with RayExecutor(num_cpus=2) as ray:
            print(f"{'Ray start':32} wall {time.perf_counter() - t0:7.2f} s")
            timed("Ray, 2 CPUs (first sweep)", lambda: polycc.sweep(f, grid, executor=ray), n)
            timed("Ray, 2 CPUs (warm workers)", lambda: polycc.sweep(f, grid, executor=ray), n)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
