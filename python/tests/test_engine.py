"""End to end through the real simulator: the CLI's results directory, sweeps, the Python API and
determinism. Scenarios simulate a few seconds so the suite stays fast."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import FLOW_COLUMNS, LINK_COLUMNS, polycc, scenario_text

import polycc as api

RUN_FILES = [
    "scenario.toml",
    "summary.json",
    "timeseries.parquet",
    "links.parquet",
    "report.html",
    "goodput.png",
    "rtt.png",
    "cwnd.png",
    "links.png",
]


def _summary_without_wall(path: Path) -> dict:
    s = json.loads(path.read_text())
    s.pop("wall_s")
    return s


def test_cli_run_writes_the_results_directory(short_scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    res = polycc("run", short_scenario, "--out", out)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == f"report: {out / 'report.html'}"
    for name in RUN_FILES:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name

    flows = pq.read_table(out / "timeseries.parquet").to_pandas()
    links = pq.read_table(out / "links.parquet").to_pandas()
    assert set(flows.columns) >= FLOW_COLUMNS
    assert set(links.columns) >= LINK_COLUMNS
    assert set(flows["flow"]) == {"a", "b"} and set(links["link"]) == {"bottleneck"}
    assert flows["t_s"].max() <= 3.0 + 1e-9 and len(flows) >= 2 * 20  # 100 ms bins over 3 s, two flows
    assert (flows["goodput_mbps"].dropna() >= 0).all()

    resolved = tomllib.loads((out / "scenario.toml").read_text())
    assert resolved["name"] == "short" and resolved["seed"] == 7

    html = (out / "report.html").read_text()
    for name in ("goodput.png", "rtt.png", "cwnd.png", "links.png", "summary.json"):
        assert f'"{name}"' in html


def test_summary_json_has_the_documented_keys(short_scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    assert polycc("run", short_scenario, "--out", out, "--no-plots").returncode == 0
    s = json.loads((out / "summary.json").read_text())
    assert {"name", "seed", "duration_s", "wall_s", "events", "flows", "links", "jain_index"} <= set(s)
    assert s["name"] == "short" and s["seed"] == 7 and s["duration_s"] == pytest.approx(3.0)
    assert [f["id"] for f in s["flows"]] == ["a", "b"]
    for f in s["flows"]:
        assert {
            "id",
            "cca",
            "goodput_mbps",
            "throughput_mbps",
            "loss_rate",
            "retransmits",
            "rtt_ms",
            "queue_delay_ms",
            "fct_s",
        } <= set(f)
        assert set(f["rtt_ms"]) >= {"min", "mean", "p50", "p95", "p99"}
        assert set(f["queue_delay_ms"]) >= {"mean", "p95"}
        assert f["cca"] == "newreno"
        assert 0 < f["goodput_mbps"] <= 10.0
        assert f["rtt_ms"]["min"] >= 20.0 - 1e-6
    (link,) = s["links"]
    assert {"id", "capacity_mbps", "utilization", "drops", "queue_delay_ms"} <= set(link)
    assert link["capacity_mbps"] == pytest.approx(10.0)
    assert 0 < link["utilization"] <= 1.0 + 1e-9
    assert 0 < s["jain_index"] <= 1.0


@pytest.mark.parametrize("capacity", ['rate = "10Mbps"', 'trace = "../traces/const.down"'])
def test_resolved_scenario_reproduces_the_run(tmp_path: Path, capacity: str) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "const.down").write_text("1\n2\n3\n")
    (tmp_path / "scenarios").mkdir()
    scenario = tmp_path / "scenarios" / "s.toml"
    scenario.write_text(scenario_text(capacity=capacity))
    first, again = tmp_path / "results" / "first", tmp_path / "again"
    assert polycc("run", scenario, "--out", first, "--no-plots").returncode == 0
    res = polycc("run", first / "scenario.toml", "--out", again, "--no-plots")
    assert res.returncode == 0, res.stderr
    assert _summary_without_wall(first / "summary.json") == _summary_without_wall(again / "summary.json")


def test_same_seed_same_results_other_seed_differs(short_scenario: Path, tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in ("a", "b", "c"))
    for out, seed in ((a, "11"), (b, "11"), (c, "12")):
        res = polycc("run", short_scenario, "--out", out, "--seed", seed, "--no-plots")
        assert res.returncode == 0, res.stderr
    assert _summary_without_wall(a / "summary.json") == _summary_without_wall(b / "summary.json")
    assert (a / "timeseries.parquet").read_bytes() == (b / "timeseries.parquet").read_bytes()
    assert _summary_without_wall(a / "summary.json") != _summary_without_wall(c / "summary.json")


def test_sweep_grid_times_seeds(short_scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    res = polycc(
        "sweep",
        short_scenario,
        "--grid",
        "links.0.rate=5Mbps,10Mbps",
        "--grid",
        "flows.*.rtt=20ms,40ms",
        "--seeds",
        "2",
        "--jobs",
        "2",
        "--no-plots",
        "--out",
        out,
    )
    assert res.returncode == 0, res.stderr
    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 8
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert {"run_id", "links.0.rate", "flows.*.rtt", "seed", "jain_index", "mean_goodput_mbps"} <= set(
        df.columns
    )
    assert {"flow.a.goodput_mbps", "flow.b.goodput_mbps", "link.bottleneck.utilization"} <= set(df.columns)
    assert sorted(df["seed"].unique()) == [7, 8]
    assert df.groupby(["links.0.rate", "flows.*.rtt"]).size().tolist() == [2, 2, 2, 2]
    # The capacity reported per run follows the grid.
    cap = df.groupby("links.0.rate")["link.bottleneck.capacity_mbps"].mean()
    assert cap["5Mbps"] == pytest.approx(5.0) and cap["10Mbps"] == pytest.approx(10.0)
    runs = sorted(p.name for p in (out / "runs").iterdir())
    assert runs == sorted(df["run_id"]) and all((out / "runs" / r / "summary.json").is_file() for r in runs)


def test_python_api_returns_dataframes(short_scenario: Path) -> None:
    r = api.run(short_scenario)
    assert isinstance(r.flows, pd.DataFrame) and isinstance(r.links, pd.DataFrame)
    assert set(r.flows.columns) >= FLOW_COLUMNS and set(r.links.columns) >= LINK_COLUMNS
    assert r.name == "short" and r.summary["seed"] == 7
    assert r.flows["goodput_mbps"].dtype == float
    assert list(r.flow_summary()["id"]) == ["a", "b"]

    doc = tomllib.loads(short_scenario.read_text())
    d = api.run(doc, seed=7)
    assert d.summary["flows"] == r.summary["flows"]  # a dict runs exactly like the file
    pd.testing.assert_frame_equal(d.flows, r.flows)


def test_trace_paths_resolve_against_the_scenario_file(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    # A constant 12 Mbit/s link in mahimahi form: one 1500-byte opportunity per millisecond.
    (tmp_path / "traces" / "const.down").write_text("\n".join(str(i) for i in range(1, 101)) + "\n")
    f = tmp_path / "trace.toml"
    f.write_text(scenario_text(capacity='trace = "traces/const.down"'))
    r = api.run(f)
    assert r.summary["links"][0]["capacity_mbps"] == pytest.approx(12.0, rel=0.02)


def test_threads_run_in_parallel_without_mixing_results(short_scenario: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda s: api.run(short_scenario, seed=s).summary, [1, 2, 1, 2]))
    for s in results:
        s.pop("wall_s")
    assert results[0] == results[2] and results[1] == results[3] and results[0] != results[1]


def test_demo_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "plain.toml").write_text(scenario_text())
    (scen / "cell.toml").write_text(scenario_text(capacity='trace = "../no/such.down"'))
    monkeypatch.setenv("POLYCC_DEMO_DIR", str(scen))
    out = tmp_path / "demo"
    res = polycc("demo", "--out", out, "--no-plots")
    assert res.returncode == 0, res.stderr
    assert "synthesised" in res.stderr
    assert res.stdout.strip().splitlines()[-1] == f"report: {out / 'index.html'}"
    index = (out / "index.html").read_text()
    for run in ("plain", "cell"):
        assert f'href="runs/{run}/report.html"' in index
        assert (out / "runs" / run / "summary.json").is_file()


def test_the_gil_is_released_during_a_run(tmp_path: Path) -> None:
    """While one thread simulates, another keeps running Python: its longest pause is a small part
    of the simulation's duration (were the GIL held, it would pause for all of it)."""
    import threading
    import time

    from polycc import _native

    text = scenario_text(capacity='rate = "100Mbps"').replace('"3s"', '"120s"')
    done = threading.Event()
    span: list[float] = []

    def simulate() -> None:
        t0 = time.perf_counter()
        _native.run_toml(text, "long.toml", str(tmp_path))
        span.append(time.perf_counter() - t0)
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    longest, last = 0.0, time.perf_counter()
    while not done.is_set():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert span and longest < 0.5 * span[0], (longest, span)


