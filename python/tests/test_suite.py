"""The scenario suite (scenarios/suite/) and `polycc suite`: every file validates and declares its
metric and half, the cellular traces regenerate byte for byte, and a small suite writes the
leaderboard with the best CCA of each scenario at 1.0."""

from __future__ import annotations

import math
import os
import shutil
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from conftest import polycc

from polycc import cell_traces
from polycc.suite import HALVES, METRICS, read_suite_table, suite_dir

SUITE = suite_dir()
FILES = sorted(SUITE.glob("*.toml"))
EXTRA = sorted((SUITE / "extra").glob("*.toml"))
#: The issue asks for at least this many scenarios.
MIN_SCENARIOS = 24


def test_the_suite_has_enough_scenarios_in_two_halves() -> None:
    halves = [tomllib.loads(f.read_text())["suite"]["half"] for f in FILES]
    assert len(FILES) >= MIN_SCENARIOS
    assert halves.count("tuning") >= MIN_SCENARIOS // 2 - 1
    assert halves.count("held_out") >= MIN_SCENARIOS // 2 - 1
    assert set(halves) <= {"tuning", "held_out"}


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_suite_file_passes_check_and_declares_metric_and_half(path: Path) -> None:
    res = polycc("check", path)
    assert res.returncode == 0, res.stderr
    doc = tomllib.loads(path.read_text())
    half, metric, params, _, flow = read_suite_table(path, doc)
    assert half in HALVES and metric in METRICS
    assert all(k in params for k in METRICS[metric][1])
    # The metric is written in the comment block too, before any result.
    assert "Metric" in path.read_text().split("name =")[0] or metric in path.read_text().split("name =")[0]
    assert flow == "test"


@pytest.mark.parametrize("path", EXTRA, ids=[f.stem for f in EXTRA])
def test_extra_rows_validate_with_their_stand_in_trace(path: Path) -> None:
    assert polycc("check", path).returncode == 0


def test_check_names_a_bad_suite_key(tmp_path: Path) -> None:
    text = (SUITE / "vs-cubic.toml").read_text().replace('metric = "share"', 'metric = "happiness"')
    f = tmp_path / "bad.toml"
    f.write_text(text)
    res = polycc("check", f)
    assert res.returncode == 2
    assert "suite.metric" in res.stderr and "happiness" in res.stderr and "goodput" in res.stderr


def test_cellular_traces_regenerate_identically(tmp_path: Path) -> None:
    written = cell_traces.write_all(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in (SUITE / "traces").glob("*.down"))
    for p in written:
        assert p.read_bytes() == (SUITE / "traces" / p.name).read_bytes(), p.name
    total = sum(p.stat().st_size for p in written)
    assert total < 400_000


def test_trace_model_means_and_outages() -> None:
    # The driving model has outages: some 10 ms steps at the outage state's capacity (0).
    caps = {m.name: cell_traces.capacity_mbps(m) for m in cell_traces.MODELS}
    assert min(caps["lte-driving"]) == 0.0
    assert min(caps["lte-walking"]) > 0.2  # no outage state
    mean_3g = sum(caps["3g-slow"]) / len(caps["3g-slow"])
    assert 0.8 < mean_3g < 3.0


def _small_suite(tmp_path: Path) -> Path:
    d = tmp_path / "suite"
    (d / "traces").mkdir(parents=True)
    for name in ("wired-10mbps-20ms", "deep-buffer-10bdp"):
        text = (SUITE / f"{name}.toml").read_text().replace('duration = "20s"', 'duration = "4s"')
        (d / f"{name}.toml").write_text(text)
    return d


