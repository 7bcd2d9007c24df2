"""PolyCC fusion functions written in Python (`polycc.run(..., fusions={...})`, `fuse = "py:<name>"`)."""

from __future__ import annotations

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
