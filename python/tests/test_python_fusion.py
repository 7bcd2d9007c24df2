"""PolyCC fusion functions written in Python (`polycc.run(..., fusions={...})`, `fuse = "py:<name>"`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polycc


def halving(fuse: str, every: str | None = None) -> dict[str, Any]:
    """PolyCC §3.2's pool (pilot BBR, copilot Copa, min pacing rate) on its 20 → 10 Mbit/s path,
    shortened to 8 s with the halving at 4 s."""
    cca: dict[str, Any] = {"name": "poly", "pilot": "bbr", "copilots": ["copa"], "fuse": fuse, "on": "rate"}
    if every is not None:
        cca["fuse_every"] = every
    return {
        "name": "py-fusion",
        "duration": "8s",
        "bin": "100ms",
        "links": [
            {
                "id": "bottleneck",
                "queue": {"kind": "droptail", "size": "250KB"},
                "schedule": [{"at": "0s", "rate": "20Mbps"}, {"at": "4s", "rate": "10Mbps"}],
            }
        ],
        "flows": [{"id": "sender", "cca": cca, "rtt": "100ms"}],
    }


class Lowest:
    """min(values), counting its calls and checking what it is given."""

    def __init__(self) -> None:
        self.calls = 0
        self.seen: set[tuple[int, str, int]] = set()

    def __call__(self, values: list[float], pilot: int, quantity: str, target: float | None) -> float:
        self.calls += 1
        self.seen.add((len(values), quantity, pilot))
        return min(values)


COLUMNS = ["goodput_mbps", "inflight_bytes", "pacing_rate_mbps", "cc_fused_rate_mbps", "cc_m1_rate_mbps"]


def series(r: polycc.RunResult) -> np.ndarray:
    return r.flows[COLUMNS].to_numpy(dtype=float)


@pytest.mark.parametrize("every", ["rtt", "ack"])
def test_a_python_min_gives_exactly_the_built_in_min(every: str) -> None:
    fn = Lowest()
    # A Python fusion defaults to once per RTT; the built-in one is told the same.
    py_every = None if every == "rtt" else "ack"
    builtin = polycc.run(halving("min", every))
    python = polycc.run(halving("py:lowest", py_every), fusions={"lowest": fn})
    assert np.array_equal(series(builtin), series(python), equal_nan=True)
    assert python.summary["flows"][0]["goodput_mbps"] == builtin.summary["flows"][0]["goodput_mbps"]
    # Two members, rate fusion, BBR pilots.
    assert fn.seen == {(2, "rate", 0)}
    acks = python.summary["flows"][0]["acks_sent"]
    if every == "rtt":
        # One call per smoothed RTT: 8 s over an RTT of 100–220 ms (base + up to one BDP queue).
        assert 8 / 0.22 - 2 <= fn.calls <= 8 / 0.1 + 2
    else:
        # At least once per ACK (losses and timers fuse too).
        assert fn.calls >= acks


def test_per_rtt_fusion_is_not_per_ack_fusion() -> None:
    per_rtt = polycc.run(halving("min", "rtt"))
    per_ack = polycc.run(halving("min"))
    assert not np.array_equal(series(per_rtt), series(per_ack), equal_nan=True)


def test_a_failing_python_fusion_raises_after_the_run_with_its_own_exception() -> None:
    def broken(values: list[float], pilot: int, quantity: str, target: float | None) -> float:
        raise ZeroDivisionError("no fusion today")

    with pytest.raises(RuntimeError, match=r"fusion py:broken failed at its call 1") as e:
        polycc.run(halving("py:broken"), fusions={"broken": broken})
    assert isinstance(e.value.__cause__, ZeroDivisionError)

    def not_a_float(values: list[float], pilot: int, quantity: str, target: float | None) -> Any:
        return "fast"

    with pytest.raises(RuntimeError, match="must return a float"):
        polycc.run(halving("py:nf"), fusions={"nf": not_a_float})


def test_an_unknown_python_fusion_is_a_scenario_error_naming_the_fusions_argument() -> None:
    unknown = r'fuse = "py:lowest" is not one of max, min, closest, mean.*fusions='
    with pytest.raises(polycc.ScenarioError, match=unknown):
        polycc.run(halving("py:lowest"))
    with pytest.raises(TypeError, match=r"fusions\[\"x\"\] is not callable"):
        polycc.run(halving("py:x"), fusions={"x": 3})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------------------------
# Fusions named by reference in the scenario (`fuse = "py:<module-or-file>:<function>"`), for
# the CLI and sweeps.

FUSION_FILE = """
def lowest(values, pilot, quantity, target):
    return min(values)

class Holder:
    @staticmethod
    def lowest(values, pilot, quantity, target):
        return min(values)

NOT_A_FUNCTION = 3
"""


def halving_toml(fuse: str) -> str:
    """`halving` as a TOML file, with the per-RTT fusion spelled out for the built-in one."""
    return f"""
name = "py-fusion"
duration = "8s"
bin = "100ms"

[[links]]
id = "bottleneck"
queue = {{ kind = "droptail", size = "250KB" }}
schedule = [{{ at = "0s", rate = "20Mbps" }}, {{ at = "4s", rate = "10Mbps" }}]

