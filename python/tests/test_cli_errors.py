"""Bad input of any kind: one clear message naming the file and the key path, exit status 2, no
traceback, and no output directory. None of these need the simulation engine."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import polycc, polycc_process, scenario_text

CASES = {
    # name: (scenario text, expected fragments of the message)
    "unknown_cca": (scenario_text(cca="nosuchcca"), ["flows[0].cca", "nosuchcca", "newreno"]),
    "bad_unit": (scenario_text(capacity='rate = "10Mbit"'), ["links[0].rate", "Mbps"]),
    "negative_rate": (scenario_text(capacity='rate = "-5Mbps"'), ["links[0].rate", "negative"]),
    "unknown_key": (scenario_text(link_extra="speed = 3"), ["links[0]", "speed", "rate"]),
    "missing_trace": (
        scenario_text(capacity='trace = "traces/nope.down"'),
        ["links[0].trace", "nope.down"],
    ),
    "malformed_trace": (
        scenario_text(capacity='trace = "bad.down"'),
        ["links[0].trace", "bad.down", "line 2"],
    ),
    "bad_duration": (scenario_text().replace('"3s"', '"3 parsecs"'), ["duration", "ms"]),
    "loss_not_probability": (scenario_text().replace("loss = 0.01", "loss = 1.5"), ["links[0].loss", "1.0"]),
    "toml_syntax": (scenario_text() + "\n[[flows]\n", ["line"]),
}


def _assert_user_error(res, file: Path, fragments: list[str]) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    assert str(file) in res.stderr or file.name in res.stderr, res.stderr
    for frag in fragments:
        assert frag in res.stderr, (frag, res.stderr)
    assert len(res.stderr.strip().splitlines()) <= 3, res.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_rejects_bad_scenarios(tmp_path: Path, case: str) -> None:
    text, fragments = CASES[case]
    f = tmp_path / f"{case}.toml"
    f.write_text(text)
    (tmp_path / "bad.down").write_text("1\nfast\n3\n")
    out = tmp_path / "out"
    res = polycc("run", f, "--out", out)
    _assert_user_error(res, f, fragments)
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("command", ["run", "sweep", "check"])
def test_missing_file(tmp_path: Path, command: str) -> None:
    f = tmp_path / "absent.toml"
    out = tmp_path / "out"
    args = ["--out", str(out)] if command != "check" else []
    res = polycc(command, f, *args)
    _assert_user_error(res, f, ["no such file"])
    assert not out.exists()


GRID_CASES = {
    "no_equals": (["links.0.rate"], ["links.0.rate", "KEY=V1,V2"]),
    "empty_value": (["links.0.rate=5Mbps,"], ["links.0.rate", "empty value"]),
    "bad_key": (["links..rate=1"], ["links..rate", "key path"]),
    "index_out_of_range": (["links.4.rate=5Mbps"], ["links.4.rate", "1 entries"]),
    "unknown_key": (["links.0.speed=5Mbps"], ["links[0]", "speed"]),
    "bad_value": (["links.0.rate=5Mbit,10Mbps"], ["links[0].rate", "5Mbit", "Mbps"]),
    "unknown_cca": (["flows.*.cca=newreno,warp"], ["flows[0].cca", "warp"]),
    "duplicate_key": (["duration=1s", "duration=2s"], ["duration", "twice"]),
    "seed_twice": (["seed=1,2", "--seeds", "2"], ["--seeds"]),
}


@pytest.mark.parametrize("case", sorted(GRID_CASES))
def test_sweep_rejects_bad_grids(tmp_path: Path, case: str, short_scenario: Path) -> None:
    specs, fragments = GRID_CASES[case]
    args: list[str] = []
    for s in specs:
        args += [s] if s.startswith("--") or s.isdigit() else ["--grid", s]
    out = tmp_path / "sweep"
    res = polycc("sweep", short_scenario, *args, "--out", out)
    _assert_user_error(res, short_scenario, fragments)
    assert not out.exists()


def test_refuses_to_replace_a_foreign_directory(tmp_path: Path, short_scenario: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    res = polycc("run", short_scenario, "--out", out)
    _assert_user_error(res, out, ["refusing"])
    assert (out / "thesis.tex").read_text() == "precious"


def test_check_accepts_a_good_scenario(short_scenario: Path) -> None:
    res = polycc("check", short_scenario)
    assert res.returncode == 0, res.stderr
    assert "ok" in res.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{bad}", "--out", "{out}"],
        ["sweep", "{good}", "--grid", "links.0.rate=5Mbit", "--out", "{out}"],
        ["sweep", "{good}", "--grid", "links.0.rate", "--out", "{out}"],
        ["run", "{absent}", "--out", "{out}"],
    ],
    ids=["bad-cca", "bad-grid-value", "bad-grid-syntax", "missing-file"],
)
def test_user_errors_in_a_real_process(tmp_path: Path, args: list[str]) -> None:
    files = {
        "bad": tmp_path / "bad.toml",
        "good": tmp_path / "good.toml",
        "absent": tmp_path / "absent.toml",
        "out": tmp_path / "out",
    }
    files["bad"].write_text(scenario_text(cca="warp"))
    files["good"].write_text(scenario_text())
    res = polycc_process(*(a.format(**files) for a in args))
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("polycc: error: ") and "Traceback" not in res.stderr
    assert ".toml" in res.stderr
    assert not files["out"].exists()


def test_internal_errors_are_one_line_not_a_traceback(
    short_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import polycc.api
    from polycc.cli import main

    def broken(*_a: object, **_k: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(polycc.api, "run_scenario", broken)
    monkeypatch.delenv("POLYCC_DEBUG", raising=False)
    with pytest.raises(SystemExit) as e:
        main(["run", str(short_scenario), "--out", str(tmp_path / "out")])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("polycc: internal error: KeyError") and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_ccas_name_shows_the_parameters_and_an_unknown_name_lists_the_known() -> None:
    res = polycc("ccas", "cubic")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("cubic: ")
    assert any(line.split()[:1] == ["hystart"] and "a boolean" in line for line in lines), res.stdout
    assert any(line.split()[:1] == ["beta"] and " in [" in line for line in lines), res.stdout
    assert "defaults: `beta` (0.7)" in res.stdout and "source: RFC 9438" in res.stdout
    res = polycc("ccas", "cubc")
    assert res.returncode == 2
    assert "unknown congestion control 'cubc'; known: " in res.stderr and "newreno" in res.stderr


@pytest.mark.parametrize("quick", [True, False])
def test_reproduce_quick_says_failing_claims_are_expected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quick: bool
) -> None:
    import polycc.reproduce as rep
    from polycc.reproduce.common import Reproduction

    def claim(rid: str, holds: bool) -> Reproduction:
        return Reproduction(
            id=rid, figure="Fig. 1", claim="c", paper="1", ours="2", holds=holds, criterion="x"
        )

    @dataclass
    class FakeSection:
        reproductions: list[Reproduction]

    def fake(paper: str, **kwargs: object) -> rep.ReportResult:
        assert kwargs["progress"] is True
        section = FakeSection([claim("1a", True), claim("1b", False)])
        return rep.ReportResult(paper=paper, sections=[section], out=tmp_path, doc=None, runs=2)  # type: ignore[list-item]

    monkeypatch.setattr(rep, "reproduce", fake)
    res = polycc("reproduce", "pcc", "--no-doc", *(["--quick"] if quick else []))
    assert res.returncode == 0, res.stderr
    assert "1/2 claims hold" in res.stdout
    assert ("some claims are expected to fail in quick mode" in res.stderr) == quick, res.stderr


@pytest.mark.parametrize("tty", [True, False])
def test_a_long_single_run_shows_its_wall_time_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tty: bool
) -> None:
    import time

    import polycc.cli as cli_module

    monkeypatch.setattr(cli_module, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    assert cli_module._with_progress(lambda _cancel: time.sleep(0.6) or 42, "running x") == 42
    err = capsys.readouterr().err
    assert ("running x: 0 s" in err) == tty, err
    with pytest.raises(ZeroDivisionError):  # an error in the run reaches the caller
        cli_module._with_progress(lambda _cancel: 1 / 0, "running y")


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_fifo_as_scenario_is_refused_without_blocking(tmp_path: Path, command: str) -> None:
    f = tmp_path / "scenario.fifo"
    os.mkfifo(f)
    res = polycc(command, f)
    _assert_user_error(res, f, ["not a regular file"])


@pytest.mark.parametrize("name", ["../../escaped", "/tmp/polycc-absolute", "a\\u0000b", ".hidden"])
def test_a_name_that_is_not_a_file_name_writes_nothing(tmp_path: Path, name: str) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    f = work / "s.toml"
    f.write_text(scenario_text().replace('name = "short"', f'name = "{name}"'))
    res = polycc_process("run", f, "--no-plots", cwd=work)
    _assert_user_error(res, f, ["name:", "letters, digits"])
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "s.toml"]
    assert not Path("/tmp/polycc-absolute").exists()