def test_video_flow_writes_frames_and_the_frame_delay_cdf(tmp_path: Path) -> None:
    scenario = {
        "name": "video",
        "duration": "5s",
        "links": [{"id": "b", "rate": "3Mbps", "queue": {"size": "50pkt"}}],
        "flows": [{"id": "v", "cca": "pibes", "rtt": "40ms", "traffic": {"kind": "video"}}],
    }
    r = api.run(scenario)
    # 30 fps over 5 s; the summary counts the frames produced before the last second.
    assert len(r.frames) == 151
    assert set(r.frames["flow"]) == {"v"}
    flow = r.summary["flows"][0]
    assert flow["frames_sent"] == int((r.frames["settled"] == 1).sum())
    assert flow["frames_lost"] == 0
    settled = r.frames[r.frames["settled"] == 1]
    assert flow["frame_delay_ms"]["mean"] == pytest.approx(settled["delay_ms"].mean(), rel=1e-9)
    out = r.write(tmp_path / "res")
    assert (out / "frames.parquet").is_file() and (out / "frame_delay_cdf.png").is_file()
    assert len(pd.read_parquet(out / "frames.parquet")) == 151
    html = (out / "report.html").read_text()
    assert "Video flows" in html and "frames.parquet" in html
    # Runs without video write neither.
    bulk = api.run(dict(scenario, flows=[{"id": "c", "rtt": "40ms"}]))
    assert bulk.frames.empty
    out2 = bulk.write(tmp_path / "bulk")
    assert not (out2 / "frames.parquet").exists() and "Video flows" not in (out2 / "report.html").read_text()


