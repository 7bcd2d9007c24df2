"""The Python layer on its own: grids, overrides, TOML writing, results directories, sweeps and the
demo driver. The simulator is replaced by a stand-in (`fake_engine`) where a run is needed, so these
tests hold whatever the engine's numbers are; test_engine.py runs the real thing."""

from __future__ import annotations

import json
import threading
import time
import tomllib
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import FLOW_COLUMNS, LINK_COLUMNS, fake_result, scenario_text

import polycc
from polycc import _native
from polycc.demo import FALLBACK_TRACE, run_demo, with_trace_fallback
from polycc.executors import LocalExecutor
from polycc.grid import GridError, parse_grid, parse_value, plan, split_values
from polycc.outdir import OutputError, atomic_dir
from polycc.scenario import OverrideError, Scenario, apply_override
from polycc.sweeps import summary_metrics
from polycc.tomlw import dumps

# --- native module ---------------------------------------------------------------------------


def test_native_exports() -> None:
    assert issubclass(polycc.ScenarioError, ValueError)
    assert "newreno" in polycc.cca_names()
    assert polycc.cca_summary("newreno")
    # The raw binding answers None; the package raises with the known names.
    assert _native.cca_summary("nosuchcca") is None
    with pytest.raises(polycc.UnknownCcaError, match=r"known: .*newreno"):
        polycc.cca_summary("nosuchcca")


def test_scenario_error_message_is_the_rust_display(tmp_path: Path) -> None:
    text = scenario_text(capacity='rate = "fast"')
    with pytest.raises(polycc.ScenarioError) as e:
        _native.validate_toml(text, "my.toml", str(tmp_path))
    assert str(e.value).startswith("my.toml: links[0].rate: ")


def test_dict_errors_name_the_key_without_json_positions() -> None:
    doc = tomllib.loads(scenario_text())
    doc["flows"][1]["rtt"] = "30 ms please"
    with pytest.raises(polycc.ScenarioError) as e:
        Scenario.from_dict(doc).validate()
    msg = str(e.value)
    assert msg.startswith("<dict>: flows[1].rtt: "), msg
    assert "column" not in msg


def test_seed_override_is_validated_like_the_file() -> None:
    assert Scenario.from_dict(tomllib.loads(scenario_text())).validate(seed=123) == "short"


# --- grids and overrides ---------------------------------------------------------------------


def test_values_are_toml_literals_or_strings() -> None:
    assert parse_value("10") == 10
    assert parse_value("0.5") == 0.5
    assert parse_value("true") is True
    assert parse_value('"10"') == "10"
    assert parse_value("50Mbps") == "50Mbps"
    assert parse_value('{ name = "cubic", beta = 0.7 }') == {"name": "cubic", "beta": 0.7}


def test_split_keeps_inline_tables_and_arrays() -> None:
    assert split_values('a, {x = 1, y = 2}, [1, 2], "c,d"') == ["a", "{x = 1, y = 2}", "[1, 2]", '"c,d"']


def test_parse_grid() -> None:
    grid = parse_grid(["links.0.rate=10Mbps,50Mbps", "flows.*.rtt=20ms", "seed=1,2,3"])
    assert grid == {"links.0.rate": ["10Mbps", "50Mbps"], "flows.*.rtt": ["20ms"], "seed": [1, 2, 3]}


@pytest.mark.parametrize("spec", ["nokey", "=1", "a..b=1", "a=", "a=1,,2", "a b=1"])
def test_parse_grid_rejects(spec: str) -> None:
    with pytest.raises(GridError):
        parse_grid([spec])


