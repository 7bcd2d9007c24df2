"""The Janus-on-kernel-TCP section's video rows (Table 3): which runs they ask for and what they
show (the testbed's runs themselves need root and five minutes each: they are the section's
command, not a test)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from polycc.reproduce import janus_kernel as jk

PAPERS = Path(__file__).resolve().parents[2] / "scenarios" / "papers"

#: (stalls, 1440P goodput, 1080P throughput) of the simulator's run and the testbed's.
Side = tuple[int, float, float]


def fake_runs(
    calls: list[tuple[dict[str, Any], dict[str, Any]]], janus: tuple[Side, Side], cubic: tuple[Side, Side]
) -> Callable[..., Any]:
    def run(side: Side) -> Any:
        stalls, hi, lo = side
        flows = [
            {"id": "p1440", "rebuffers": stalls, "rebuffer_s": 2.5 * stalls, "startup_s": 4.0,
             "rebuffer_ratio": 0.01, "goodput_mbps": hi, "throughput_mbps": hi * 1.036},
            {"id": "p1080", "rebuffers": 0, "rebuffer_s": 0.0, "startup_s": 2.0,
             "rebuffer_ratio": 0.0, "goodput_mbps": lo / 1.036, "throughput_mbps": lo},
        ]  # fmt: skip
        return SimpleNamespace(summary={"flows": flows})

    def fake(path: Path, overrides: dict[str, Any], real: dict[str, Any] | None = None) -> Any:
        assert path.name == "youtube.toml"
        calls.append((overrides, real or {}))
        sim, emu = cubic if "flows" in overrides else janus
        return run(sim), run(emu)

    return fake


def test_table_3_runs_janus_on_the_shim_and_cubic_on_the_kernel_without_intents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[dict[str, Any], dict[str, Any]]] = []
    # The simulator's CUBIC stalls once, the kernel's seven times; Janus never.
    fake = fake_runs(calls, janus=((0, 10.1, 4.2), (0, 10.1, 4.2)), cubic=((1, 10.1, 4.3), (7, 9.5, 4.3)))
    monkeypatch.setattr(jk, "sim_and_testbed", fake)
    text = jk.video_table(PAPERS / "janus")

    seeds = list(jk.VIDEO_SEEDS)
    janus, cubic = calls[: len(seeds)], calls[len(seeds) :]
    # Janus on the shim on both sides: the simulator runs its model of the same stack.
    assert [o for o, _ in janus] == [{"flows.*.stack": "tcp", "seed": s} for s in seeds]
    assert all(real == {} for _, real in janus)
    assert [o["seed"] for o, _ in cubic] == seeds and all(real == {} for _, real in cubic)
    for o, _ in cubic:
        assert [(f["cca"], f["stack"]) for f in o["flows"]] == [("cubic", "linux")] * 2
        assert not any("intent" in f for f in o["flows"])
    assert "| CUBIC: 1440P rebuffering events | 21 | 1 [1, 1] | 7 [7, 7] |" in text
    assert "| CUBIC: 1440P time stalled | 31.9 s | 2.5 s [2.5 s, 2.5 s] | 17.5 s [17.5 s, 17.5 s] |" in text
    assert "| Janus: 1440P rebuffering events | 6 | 0 [0, 0] | 0 [0, 0] |" in text
    # The kernel's CUBIC stalls far more than the model's here: the findings say so, and do
    # not explain a Janus goodput that meets the bitrate on both.
    assert "With CUBIC the kernel's 1440P player has 7 stalls, 17.5 s in all, against 1, 2.5 s," in text
    assert "chunks come a little later" not in text


def test_a_janus_player_below_its_bitrate_is_explained(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = fake_runs([], janus=((0, 10.26, 4.19), (40, 9.96, 4.39)), cubic=((1, 10.1, 4.3), (1, 10.1, 4.3)))
    monkeypatch.setattr(jk, "sim_and_testbed", fake)
    text = jk.video_table(PAPERS / "janus")

    assert "has 40 stalls, 100.0 s in all, against 0 stalls, 0.0 s, on the simulator's model" in text
    assert "delivers 9.96 Mbit/s of its video's 10 Mbit/s (10.26 in the simulator)" in text
    assert "carrying 4.39 Mbit/s on the wire (4.19)" in text
    assert "chunks come a little later than they play" in text
    assert "| Janus: 1080P goodput (Mbit/s) | – | 4.04 [4.04, 4.04] | 4.24 [4.24, 4.24] |" in text