def test_a_dash_player_reports_its_stalls_and_chunks(tmp_path: Path) -> None:
    # Two players on 12 Mbit/s: 4 + 10 Mbit/s of video cannot both be carried, so the larger
    # one stalls; each chunk is a row of transfers.parquet and the report lists the players.
    def player(rate: str) -> dict[str, object]:
        return {"kind": "dash", "bitrates": [rate], "chunk": "2s", "buffer": "10s"}

    scenario = {
        "name": "dash",
        "duration": "40s",
        "links": [{"id": "b", "rate": "12Mbps", "queue": {"size": "1bdp"}}],
        "flows": [
            {"id": "low", "cca": "cubic", "rtt": "40ms", "traffic": player("4Mbps")},
            {"id": "high", "cca": "cubic", "rtt": "40ms", "traffic": player("10Mbps")},
        ],
    }
    r = api.run(scenario)
    low, high = r.summary["flows"]
    assert low["rebuffers"] == 0 and high["rebuffers"] >= 1
    assert 0.05 < high["rebuffer_ratio"] < 0.5
    assert high["chunk_bitrate_mbps"] == 10.0 and low["bitrate_switches"] == 0
    rows = r.transfers.groupby("flow")
    assert rows["fct_s"].count()["high"] == high["chunks"]
    assert set(r.transfers[r.transfers.flow == "high"]["bytes"]) == {2.5e6}
    html = (r.write(tmp_path / "res") / "report.html").read_text()
    assert "Video players (DASH)" in html


def test_a_browser_reports_its_page_load_times(tmp_path: Path) -> None:
    # A 10 KB document, then 200 KB, every 2 s on 10 Mbit/s, 40 ms: each load is two transfers
    # (rows of transfers.parquet), each asked for a round trip before it comes, and the report
    # lists the browser.
    scenario = {
        "name": "pages",
        "duration": "20s",
        "links": [{"id": "b", "rate": "10Mbps", "queue": {"size": "1bdp"}}],
        "flows": [
            {
                "id": "web",
                "cca": "cubic",
                "rtt": "40ms",
                "traffic": {
                    "kind": "page",
                    "pages": [["10KB", "200KB"]],
                    "interval": "2s",
                    "arrivals": "periodic",
                },
            }
        ],
    }
    r = api.run(scenario)
    (f,) = r.summary["flows"]
    assert f["page_loads"] == 10 and f["page_loads_delayed"] == 0
    # Two round trips and 210 KB at 10 Mbit/s (0.17 s) at least; well under the 2 s interval.
    assert 0.08 + 0.168 <= f["page_load_s"]["min"] <= f["page_load_s"]["p95"] < 1.0
    assert 0.04 <= f["page_response_s"]["mean"] < f["page_load_s"]["mean"]
    assert sorted(set(r.transfers["bytes"])) == [10e3, 200e3] and len(r.transfers) == 20
    html = (r.write(tmp_path / "res") / "report.html").read_text()
    assert "Page loads" in html


def test_web_flows_write_one_row_per_transfer(tmp_path: Path) -> None:
    # Several sources' transfers in one table, so completion times pool over all of them.
    web = {
        "kind": "web",
        "size": "50KB",
        "interval": "500ms",
        "arrivals": "poisson",
        "connection": "per_request",
    }
    scenario = {
        "name": "web",
        "duration": "10s",
        "links": [{"id": "b", "rate": "20Mbps", "queue": {"size": "50pkt"}}],
        "flows": [{"id": "w", "cca": "cubic", "rtt": "40ms", "count": 3, "traffic": web}],
    }
    r = api.run(scenario)
    t = r.transfers
    assert set(t["flow"]) == {"w-1", "w-2", "w-3"}
    completed = {f["id"]: f["transfers_completed"] for f in r.summary["flows"]}
    for flow, rows in t.groupby("flow"):
        assert int(rows["fct_s"].notna().sum()) == completed[flow]
        assert rows["fct_s"].mean() == pytest.approx(
            next(f["fct_s"] for f in r.summary["flows"] if f["id"] == flow), rel=1e-12
        )
    assert (t["bytes"] == 50e3).all() and len(t) >= 3 * 15
    out = r.write(tmp_path / "res")
    back = pd.read_parquet(out / "transfers.parquet")
    assert len(back) == len(t) and "transfers.parquet" in (out / "report.html").read_text()
    # A bulk run has no transfers and writes no table.
    bulk = api.run(dict(scenario, flows=[{"id": "c", "rtt": "40ms"}]))
    assert bulk.transfers.empty
    assert not (bulk.write(tmp_path / "bulk") / "transfers.parquet").exists()