def test_apply_override_paths() -> None:
    doc = tomllib.loads(scenario_text())
    apply_override(doc, "links.0.rate", "50Mbps")
    apply_override(doc, "flows.*.cca", "cubic")
    apply_override(doc, "links.0.jitter.max", "2ms")
    apply_override(doc, "duration", "5s")
    assert doc["links"][0]["rate"] == "50Mbps"
    assert [f["cca"] for f in doc["flows"]] == ["cubic", "cubic"]
    assert doc["links"][0]["jitter"] == {"max": "2ms"}
    assert doc["duration"] == "5s"


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("links.1.rate", "1 entries"),
        ("links.x.rate", "number"),
        ("name.x", "not a table"),
        ("nolist.0.x", "exist"),
    ],
)
def test_apply_override_errors(key: str, fragment: str) -> None:
    with pytest.raises(OverrideError, match=fragment):
        apply_override(tomllib.loads(scenario_text()), key, 1)


def test_plan_expands_grid_times_seeds(short_scenario: Path) -> None:
    tasks = plan(
        short_scenario, {"links.0.rate": ["5Mbps", "10Mbps"], "flows.*.rtt": ["10ms", "40ms"]}, seeds=2
    )
    assert len(tasks) == 8
    assert len({t.run_id for t in tasks}) == 8
    assert sorted({t.seed for t in tasks}) == [7, 8]  # the scenario's seed, then the next ones
    assert {(t.params["links.0.rate"], t.params["flows.*.rtt"]) for t in tasks} == {
        ("5Mbps", "10ms"),
        ("5Mbps", "40ms"),
        ("10Mbps", "10ms"),
        ("10Mbps", "40ms"),
    }


def test_plan_with_seed_in_the_grid(short_scenario: Path) -> None:
    tasks = plan(short_scenario, {"seed": [3, 9]})
    assert [t.seed for t in tasks] == [3, 9]
    with pytest.raises(GridError):
        plan(short_scenario, {"seed": ["x"]})


# --- TOML writer -----------------------------------------------------------------------------


def test_toml_writer_round_trips() -> None:
    doc = tomllib.loads(scenario_text(link_extra='jitter = { max = "1ms", direction = "both" }'))
    doc["flows"][0]["cca"] = {"name": "cubic", "beta": 0.7}
    doc["flows"][1]["path"] = ["bottleneck"]
    doc["flows"][1]["traffic"] = {"kind": "web", "size": "100KB", "interval": "1s"}
    assert tomllib.loads(dumps(doc)) == doc


# --- results directories ---------------------------------------------------------------------


def test_write_run_writes_every_file(tmp_path: Path) -> None:
    out = fake_result().write(tmp_path / "res")
    for name in (
        "scenario.toml",
        "summary.json",
        "timeseries.parquet",
        "links.parquet",
        "report.html",
        "goodput.png",
        "rtt.png",
        "cwnd.png",
        "links.png",
    ):
        assert (out / name).is_file(), name
        assert (out / name).stat().st_size > 0, name
    assert set(pq.read_schema(out / "timeseries.parquet").names) >= FLOW_COLUMNS
    assert set(pq.read_schema(out / "links.parquet").names) >= LINK_COLUMNS
    html = (out / "report.html").read_text()
    assert 'src="goodput.png"' in html and "bottleneck" in html and "newreno" in html
    assert "http" not in html.replace("http-equiv", "")  # self-contained: relative links only
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_a_failed_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import polycc.results

    def boom(*_a: object, **_k: object) -> list:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(polycc.results, "write_plots", boom)
    with pytest.raises(RuntimeError):
        fake_result().write(tmp_path / "res")
    assert list(tmp_path.iterdir()) == []


