"""The Ray executor (`polycc.RayExecutor`, `--executor ray`): the same results as the local
executor row for row, run directories written on the driver, a lost worker as one failed run,
Python fusions on workers, a cluster joined by address, and a clear exit without Ray."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import polycc
from polycc.tasks import RunTask

ray = pytest.importorskip("ray", reason='Ray is an optional extra: pip install "polycc[ray]"')

from polycc.ray_executor import RayExecutor  # noqa: E402

SCENARIO = """
name = "ray-sweep"
duration = "2s"
seed = 3

[[links]]
id = "bottleneck"
rate = "20Mbps"
loss = 0.002
queue = { kind = "droptail", size = "1bdp" }

[[flows]]
id = "a"
cca = "cubic"
rtt = "40ms"
"""

GRID = {"flows.0.cca": ["cubic", "bbr", "vegas"], "links.0.rate": ["10Mbps", "20Mbps"]}

#: Columns that measure the machine, not the run.
WALL = {"wall_s", "sim_wall_s"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[RayExecutor]:
    """One Ray instance on this machine for the module's tests (starting one takes seconds)."""
    # The task functions defined here travel to the workers by value (they cannot import a
    # test module).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with RayExecutor(num_cpus=2) as ex:
        yield ex


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in df.columns if c not in WALL and "wall" not in c]
    return df[keep].sort_values("run_id").reset_index(drop=True)


def test_results_equal_the_local_executors_row_for_row(tmp_path: Path, local_ray: RayExecutor) -> None:
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    local = polycc.sweep(f, GRID, seeds=2, jobs=2)
    remote = polycc.sweep(f, GRID, seeds=2, executor=local_ray)
    assert len(remote) == 12 and (remote["status"] == "ok").all(), remote["error"].tolist()
    pd.testing.assert_frame_equal(comparable(local), comparable(remote))


def test_run_directories_are_written_by_the_driver(tmp_path: Path, local_ray: RayExecutor) -> None:
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    out = tmp_path / "sweep"
    df = polycc.sweep(f, {"flows.0.cca": ["cubic", "bbr"]}, out_dir=out, executor=local_ray, plots=False)
    assert (df["status"] == "ok").all()
    for run_id in df["run_id"]:
        run = out / "runs" / run_id
        summary = json.loads((run / "summary.json").read_text())
        row = df[df["run_id"] == run_id].iloc[0]
        assert summary["flows"][0]["goodput_mbps"] == row["flow.a.goodput_mbps"]
        assert (run / "timeseries.parquet").stat().st_size > 0
        assert (run / "report.html").exists()
    assert (out / "results.parquet").exists() and (out / "index.html").exists()


def crash_on_odd(n: int) -> int:
    """A task whose worker process dies for odd items (as a machine or a worker would)."""
    if n % 2:
        os._exit(3)
    return n * 10


def test_a_lost_worker_is_one_failed_item_and_the_others_finish(local_ray: RayExecutor) -> None:
    got = list(local_ray.map_unordered(crash_on_odd, [0, 1, 2, 3, 4], on_lost=lambda n, e: -n))
    assert sorted(got) == [-3, -1, 0, 20, 40]
    # Without `on_lost` it is an error of the sweep.
    with pytest.raises(ray.exceptions.RayError):
        list(local_ray.map_unordered(crash_on_odd, [1]))


def test_an_exception_of_the_task_function_is_raised_as_itself(local_ray: RayExecutor) -> None:
    with pytest.raises(ZeroDivisionError):
        list(local_ray.map_unordered(divide_by, [0]))


def divide_by(n: int) -> float:
    return 1 / n


def nap(n: int) -> int:
    import time

    time.sleep(0.05 * (n % 3))
    return n


def test_closing_early_stops_the_tasks_under_way_and_the_executor_runs_again(local_ray: RayExecutor) -> None:
    """Closing the iterator while tasks run and finish around it (Ctrl-C in a sweep) never
    aborts the driver, and the next call runs all its items."""
    for _ in range(3):
        it = local_ray.map_unordered(nap, list(range(12)))
        assert next(it) in range(12)
        it.close()
    assert sorted(local_ray.map_unordered(nap, list(range(6)))) == list(range(6))


