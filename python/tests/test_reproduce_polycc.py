"""`polycc reproduce polycc --quick`: PolyCC's claims in shortened runs, the convergence-time
definition, and the pool telemetry plot."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from polycc.plots import pool_members
from polycc.reproduce import ReportResult, reproduce
from polycc.reproduce.common import markers
from polycc.reproduce.polycc import convergence_time, rtt_variance_point


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root = tmp_path_factory.mktemp("reproduce-polycc")
    doc = root / "REPRODUCTION.md"
    return reproduce("polycc", quick=True, out=root / "out", doc=doc, plots=False)


def test_rtt_variance_poly_keeps_its_goodput_where_bbr_collapses(quick: ReportResult) -> None:
    # §3.1: similar at ±20 ms; 1.82x-10.35x the BBR variants at ±70 ms (1c: PolyCC / BBR v1).
    assert not quick.failing("1a", "1b", "1c")


@pytest.mark.xfail(
    strict=True,
    reason="our BBR v3's extra_acked allowance covers the 140 ms ACK gaps at ±70 ms (REPRODUCTION.md 1d)",
)
def test_rtt_variance_poly_beats_bbr3_at_70ms(quick: ReportResult) -> None:
    assert not quick.failing("1d")


@pytest.mark.xfail(
    strict=True,
    reason="BBR v1 and PolyCC settle at 1.11x the nominal new BDP, at the edge of ±10 %: Linux's "
    "quantization budget leaves a 9 ms standing queue at 10 Mbit/s (REPRODUCTION.md 2a, tests/bbr.rs)",
)
def test_bandwidth_halving_poly_converges_faster_than_bbr(quick: ReportResult) -> None:
    # §3.2: convergence time −54.1 % vs BBR v1.
    assert not quick.failing("2a")


def test_weighted_mean_trades_delay_for_share(quick: ReportResult) -> None:
    assert not quick.failing("3a", "3b", "3c")


def test_section_is_generated_between_markers(quick: ReportResult) -> None:
    assert quick.doc is not None
    text = quick.doc.read_text(encoding="utf-8")
    begin, end = markers("polycc")
    section = text[text.index(begin) : text.index(end)]
    assert "| 1c |" in section and "| 2a |" in section and "QUICK" in section


def test_rtt_variance_points_span_the_deviation() -> None:
    assert rtt_variance_point(0) == {"flows.0.rtt": "100ms"}
    assert rtt_variance_point(70) == {"flows.0.rtt": "30ms", "links.0.ack_aggregation.interval": "140ms"}
    with pytest.raises(ValueError):
        rtt_variance_point(101)


def test_convergence_time_definition() -> None:
    t = np.arange(0.0, 12.0, 0.01)
    bdp = 125_000.0
    # 250 KB until 5 s, then a linear fall reaching the new BDP at 6 s, then flat.
    x = np.where(t < 5.0, 2 * bdp, np.where(t < 6.0, 2 * bdp - (t - 5.0) * bdp, bdp))
    c = convergence_time(t, x, change_s=5.0, target=bdp, smooth_s=0.8, hold_s=2.0)
    # The 0.8 s trailing mean at t = 6 + s covers 0.8 − s of the ramp (mean (2.8 − s)/2 BDP) and
    # s at the BDP; it reaches 1.1 BDP where s² − 1.6 s + 0.48 = 0, s = 0.4: t = 6.4 s.
    assert c == pytest.approx(1.4, abs=0.02)
    # Probing ±25 % around the BDP in a 0.8 s cycle averages out and counts as settled.
    probing = bdp * (1 + 0.25 * np.sign(np.sin(2 * math.pi * t / 0.8)))
    assert convergence_time(t, probing, change_s=5.0, target=bdp) == pytest.approx(0.0, abs=0.02)
    # Never inside the band: NaN.
    assert math.isnan(convergence_time(t, 2 * bdp + 0 * t, change_s=5.0, target=bdp))


def test_pool_members_reads_the_scenario(tmp_path: Path) -> None:
    doc = {
        "flows": [
            {"id": "a", "cca": {"name": "poly", "pilot": "bbr", "copilots": ["cubic", {"name": "copa"}]}},
            {"id": "b", "cca": "poly"},
            {"id": "c", "cca": "cubic"},
        ]
    }
    assert pool_members(doc) == {"a": ["bbr", "cubic", "copa"], "b": ["bbr", "cubic"]}