def test_a_new_result_replaces_an_old_one(tmp_path: Path) -> None:
    out = tmp_path / "res"
    fake_result("first").write(out, plots=False)
    fake_result("second").write(out, plots=False)
    assert json.loads((out / "summary.json").read_text())["name"] == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_refuses_foreign_directories(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    with pytest.raises(OutputError), atomic_dir(tmp_path):
        pass
    assert (tmp_path / "notes.txt").read_text() == "keep"


# --- sweeps and the API with the stand-in engine ---------------------------------------------


def test_api_returns_dataframes(fake_engine: None, short_scenario: Path) -> None:
    r = polycc.run(short_scenario, seed=5)
    assert isinstance(r.flows, pd.DataFrame) and isinstance(r.links, pd.DataFrame)
    assert r.seed == 5 and r.name == "short"
    assert r.flows["pacing_rate_mbps"].dtype == float  # all-null columns stay numeric
    assert r.flows["flow"].tolist()[0] == "a"
    d = polycc.run(tomllib.loads(short_scenario.read_text()))
    assert d.origin == "<dict>" and tomllib.loads(d.resolved_toml)["name"] == "short"


def test_sweep_table(fake_engine: None, short_scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    df = polycc.sweep(
        short_scenario,
        ["links.0.rate=5Mbps,10Mbps", "flows.*.rtt=10ms,40ms"],
        seeds=2,
        out_dir=out,
        plots=False,
    )
    assert len(df) == 8
    for col in ("run_id", "links.0.rate", "flows.*.rtt", "seed", "status", "jain_index", "mean_goodput_mbps"):
        assert col in df.columns, col
    assert "flow.a.goodput_mbps" in df.columns and "link.bottleneck.utilization" in df.columns
    assert (df["status"] == "ok").all()
    table = pd.read_parquet(out / "results.parquet")
    assert len(table) == 8 and list(table["run_id"]) == sorted(table["run_id"])
    assert len(list((out / "runs").iterdir())) == 8
    assert (out / "index.html").is_file() and (out / "sweep.json").is_file()


def test_summary_metrics_flatten() -> None:
    from conftest import fake_summary

    row = summary_metrics(fake_summary())
    assert row["total_goodput_mbps"] == 9.0
    assert row["mean_goodput_mbps"] == 4.5
    assert row["flow.a.rtt_ms.p95"] == 31.0
    assert row["link.bottleneck.drops"] == 4


def test_local_executor_runs_in_parallel() -> None:
    seen: set[str] = set()

    def work(i: int) -> int:
        seen.add(threading.current_thread().name)
        time.sleep(0.05)
        return i * i

    assert sorted(LocalExecutor(2).map_unordered(work, list(range(6)))) == [0, 1, 4, 9, 16, 25]
    assert len(seen) == 2


# --- demo ------------------------------------------------------------------------------------


def test_missing_trace_falls_back_to_a_synthetic_one(tmp_path: Path) -> None:
    f = tmp_path / "cell.toml"
    f.write_text(scenario_text(capacity='trace = "../nowhere/trace.down"'))
    s = with_trace_fallback(Scenario.from_file(f))
    assert s.to_dict()["links"][0]["trace"] == FALLBACK_TRACE
    assert s.notes and "trace.down" in s.notes[0] and "synthesised" in s.notes[0]
    s.validate()


def test_demo_driver(fake_engine: None, tmp_path: Path) -> None:
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "one.toml").write_text(scenario_text())
    (scen / "two.toml").write_text(scenario_text(capacity='trace = "missing.down"'))
    result = run_demo(tmp_path / "out", directory=scen, plots=False)
    assert not result.failed
    index = (tmp_path / "out" / "index.html").read_text()
    assert 'href="runs/one/report.html"' in index and 'href="runs/two/report.html"' in index
    assert "synthesised" in index
    assert (tmp_path / "out" / "runs" / "two" / "report.html").is_file()


def test_cc_state_is_null_while_a_flow_is_inactive() -> None:
    sc = {
        "name": "late",
        "duration": "2s",
        "links": [{"id": "l", "rate": "10Mbps"}],
        "flows": [
            {"id": "early", "cca": "cubic", "rtt": "40ms"},
            {"id": "late", "cca": "cubic", "rtt": "40ms", "start": "1s"},
        ],
    }
    flows = polycc.run(sc).flows
    late = flows[flows["flow"] == "late"]
    # A bin is recorded at its end: the one from 0.9 s sees the flow started at 1 s.
    before, after = late[late["t_s"] < 0.9], late[late["t_s"] >= 0.9]
    assert len(before) == 9 and before["cc_state"].isna().all(), before["cc_state"].tolist()
    assert len(after) >= 10 and after["cc_state"].notna().all()
    assert (flows["cc_state"] == "").sum() == 0
