"""What the Python API accepts: grid values (scalars, numpy), numpy scenario values, `jobs`,
controller names. Each refusal names the key or the allowed values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polycc
from polycc.grid import plan


def test_a_scalar_grid_value_is_one_value_not_its_characters(short_scenario: Path) -> None:
    tasks = plan(short_scenario, {"links.0.rate": "10Mbps"})
    assert [t.params for t in tasks] == [{"links.0.rate": "10Mbps"}]
    tasks = plan(short_scenario, {"duration": "2s", "flows.0.cca": {"name": "cubic", "beta": 0.7}})
    assert [t.params for t in tasks] == [{"duration": "2s", "flows.0.cca": {"name": "cubic", "beta": 0.7}}]


def test_numpy_values_are_their_python_values(short_scenario: Path) -> None:
    tasks = plan(
        short_scenario,
        {
            "links.0.loss": np.array([0.0, 0.01]),
            "flows.0.cca": [{"name": "newreno", "beta": np.float32(0.5)}],
            "seed": np.arange(3, 5),
        },
    )
    assert [(t.params["links.0.loss"], t.seed) for t in tasks] == [(0.0, 3), (0.0, 4), (0.01, 3), (0.01, 4)]
    for t in tasks:
        assert type(t.params["links.0.loss"]) is float and type(t.params["flows.0.cca"]["beta"]) is float
    # In a scenario dict too (numpy scalars nested in lists and tables).
    doc = _short_dict()
    doc["links"][0]["loss"] = np.float64(0.01)
    doc["flows"][0]["cca"] = {"name": "cubic", "beta": np.float32(0.5)}
    doc["seed"] = np.uint64(3)
    doc["links"][0]["queue"]["size"] = np.str_("1bdp")
    assert type(_plain_via_api(doc)["seed"]) is int
    assert polycc.Scenario.load(_plain_via_api(doc)).validate() == "short"


def _short_dict() -> dict[str, Any]:
    import tomllib

    from conftest import scenario_text

    return tomllib.loads(scenario_text())


def _plain_via_api(doc: dict[str, Any]) -> dict[str, Any]:
    from polycc.grid import plain_document

    return plain_document(doc)


@pytest.mark.parametrize("bad", [float("nan"), np.nan, np.float64("inf"), -np.inf])
def test_nan_and_infinities_are_refused_with_the_key_path(short_scenario: Path, bad: Any) -> None:
    with pytest.raises(
        polycc.GridError, match=r": --grid links\.0\.loss: -?(nan|inf) is not a value a scenario can hold"
    ):
        plan(short_scenario, {"links.0.loss": [0.0, bad]})
    doc = _short_dict()
    doc["flows"][1]["cca"] = {"name": "newreno", "beta": bad}
    with pytest.raises(polycc.ScenarioError, match=r"^<dict>: flows\.1\.cca\.beta: .* is not a value"):
        polycc.run(doc)
    with pytest.raises(polycc.ScenarioError, match=r"^<dict>: flows\.1\.cca\.beta: "):
        polycc.sweep(doc, {"duration": ["1s"]})


def test_an_object_that_is_no_scenario_value_is_named_with_its_key(short_scenario: Path) -> None:
    with pytest.raises(
        polycc.GridError, match=r": --grid duration: <object .*> \(object\) is not a scenario value; allowed"
    ):
        plan(short_scenario, {"duration": [object()]})


@pytest.mark.parametrize("jobs", [0, -2, 1.5, True])
def test_jobs_must_be_a_positive_integer(short_scenario: Path, jobs: Any) -> None:
    with pytest.raises(
        ValueError, match=r"jobs: .* is not a number of parallel runs; give a positive integer"
    ):
        polycc.sweep(short_scenario, {"duration": ["1s"]}, jobs=jobs)
    with pytest.raises(ValueError, match="not a number of parallel runs"):
        polycc.LocalExecutor(jobs)


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_the_cli_refuses_jobs_below_one(short_scenario: Path, tmp_path: Path, jobs: str) -> None:
    from conftest import polycc as cli

    res = cli("sweep", short_scenario, "--grid", "duration=1s", "--jobs", jobs, "--out", tmp_path / "o")
    assert res.returncode == 2 and "--jobs" in res.stderr, res.stderr
    assert not (tmp_path / "o").exists()


def test_cca_summary_of_an_unknown_name_lists_the_known_ones() -> None:
    assert "CUBIC" in polycc.cca_summary("cubic") or polycc.cca_summary("cubic")
    with pytest.raises(polycc.UnknownCcaError, match=r"unknown congestion control 'nope'; known: .*cubic"):
        polycc.cca_summary("nope")
    with pytest.raises(ValueError, match=r"known: .*newreno"):
        polycc.cca_parameters("nope")


def test_cca_parameters_are_the_declared_schema() -> None:
    params = {p.name: p for p in polycc.cca_parameters("cubic")}
    assert list(params) == [
        "beta",
        "c",
        "fast_convergence",
        "hystart",
        "reno_friendly",
        "hystart_variant",
        "alpha_to_one",
        "target_rtt",
        "min_growth_before_loss",
        "recovery_spans_retransmissions",
        "prr",
        "growth",
    ]
    beta = params["beta"]
    assert (beta.type, beta.default, beta.range) == ("number", 0.7, (0.05, 0.95))
    assert beta.source == "RFC 9438 §4.6"
    assert params["hystart"].type == "boolean" and params["hystart"].default is True
    # A bound set by another parameter, a meaning for absence, a choice, a nested CCA list.
    gcc = {p.name: p for p in polycc.cca_parameters("gcc")}
    assert gcc["start_rate_kbps"].range == ("min_rate_kbps", "max_rate_kbps")
    assert gcc["start_rate_kbps"].range_text == "[min_rate_kbps, max_rate_kbps]"
    bbr = {p.name: p for p in polycc.cca_parameters("bbr")}
    assert bbr["seed"].default is None and bbr["seed"].default_text == "derived from the flow's seed"
    poly = {p.name: p for p in polycc.cca_parameters("poly")}
    assert poly["on"].choices == ("cwnd", "rate") and poly["on"].default_text == '"cwnd"'
    assert (poly["copilots"].type, poly["copilots"].default) == ("list of CCA specs", ["cubic"])
    for name in polycc.cca_names():
        assert all(p.description and p.source for p in polycc.cca_parameters(name)), name


def test_a_sweep_over_one_scalar_value_runs_once(short_scenario: Path, tmp_path: Path) -> None:
    df = polycc.sweep(
        short_scenario, {"links.0.rate": "10Mbps"}, jobs=1, out_dir=tmp_path / "sw", plots=False
    )
    assert list(df["links.0.rate"]) == ["10Mbps"] and list(df["status"]) == ["ok"]
    import json

    manifest = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert manifest["grid"] == {"links.0.rate": ["10Mbps"]}


def test_points_take_numpy_values_and_record_them_plainly(short_scenario: Path, tmp_path: Path) -> None:
    points = [{"links.0.loss": np.float64(0.0), "flows.0.cca": np.str_("cubic")}]
    polycc.sweep(short_scenario, points, seeds=np.int64(1), jobs=1, out_dir=tmp_path / "p", plots=False)
    import json

    manifest = json.loads((tmp_path / "p" / "sweep.json").read_text())
    assert manifest["points"] == [{"links.0.loss": 0.0, "flows.0.cca": "cubic"}]
    with pytest.raises(polycc.GridError, match=r"points\[0\]\.links\.0\.loss: nan is not a value"):
        polycc.sweep(short_scenario, [{"links.0.loss": np.nan}])