def test_a_lost_worker_marks_the_run_failed_with_its_reason(tmp_path: Path, local_ray: RayExecutor) -> None:
    from polycc.sweeps import _execute_all
    from polycc.tasks import lost

    task = RunTask(0, "r0", {}, 1, polycc.Scenario.from_dict({"name": "x"}))
    outcome = lost(task, ray.exceptions.WorkerCrashedError())
    error = outcome.outcome.error
    assert outcome.outcome.summary is None and error is not None
    assert error.startswith("worker lost: WorkerCrashedError"), error
    assert _execute_all(local_ray, [], progress=False) == []


FUSION_FILE = """
def lowest(values, pilot, quantity, target):
    return min(values)
"""

POOL = """
name = "ray-fusion"
duration = "3s"
[[links]]
id = "bottleneck"
rate = "20Mbps"
queue = { kind = "droptail", size = "1bdp" }
[[flows]]
id = "sender"
rtt = "60ms"
[flows.cca]
name = "poly"
pilot = "bbr"
copilots = ["copa"]
fuse = "min"
on = "rate"
fuse_every = "rtt"
"""


def test_python_fusions_named_by_file_run_on_workers(tmp_path: Path, local_ray: RayExecutor) -> None:
    (tmp_path / "my_fusions.py").write_text(FUSION_FILE)
    f = tmp_path / "pool.toml"
    f.write_text(POOL)
    df = polycc.sweep(f, {"flows.0.cca.fuse": ["min", "py:my_fusions.py:lowest"]}, executor=local_ray)
    assert list(df["status"]) == ["ok", "ok"], df["error"].tolist()
    by_fuse = dict(zip(df["flows.0.cca.fuse"], df["flow.sender.goodput_mbps"], strict=True))
    assert by_fuse["py:my_fusions.py:lowest"] == by_fuse["min"]


CRASH_FILE = """
import os

calls = 0


def crash(values, pilot, quantity, target):
    global calls
    calls += 1
    if calls > 20:
        os._exit(3)
    return min(values)
"""


def test_a_sweep_whose_worker_dies_mid_run_marks_that_run_and_finishes_the_others(
    tmp_path: Path, local_ray: RayExecutor
) -> None:
    # A fusion that takes its worker process down with it some way into the run, as a crashed
    # or killed machine would (not at once: validating the scenario on the driver may call it).
    (tmp_path / "crash.py").write_text(CRASH_FILE)
    f = tmp_path / "pool.toml"
    f.write_text(POOL)
    out = tmp_path / "sweep"
    grid = {"flows.0.cca.fuse": ["min", "py:crash.py:crash", "max"]}
    df = polycc.sweep(f, grid, executor=local_ray, out_dir=out, plots=False)
    status = dict(zip(df["flows.0.cca.fuse"], df["status"], strict=True))
    assert status == {"min": "ok", "py:crash.py:crash": "error", "max": "ok"}, df["error"].tolist()
    error = df.loc[df["status"] == "error", "error"].iloc[0]
    assert error.startswith("worker lost: "), error
    lost_run = df.loc[df["status"] == "error", "run_id"].iloc[0]
    assert not (out / "runs" / lost_run).exists()


def test_the_cli_sweeps_on_ray_and_refuses_what_it_cannot(tmp_path: Path, local_ray: RayExecutor) -> None:
    from click.testing import CliRunner

    from polycc.cli import cli

    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    out = tmp_path / "sweep"
    runner = CliRunner()
    args = ["sweep", str(f), "--grid", "flows.0.cca=cubic,bbr", "--out", str(out), "--no-plots"]
    r = runner.invoke(cli, [*args, "--executor", "ray"])
    assert r.exit_code == 0, r.output
    assert "2/2 runs ok" in r.output
    assert len(pd.read_parquet(out / "results.parquet")) == 2
    r = runner.invoke(cli, [*args, "--ray-address", "127.0.0.1:1"])
    assert r.exit_code == 2 and "only with --executor ray" in r.output
    r = runner.invoke(cli, [*args, "--executor", "ray", "--backend", "emu"])
    assert r.exit_code == 2 and "use --backend sim" in r.output


