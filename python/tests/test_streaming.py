"""A run streamed to its results directory (`results.stream_run`, what `polycc run` does)
writes the time series `polycc.run` returns, whatever the chunks; the pieces on their own:
`ParquetSink` (row groups, columns that appear late, nothing left on failure) and `Rebinner`
(the plots' bounded resolution)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import scenario_text

import polycc
from polycc import results
from polycc.parquet_sink import ParquetSink
from polycc.plot_data import Rebinner, group_size
from polycc.scenario import Scenario


@pytest.mark.parametrize("row_group_rows", [8, 8192])
def test_a_streamed_run_writes_what_polycc_run_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_group_rows: int
) -> None:
    # A late flow (null cc_state before it starts) and chunks far smaller than the run.
    path = tmp_path / "s.toml"
    path.write_text(scenario_text(cca="cubic").replace('start = "0.5s"', 'start = "1.05s"'))
    monkeypatch.setattr(results, "ROW_GROUP_ROWS", row_group_rows)
    monkeypatch.setattr(results, "STEP_WALL_S", 0.0)  # a pause every 1024 events
    seen: list[tuple[float, float]] = []
    out = tmp_path / "out"
    out.mkdir()
    streamed = results.stream_run(
        Scenario.from_file(path), out, plots=False, on_progress=lambda s, t: seen.append((s, t))
    )
    whole = polycc.run(path)
    assert streamed.summary_json.replace(str(streamed.summary["wall_s"]), "") == whole.summary_json.replace(
        str(whole.summary["wall_s"]), ""
    )
    flows = pd.read_parquet(out / "timeseries.parquet")
    links = pd.read_parquet(out / "links.parquet")
    # The files a run held in memory gives, read back the same way.
    whole.write(tmp_path / "memory", plots=False)
    pd.testing.assert_frame_equal(flows, pd.read_parquet(tmp_path / "memory" / "timeseries.parquet"))
    pd.testing.assert_frame_equal(links, pd.read_parquet(tmp_path / "memory" / "links.parquet"))
    assert flows["cc_state"].isna().sum() == 10 and (flows["cc_state"] == "").sum() == 0
    # 60 flow rows: drained and written in several chunks of at least 8 rows, or in one.
    groups = pq.ParquetFile(out / "timeseries.parquet").metadata.num_row_groups
    assert (groups > 3) if row_group_rows == 8 else (groups == 1), groups
    # Progress: simulated time only goes forward, up to the end, of a 3 s run.
    assert len(seen) > 3 and all(t == 3.0 for _, t in seen)
    assert [s for s, _ in seen] == sorted(s for s, _ in seen) and seen[-1][0] <= 3.0
    assert sorted(p.name for p in out.iterdir()) == [
        "links.parquet",
        "report.html",
        "scenario.toml",
        "summary.json",
        "timeseries.parquet",
    ]


def _batch(**columns: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(columns)


def test_the_sink_widens_its_schema_for_a_late_column(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    with ParquetSink(path, row_group_rows=2) as sink:
        sink.write(_batch(t_s=[0.0, 0.1], flow=["a", "b"]))
        sink.write(_batch(t_s=[0.2], flow=["a"]))
        sink.write(_batch(t_s=[0.3, 0.4], flow=["a", None], cc_x=[1.0, None]))
        sink.write(_batch(t_s=[0.5], flow=["b"]))  # lacks cc_x
    table = pq.read_table(path)
    assert table.column_names == ["t_s", "flow", "cc_x"]
    assert table.column("t_s").to_pylist() == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert table.column("flow").to_pylist() == ["a", "b", "a", "a", None, "b"]
    assert table.column("cc_x").to_pylist() == [None, None, None, 1.0, None, None]
    # [0, 0.1], [0.2] (flushed for the wider schema), [0.3, 0.4], [0.5] (at close)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]  # the parts are gone


def test_a_failure_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    with pytest.raises(KeyError), ParquetSink(path, row_group_rows=1) as sink:
        sink.write(_batch(t_s=[0.0]))
        sink.write(_batch(t_s=[0.1], cc_y=[2.0]))
        raise KeyError("stop")
    assert list(tmp_path.iterdir()) == []


def test_a_sink_without_rows_writes_the_columns_it_was_given(tmp_path: Path) -> None:
    with ParquetSink(tmp_path / "t.parquet") as sink:
        sink.write(_batch(t_s=pa.array([], pa.float64()), link=pa.array([], pa.string())))
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.num_rows == 0 and table.column_names == ["t_s", "link"]


def _long(bins: int, flows: tuple[str, ...] = ("a", "b")) -> pd.DataFrame:
    t = np.repeat(np.arange(bins) * 0.1, len(flows))
    i = np.repeat(np.arange(bins), len(flows))
    return pd.DataFrame(
        {
            "t_s": t,
            "flow": np.tile(np.array(flows, dtype=object), bins),
            "cc_state": "x",  # not plotted: dropped
            "goodput_mbps": i.astype(float) + np.tile(np.arange(len(flows)) * 100.0, bins),
            "rtt_ms": np.where(i % 2 == 0, np.nan, 10.0),
            "cc_pilot": (i // 3).astype(float),
        }
    )


def test_a_short_series_is_plotted_as_recorded() -> None:
    frame = _long(1000)
    r = Rebinner("flow", 1000, 0.1)
    r.add(frame.iloc[:700])
    r.add(frame.iloc[700:])
    pd.testing.assert_frame_equal(r.frame(), frame.drop(columns="cc_state"))


def test_a_long_series_is_plotted_from_group_means_whatever_the_chunks() -> None:
    bins = 2500
    assert group_size(bins) == 3
    frame = _long(bins)
    whole = Rebinner("flow", bins, 0.1)
    whole.add(frame)
    parts = Rebinner("flow", bins, 0.1)
    for start in range(0, len(frame), 38):  # chunks that split groups, many of them
        parts.add(frame.iloc[start : start + 38])
    out = whole.frame()
    pd.testing.assert_frame_equal(parts.frame(), out)
    assert len(out) == 2 * 834 and list(out.columns) == ["t_s", "flow", "goodput_mbps", "rtt_ms", "cc_pilot"]
    a = out[out["flow"] == "a"].reset_index(drop=True)
    assert a["t_s"].iloc[:3].tolist() == pytest.approx([0.0, 0.3, 0.6])
    assert a["goodput_mbps"].iloc[:2].tolist() == [1.0, 4.0]  # means of bins 0-2, 3-5
    assert a["goodput_mbps"].iloc[-1] == 2499.0  # the last group has one bin
    assert a["rtt_ms"].iloc[:2].tolist() == [10.0, 10.0]  # NaN bins left out of the mean
    assert a["cc_pilot"].iloc[:3].tolist() == [0.0, 1.0, 2.0]  # a step series: first value
    b = out[out["flow"] == "b"]
    assert b["goodput_mbps"].iloc[0] == 101.0


def test_the_native_simulation_steps_and_refuses_misuse(tmp_path: Path) -> None:
    from polycc import _native

    text = scenario_text()
    sim = _native.Simulation(text, "s.toml", str(tmp_path))
    assert (sim.duration_s, sim.bin_s, sim.now_s, sim.pending_rows) == (3.0, 0.1, 0.0, 0)
    assert sim.advance(until_s=1.0) is False
    assert 0.9 < sim.now_s < 1.0 and sim.pending_rows == 2 * 9  # two flows, bins ending by 0.9 s
    chunk = sim.drain()
    assert sim.pending_rows == 0 and set(chunk) == {"flows", "links"}
    with pytest.raises(ValueError, match="until_s"):
        sim.advance(until_s=-1.0)
    with pytest.raises(ValueError, match="budget_s"):
        sim.advance(budget_s=float("nan"))
    assert sim.advance() is True
    out = sim.finish()
    assert '"duration_s": 3.0' in out["summary_json"]
    for call in (sim.advance, sim.drain, sim.finish):
        with pytest.raises(RuntimeError, match="finished or failed"):
            call()
    with pytest.raises(ValueError, match="format"):
        _native.Simulation(text, "s.toml", str(tmp_path), format="yaml")
    with pytest.raises(_native.ScenarioError, match=r"^s\.toml: duration"):
        _native.Simulation(text.replace('"3s"', '"-3s"'), "s.toml", str(tmp_path))