def test_suite_writes_the_leaderboard(tmp_path: Path) -> None:
    d = _small_suite(tmp_path)
    out = tmp_path / "board"
    summary = tmp_path / "board.md"
    res = polycc(
        "suite", "--dir", d, "--ccas", "cubic,vegas", "--seeds", "2", "--out", out, "--jobs", "2",
        "--summary", summary,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    runs = pd.read_parquet(out / "results.parquet")
    assert len(runs) == 2 * 2 * 2
    assert {"scenario", "half", "cca", "seed", "value", "score"} <= set(runs.columns)
    assert set(runs.status) == {"ok"}
    assert sorted(runs.seed.unique()) == [1, 2]
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == 4
    for name, g in scores.groupby("scenario"):
        best = g.loc[g.score.idxmax()]
        assert best.score == pytest.approx(1.0), name
        assert (g.score <= 1.0 + 1e-12).all()
        assert best.score_lo <= 1.0 <= best.score_hi
        assert best.cca == best.best_cca
        # The best has the best mean value: highest goodput, or lowest floored delay.
        higher = METRICS[g.metric.iloc[0]][0]
        assert best.mean_value == (g.mean_value.max() if higher else g.mean_value.min())
    # Per run, the score is the value relative to the best mean.
    for rec in runs.to_dict("records"):
        b = scores[(scores.scenario == rec["scenario"])].best_value.iloc[0]
        higher = METRICS[rec["metric"]][0]
        want = rec["value"] / b if higher else b / rec["value"]
        assert math.isclose(rec["score"], want, rel_tol=1e-12)
    # Vegas keeps the 10-BDP buffer nearly empty; CUBIC fills it: Vegas is the best there. In
    # these 4-s runs CUBIC is still filling it (0.53 of Vegas's p95 delay; 0.10 over the
    # suite's 20 s, SUITE.md).
    deep = scores[scores.scenario == "suite-deep-buffer-10bdp"].set_index("cca")
    assert deep.score["vegas"] == 1.0 and deep.score["cubic"] < 0.6
    html = (out / "index.html").read_text()
    assert "Rank table" in html and "suite-deep-buffer-10bdp" in html
    assert (out / "scatter-suite-deep-buffer-10bdp.png").stat().st_size > 1000
    assert "| suite-deep-buffer-10bdp | tuning | p95_delay_at_floor | vegas |" in summary.read_text()


def test_bad_ccas_exit_2_naming_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "board"
    res = polycc("suite", "--dir", _small_suite(tmp_path), "--ccas", "cubic,cubc", "--out", out)
    assert res.returncode == 2
    assert "--ccas" in res.stderr and "cubc" in res.stderr
    assert not out.exists()
    res = polycc("suite", "--dir", _small_suite(tmp_path / "b"), "--ccas", "pibes", "--out", out)
    assert res.returncode == 2 and "--ccas" in res.stderr and "video" in res.stderr


def test_bad_scenarios_flag_exits_2(tmp_path: Path) -> None:
    res = polycc("suite", "--dir", _small_suite(tmp_path), "--scenarios", "nope", "--out", tmp_path / "o")
    assert res.returncode == 2 and "--scenarios" in res.stderr and "nope" in res.stderr


def test_extra_row_is_skipped_with_a_message_without_public_traces(tmp_path: Path) -> None:
    d = _small_suite(tmp_path)
    (d / "extra").mkdir()
    shutil.copy(EXTRA[0], d / "extra" / EXTRA[0].name)
    (d / "traces" / "lte-walking.down").write_bytes((SUITE / "traces" / "lte-walking.down").read_bytes())
    res = polycc(
        "suite", "--dir", d, "--ccas", "cubic", "--seeds", "1", "--out", tmp_path / "o",
        "--public-traces", tmp_path / "absent", "--scenarios", "wired-10mbps-20ms",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "skipped: public trace" in res.stderr and "absent" in res.stderr


def test_emu_backend_leaves_out_what_the_testbed_refuses(tmp_path: Path) -> None:
    from polycc.suite import emulator_refusals, load_suite

    d = _small_suite(tmp_path)
    f = d / "deep-buffer-10bdp.toml"
    f.write_text(f.read_text().replace('rtt = "40ms"', 'rtt = "40ms"\nsend_jitter = "1ms"'))
    scenarios, _ = load_suite(d)
    refused = emulator_refusals(scenarios, ["cubic", "vegas"])
    assert list(refused) == ["suite-deep-buffer-10bdp"]
    assert "send_jitter" in refused["suite-deep-buffer-10bdp"]
    # Nothing left to run: exit 2 before any output, naming the reason.
    res = polycc(
        "suite", "--dir", d, "--backend", "emu", "--scenarios", "deep-buffer-10bdp", "--out", tmp_path / "o"
    )
    assert res.returncode == 2, res.stderr
    assert "not run in the testbed" in res.stderr and "send_jitter" in res.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the emulated testbed needs root")
def test_emu_backend_runs_a_supported_scenario(tmp_path: Path) -> None:
    d = tmp_path / "suite"
    d.mkdir()
    text = (SUITE / "wired-10mbps-20ms.toml").read_text().replace('duration = "20s"', 'duration = "2s"')
    (d / "w.toml").write_text(text)
    out = tmp_path / "o"
    res = polycc("suite", "--dir", d, "--backend", "emu", "--ccas", "cubic", "--seeds", "1", "--out", out)
    assert res.returncode == 0, res.stderr
    runs = pd.read_parquet(out / "results.parquet")
    assert list(runs.status) == ["ok"]
    # Real CUBIC over real QUIC on a 10 Mbit/s emulated link: most of it in 2 s.
    assert 5.0 < runs.goodput_mbps.iloc[0] < 10.0