def test_without_ray_the_executor_exits_2_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from polycc.cli import cli

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    r = CliRunner().invoke(cli, ["sweep", str(f), "--grid", "seed=1", "--executor", "ray"])
    assert r.exit_code == 2, r.output
    assert 'pip install "polycc[ray]"' in r.output
    assert not (Path("results") / "sweep-ray-sweep").exists()


def test_a_reproduction_on_ray_checks_the_same_claims_with_the_same_numbers(
    tmp_path: Path, local_ray: RayExecutor
) -> None:
    from polycc.reproduce import reproduce

    on_ray = reproduce("janus", quick=True, out=tmp_path / "ray", plots=False, executor=local_ray)
    here = reproduce("janus", quick=True, out=tmp_path / "local", plots=False, jobs=2)
    assert on_ray.runs == here.runs > 0
    got = [(r.id, r.ours, r.holds) for r in on_ray.reproductions]
    assert got == [(r.id, r.ours, r.holds) for r in here.reproductions]


def raylets() -> set[int]:
    """PIDs of the Ray node managers running on this machine."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"raylet" in (proc / "comm").read_bytes():
                found.add(int(proc.name))
        except OSError:
            pass
    return found


def test_ctrl_c_cancels_the_runs_and_leaves_nothing_behind(tmp_path: Path, local_ray: RayExecutor) -> None:
    import signal
    import time

    scen = tmp_path / "s.toml"
    scen.write_text(SCENARIO.replace('duration = "2s"', 'duration = "30s"'))
    out = tmp_path / "results" / "sw"
    before = raylets()
    args = [
        "sweep",
        str(scen),
        "--grid",
        "seed=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16",
        "--executor",
        "ray",
        "--jobs",
        "1",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "polycc.cli", *args, "--out", str(out), "--no-plots"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        # Interrupt once the driver has written the first run's directory.
        while not any(out.parent.glob(".sw.tmp-*/runs/*/summary.json")) and proc.poll() is None:
            assert time.monotonic() < deadline, "no run finished"
            time.sleep(0.1)
        assert proc.poll() is None, "the sweep ended before the signal; make its runs longer"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(".")]
    # The Ray instance the sweep started is gone with it (its node manager may take a moment).
    deadline = time.monotonic() + 30
    while not raylets() <= before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert raylets() <= before


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_cluster_is_joined_by_address(tmp_path: Path, local_ray: RayExecutor) -> None:
    """A head and a second worker node, started here as a user would (`ray start`), joined by
    address; the runs give the same table as locally."""
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_cli, "the ray command is installed with Ray"
    local_ray.shutdown()  # the driver joins the cluster instead
    port = free_port()
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
    # Ray's sockets live under its temp dir, whose path must stay short (AF_UNIX: 107 bytes).
    temp = tempfile.mkdtemp(prefix="polycc-ray-", dir="/tmp")
    start: list[Any] = [
        ray_cli,
        "start",
        f"--temp-dir={temp}",
        "--disable-usage-stats",
        "--node-ip-address=127.0.0.1",
    ]

    def ray_start(*args: str) -> None:
        r = subprocess.run([*start, *args], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr

    try:
        ray_start("--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false")
        ray_start(f"--address=127.0.0.1:{port}", "--num-cpus=1")
        f = tmp_path / "s.toml"
        f.write_text(SCENARIO)
        with RayExecutor(f"127.0.0.1:{port}") as joined:
            nodes = [n for n in ray.nodes() if n["Alive"]]
            assert len(nodes) == 2
            assert joined.parallelism() == 2
            remote = polycc.sweep(f, {"flows.0.cca": ["cubic", "bbr"]}, seeds=2, executor=joined)
        ray.shutdown()
        local = polycc.sweep(f, {"flows.0.cca": ["cubic", "bbr"]}, seeds=2, jobs=2)
        pd.testing.assert_frame_equal(comparable(local), comparable(remote))
    finally:
        ray.shutdown()
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)