[[flows]]
id = "sender"
rtt = "100ms"
[flows.cca]
name = "poly"
pilot = "bbr"
copilots = ["copa"]
fuse = "{fuse}"
on = "rate"
fuse_every = "rtt"
"""


def write_case(tmp_path: Path, fuse: str) -> Path:
    (tmp_path / "my_fusions.py").write_text(FUSION_FILE)
    f = tmp_path / "scenario.toml"
    f.write_text(halving_toml(fuse))
    return f


def test_a_fusion_named_by_file_runs_from_the_cli_like_the_built_in(tmp_path: Path) -> None:
    from conftest import polycc as cli

    builtin = polycc.run(halving("min", "rtt"))
    f = write_case(tmp_path, "py:my_fusions.py:lowest")
    out = tmp_path / "out"
    res = cli("run", f, "--out", out, "--no-plots")
    assert res.returncode == 0, res.stderr
    got = json.loads((out / "summary.json").read_text())
    assert got["flows"][0]["goodput_mbps"] == builtin.summary["flows"][0]["goodput_mbps"]
    # The same through the API, and a dotted attribute path.
    for fuse in ["py:my_fusions.py:lowest", "py:my_fusions.py:Holder.lowest"]:
        r = polycc.run(write_case(tmp_path, fuse))
        assert np.array_equal(series(r), series(builtin), equal_nan=True), fuse


def test_a_fusion_named_by_module_runs_in_a_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    f = write_case(tmp_path, "min")
    df = polycc.sweep(f, {"flows.0.cca.fuse": ["min", "py:my_fusions:lowest"]}, jobs=2)
    assert list(df["status"]) == ["ok", "ok"], df["error"].tolist()
    by_fuse = dict(zip(df["flows.0.cca.fuse"], df["flow.sender.goodput_mbps"], strict=True))
    assert by_fuse["py:my_fusions:lowest"] == by_fuse["min"]


@pytest.mark.parametrize(
    ("fuse", "why"),
    [
        ("py:absent.py:lowest", "no file"),
        ("py:no_such_module_xyz:lowest", "cannot import module 'no_such_module_xyz'"),
        ("py:my_fusions.py:highest", "has no attribute 'highest'"),
        ("py:my_fusions.py:NOT_A_FUNCTION", "is a int, not a function"),
        ("py:my_fusions.py:", "expected py:<module>:<function>"),
    ],
)
def test_a_bad_fusion_reference_is_a_clear_user_error(tmp_path: Path, fuse: str, why: str) -> None:
    from conftest import polycc as cli

    f = write_case(tmp_path, fuse)
    commands: list[list[str | Path]] = [["check", f], ["run", f, "--out", tmp_path / "out"]]
    for command in commands:
        res = cli(*command)
        assert res.returncode == 2, (res.returncode, res.stderr)
        assert "Traceback" not in res.stderr
        for frag in [str(f), f'flows.0.cca.fuse = "{fuse}"', why]:
            assert frag in res.stderr, (frag, res.stderr)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# A fusion's own errors are the user's (FusionError; `polycc run` exits 2), naming the function.


@pytest.mark.parametrize(
    ("bad", "shown"), [(float("nan"), "NaN"), (float("inf"), "inf"), (-5.0, "-5"), (0.0, "0")]
)
def test_a_fusion_returning_no_window_is_an_error_naming_it_and_the_value(bad: float, shown: str) -> None:
    def odd(values: list[float], pilot: int, quantity: str, target: float | None) -> float:
        return bad

    with pytest.raises(polycc.FusionError, match=rf"fusion py:odd returned {shown} at its call 1 .*odd"):
        polycc.run(halving("py:odd"), fusions={"odd": odd})


def test_a_fusion_with_the_wrong_signature_is_refused_before_the_run() -> None:
    def two(values: list[float], pilot: int) -> float:
        return min(values)

    expected = r"fusion py:two: .*<locals>\.two\(values: .*, pilot: [^,]*\) .* cannot be called as a fusion"
    with pytest.raises(polycc.FusionError, match=expected) as e:
        polycc.run(halving("py:two"), fusions={"two": two})
    assert "fn(values, pilot, quantity, target) -> float" in str(e.value)
    # A FusionError is a RuntimeError, as it was before it had its own type.
    assert isinstance(e.value, RuntimeError)


def test_a_fusion_of_the_wrong_signature_is_a_user_error_in_the_cli(tmp_path: Path) -> None:
    from conftest import polycc_process

    (tmp_path / "my_fusions.py").write_text("def lowest(values):\n    return min(values)\n")
    f = tmp_path / "scenario.toml"
    f.write_text(halving_toml("py:my_fusions.py:lowest"))
    for command in (["check", f], ["run", f, "--out", tmp_path / "out"]):
        res = polycc_process(*command)
        assert res.returncode == 2, (res.returncode, res.stderr)
        assert "bug in polycc" not in res.stderr and "Traceback" not in res.stderr
        assert "lowest(values)" in res.stderr and "fn(values, pilot, quantity, target)" in res.stderr
    (tmp_path / "my_fusions.py").write_text("def lowest(values, pilot, quantity, target):\n    return -1.0\n")
    res = polycc_process("run", f, "--out", tmp_path / "out")
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "returned -1 at its call 1" in res.stderr and "bug in polycc" not in res.stderr
    assert not (tmp_path / "out").exists()
