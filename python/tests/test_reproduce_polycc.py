"""`polycc reproduce polycc --quick`: PolyCC's claims in shortened runs, the convergence-time
definition, and the pool telemetry plot."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from polycc.plots import pool_members
from polycc.reproduce import ReportResult, reproduce
from polycc.reproduce.common import AtMost, markers, pct
from polycc.reproduce.common import all_alike as deterministic
from polycc.reproduce.common import judge_over_seeds as judge
from polycc.reproduce.pcc.shared import SEND_JITTER_KNOB as PCC_SEND_JITTER_KNOB
from polycc.reproduce.polycc import (
    CRIT_2A,
    CRIT_2B,
    CRIT_2C,
    CRIT_2D,
    CRIT_3A,
    CRIT_HIGHER,
    CRIT_SIMILAR,
    OLD_CRITERIA,
    QUICK_SEEDS,
    SEND_JITTER_KNOB,
    closing,
    convergence_time,
    rtt_variance_point,
    smoothed,
    times_2,
)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root = tmp_path_factory.mktemp("reproduce-polycc")
    doc = root / "REPRODUCTION.md"
    return reproduce("polycc", quick=True, out=root / "out", doc=doc, plots=False)


def test_rtt_variance_poly_keeps_its_goodput_where_bbr_collapses(quick: ReportResult) -> None:
    # §3.1: similar at ±20 ms (within x1.2 of 1); 1.82x-10.35x the BBR variants at ±70 ms widened
    # by x1.5 (1c: PolyCC / BBR v1), per seed.
    assert not quick.failing("1a", "1b", "1c")
    c = quick.get("1c")
    assert len(c.seeds) == QUICK_SEEDS
    assert all(1.82 / 1.5 <= v <= 10.35 * 1.5 for v in c.seeds), c.seeds
    # The seed reaches BBR's random PROBE_BW phase: the two runs differ.
    assert not deterministic(c.seeds), c.seeds


@pytest.mark.xfail(
    strict=True,
    reason="our BBR v3's extra_acked allowance covers the 140 ms ACK gaps at ±70 ms (REPRODUCTION.md 1d)",
)
def test_rtt_variance_poly_beats_bbr3_at_70ms(quick: ReportResult) -> None:
    assert not quick.failing("1d")


@pytest.mark.xfail(
    strict=True,
    reason="BBR v1 and PolyCC never stay within ±10 % of the nominal new BDP by the fixed definition: "
    "Linux's quantization budget leaves a 9 ms standing queue at 10 Mbit/s, and the probes cross 1.1x "
    "(REPRODUCTION.md 2a, tests/bbr.rs)",
)
def test_bandwidth_halving_poly_converges_faster_than_bbr(quick: ReportResult) -> None:
    # §3.2: convergence time −54.1 % vs BBR v1.
    assert not quick.failing("2a")


def test_claims_without_a_value_say_so_and_fail(quick: ReportResult) -> None:
    # BBR v1 and PolyCC never settle by the fixed definition: 2a and 2b have no value in any seed
    # (the section showed "nan×" before issue 19), and 2c, BBR v1's own time, neither.
    for rid in ("2a", "2b", "2c"):
        r = quick.get(rid)
        assert not r.holds
        assert math.isnan(r.value) and len(r.seeds) == QUICK_SEEDS
        assert r.ours == f"– (none of {QUICK_SEEDS} seeds has a value)", r.ours
        assert "nan" not in r.ours


def test_copa_is_deterministic_and_said_to_be(quick: ReportResult) -> None:
    # Copa draws nothing random: every seed gives the same time, which "ours" says instead of an
    # interval. Its 4.4 s is far from the paper's "less than 1 second" (at most 1.5 s).
    d = quick.get("2d")
    assert deterministic(d.seeds) and "deterministic" in d.ours
    assert 3.0 < d.value < 6.0 and not d.holds


def test_section_3_is_deterministic_and_its_knob_rows_are_counted_apart(quick: ReportResult) -> None:
    for rid in ("3a", "3b", "3c"):
        assert deterministic(quick.get(rid).seeds) and "deterministic" in quick.get(rid).ours
    knobbed = [r for r in quick.reproductions if r.knob]
    assert [r.id for r in knobbed] == ["3a-jitter", "3b-jitter", "3c-jitter"]
    assert all(r.knob == PCC_SEND_JITTER_KNOB for r in knobbed)
    # The send-time noise makes the seeds differ against CUBIC.
    assert not deterministic(quick.get("3b-jitter").seeds)
    assert quick.doc is not None
    text = quick.doc.read_text(encoding="utf-8")
    counted = [r for r in quick.reproductions if not r.knob]
    held = sum(r.holds for r in counted)
    assert f"{held} of {len(counted)} claims hold in the simulator at the paper's numbers" in text
    assert len(counted) == 11  # quick: no ±100 ms (1e, 1f)


def test_weighted_mean_trades_delay_for_share(quick: ReportResult) -> None:
    assert not quick.failing("3a", "3b", "3c")


def test_section_is_generated_between_markers(quick: ReportResult) -> None:
    assert quick.doc is not None
    text = quick.doc.read_text(encoding="utf-8")
    begin, end = markers("polycc")
    section = text[text.index(begin) : text.index(end)]
    assert "| 1c |" in section and "| 2a |" in section and "QUICK" in section


def test_criteria_are_the_papers_numbers() -> None:
    # 1c-1f: the printed 1.82-10.35x widened by x1.5 at each end; the old ">= 1.5x" let 24.5x
    # (1e, BBR v1 at ±100 ms before issue 19) pass, which now fails; 15.2x (1c) is just inside,
    # and 1.1x (1d) fails either way.
    assert (CRIT_HIGHER.lo, CRIT_HIGHER.hi) == pytest.approx((1.82 / 1.5, 10.35 * 1.5))
    assert CRIT_HIGHER.holds(1.22) and CRIT_HIGHER.holds(15.2) and not CRIT_HIGHER.holds(15.6)
    assert not CRIT_HIGHER.holds(24.5) and not CRIT_HIGHER.holds(1.1) and not CRIT_HIGHER.holds(math.nan)
    assert CRIT_HIGHER.text(times_2) == "1.82× .. 10.35× widened ×1.5: 1.21× .. 15.52×"
    # "Similar" stays below where "higher" starts: no ratio is both.
    assert CRIT_SIMILAR.hi < CRIT_HIGHER.lo
    assert CRIT_SIMILAR.holds(1.19) and CRIT_SIMILAR.holds(0.84) and not CRIT_SIMILAR.holds(1.22)
    assert CRIT_SIMILAR.text(times_2).endswith("no number in the paper")
    # 2a: −54.1 % is 0.459 within x1.5 (the old "<= 0.6" accepted 0.1); 2b: −32.8 %, 0.672.
    assert (CRIT_2A.lo, CRIT_2A.hi) == pytest.approx((0.459 / 1.5, 0.459 * 1.5))
    assert not CRIT_2A.holds(0.1) and CRIT_2A.holds(0.5) and not CRIT_2A.holds(0.7)
    assert CRIT_2B.holds(1.0) and not CRIT_2B.holds(1.01) and not CRIT_2B.holds(0.44)
    # 2c: BBR's 2-4 s widened; 2d: Copa's "less than 1 second" at most 1.5 s.
    assert CRIT_2C.holds(1.34) and CRIT_2C.holds(6.0) and not CRIT_2C.holds(6.2)
    assert isinstance(CRIT_2D, AtMost) and CRIT_2D.holds(1.5) and not CRIT_2D.holds(1.51)
    # Ours: no paper number, and said so.
    assert CRIT_3A.text(times_2) == "<= 1.25×; no number in the paper"
    assert SEND_JITTER_KNOB == PCC_SEND_JITTER_KNOB


def test_judge_says_when_every_seed_is_alike() -> None:
    same = judge("x", "f", "c", "p", [0.25] * 5, CRIT_2D, pct)
    assert same.ours == "25.0 % (deterministic: all 5 seeds alike)" and same.holds
    varied = judge("x", "f", "c", "p", [0.2, 0.25, 0.3, 0.25, 0.22], CRIT_2D, pct)
    assert varied.ours.startswith("25.0 % [") and "deterministic" not in varied.ours
    # A single run and runs without any value are not "deterministic".
    assert not deterministic([0.3]) and not deterministic([math.nan, math.nan])


def test_closing_lists_changed_and_new_verdicts(quick: ReportResult) -> None:
    lines = closing(quick.sections)
    assert lines[0].startswith("**Verdicts changed by issue 19** (before: 8 of 11 held")
    text = "\n".join(lines)
    assert "**2c** is new with issue 19 and does not hold" in text
    assert "**2d** is new with issue 19" in text
    # Claims whose verdict did not change are not listed.
    for rid, (_, held) in OLD_CRITERIA.items():
        r = next((r for r in quick.reproductions if r.id == rid), None)
        if r is not None and r.holds == held:
            assert f"**{rid}**" not in text


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
    # An ideal step from the old BDP (2x the new) to the new one reads as settled once the trailing
    # mean holds at most 10 % old samples: 0.9 x 0.8 s = 0.72 s, less one 10-ms bin (the window
    # holds 80 samples, t - 0.79 .. t). The lag REPRODUCTION.md 2c/2d quotes.
    step = np.where(t < 5.0, 2 * bdp, bdp)
    assert convergence_time(t, step, change_s=5.0, target=bdp) == pytest.approx(0.71, abs=0.005)
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


def test_smoothed_is_the_trailing_mean() -> None:
    t = np.arange(0.0, 2.0, 0.01)
    x = np.where(t < 1.0, 0.0, 100.0)
    s = smoothed(t, x, smooth_s=0.5)
    # Half a second after the step the 0.5 s window holds only the new level; halfway, half of it.
    assert s[t < 1.0].max() == 0.0
    assert s[np.searchsorted(t, 1.24)] == pytest.approx(50.0)
    assert s[-1] == pytest.approx(100.0)
    # A missing sample counts as 0.
    assert smoothed([0.0, 0.01], [np.nan, 10.0], smooth_s=0.5)[1] == pytest.approx(5.0)
