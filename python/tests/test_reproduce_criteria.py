"""The criteria at the papers' numbers and the judgement of a claim over seeds (issue 19):
each criterion kind just inside and just outside its bounds, its text, the bootstrap interval of
the median, and the bimodal-mode rule."""

from __future__ import annotations

import math

import pytest

from polycc.reproduce.common import (
    AtLeast,
    AtMost,
    Band,
    RangeWithinFactor,
    Reproduction,
    SameSide,
    SeedSummary,
    WithinFactor,
    WithinPoints,
    median_interval,
    pct,
    ratio,
    split_modes,
)


def test_within_points_is_the_papers_share_plus_minus_points() -> None:
    c = WithinPoints(0.73, 10)  # Table 1: WebRTC alone 73 % -> 63 .. 83 %
    assert (c.lo, c.hi) == pytest.approx((0.63, 0.83))
    assert c.holds(0.6301) and c.holds(0.8299)
    assert not c.holds(0.6299) and not c.holds(0.8301) and not c.holds(math.nan)
    assert c.text(pct) == "73.0 % ± 10 points: 63.0 % .. 83.0 %"
    # A share cannot be negative: 8 % ± 10 points starts at 0.
    low = WithinPoints(0.08, 10)
    assert low.lo == 0.0 and low.hi == pytest.approx(0.18)
    assert low.holds(0.0) and low.holds(0.1799) and not low.holds(0.1801)


def test_within_factor_is_either_way() -> None:
    c = WithinFactor(6.25, 1.5)
    assert (c.lo, c.hi) == pytest.approx((6.25 / 1.5, 6.25 * 1.5))
    assert c.holds(4.17) and c.holds(9.37)
    assert not c.holds(4.16) and not c.holds(9.38)
    assert c.text(ratio) == "6.2× within ×1.5: 4.2× .. 9.4×"
    with pytest.raises(ValueError, match="factor"):
        WithinFactor(2.0, 0.5)


def test_band_same_side_at_least_at_most() -> None:
    band = Band(0.5, 0.4, 0.6)
    assert band.holds(0.4) and band.holds(0.6) and not band.holds(0.3999) and not band.holds(0.6001)
    assert band.text(pct) == "≈ 50.0 %: 40.0 % .. 60.0 %"
    better = SameSide(0.0, above=True)
    assert better.holds(1e-9) and not better.holds(0.0) and not better.holds(-0.01)
    lower = SameSide(1.0, above=False)
    assert lower.holds(0.999) and not lower.holds(1.0)
    assert lower.text(ratio) == "< 1.0×"
    floor = AtLeast(1.425, paper=1.5)
    assert floor.holds(1.425) and not floor.holds(1.4249)
    assert floor.text(lambda v: f"{v:.3f}") == "paper 1.500: >= 1.425"
    cap = AtMost(0.05, paper_number=False)
    assert cap.holds(0.05) and not cap.holds(0.0501) and not cap.holds(math.nan)
    assert cap.text(pct) == "<= 5.0 %; no number in the paper"


def test_two_clusters_are_two_modes_with_their_frequencies() -> None:
    # Four runs near 93 %, one at 41 %: the gap (0.51) is far above either side's range (0.02).
    values = [0.93, 0.94, 0.92, 0.41, 0.93]
    assert split_modes(values) == [[0.41], [0.92, 0.93, 0.93, 0.94]]
    s = SeedSummary.of(values)
    assert s.bimodal and s.n == 5
    assert s.text(pct) == "93.0 % (4/5), 41.0 % (1/5)"
    # The mode covering 4 of 5 runs (80 %) meets >= 90 %: the claim holds ...
    assert s.holds(AtLeast(0.9))
    # ... but not when only the 1-in-5 mode meets it.
    assert not s.holds(AtMost(0.5))
    # Three of five in the passing mode is below 80 %.
    assert not SeedSummary.of([0.93, 0.94, 0.92, 0.41, 0.42]).holds(AtLeast(0.9))


def test_a_unimodal_sample_is_not_split() -> None:
    # Spread evenly: the largest gap (0.004) is not more than twice either side's range.
    values = [0.950, 0.946, 0.952, 0.948, 0.954]
    assert split_modes(values) == [sorted(values)]
    s = SeedSummary.of(values)
    assert not s.bimodal
    assert s.median == pytest.approx(0.950)
    assert s.lo <= s.median <= s.hi and s.lo >= 0.946 and s.hi <= 0.954
    assert s.text(pct) == f"95.0 % [{pct(s.lo)}, {pct(s.hi)}]"
    # Three runs are too few to split, however far apart.
    assert len(split_modes([0.1, 0.11, 0.9])) == 1
    # Equal values with one a hair off stay one mode (the gap is below 10 % of the values).
    assert len(split_modes([1.0, 1.0, 1.0, 1.0, 1.001])) == 1


def test_median_interval_is_deterministic_and_covers_the_median() -> None:
    values = [0.17, 0.17, 0.27, 0.17, 0.27, 0.17, 0.17, 0.17, 0.27, 0.17]
    assert median_interval(values) == median_interval(values)
    lo, hi = median_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert 1.0 <= lo <= 3.0 <= hi <= 5.0 and lo < hi
    assert median_interval([2.5]) == (2.5, 2.5)
    assert all(math.isnan(x) for x in median_interval([]))


def test_a_claim_over_seeds_records_its_values_and_a_missing_run_fails() -> None:
    r = Reproduction.judge(
        "5a", "Table 1", "c", "73 %", [0.92, 0.93, 0.925, 0.93, 0.91], WithinPoints(0.73, 10), pct
    )
    assert not r.holds and r.value == pytest.approx(0.925) and len(r.seeds) == 5
    assert r.criterion == "73.0 % ± 10 points: 63.0 % .. 83.0 %"
    # A seed without a value (e.g. no detection at all) is a failing mode of its own.
    s = SeedSummary.of([0.2, 0.2, 0.2, 0.2, math.nan])
    assert s.bimodal and s.text(lambda v: f"{v:.1f} s") == "0.2 s (4/5), none (1/5)"
    assert s.holds(AtMost(1.0))  # 4 of 5 = 80 % in a passing mode
    assert not SeedSummary.of([0.2, 0.2, 0.2, math.nan, math.nan]).holds(AtMost(1.0))
    none = SeedSummary.of([math.nan] * 5)
    assert not none.holds(AtMost(1.0)) and none.text(pct) == "– (none of 5 seeds has a value)"


def test_infinite_values_have_an_interval_and_are_a_mode_of_their_own() -> None:
    # A ratio over a level another CCA never reached is ∞ (Allegro 2b/2c): the interval must not
    # turn into NaN (inf − inf), and ∞ runs beside finite ones are a mode, judged as one.
    lo, hi = median_interval([float("inf")] * 5)
    assert (lo, hi) == (math.inf, math.inf)
    lo, hi = median_interval([40.0, 40.0, 80.0, math.inf, math.inf])
    assert lo == 40.0 and hi == math.inf
    assert split_modes([40.0, 40.0, 80.0, math.inf, math.inf]) == [[40.0, 40.0, 80.0], [math.inf, math.inf]]
    s = SeedSummary.of([12.0, 13.0, 14.0, 13.0, math.inf])
    assert s.bimodal and s.text(ratio) == "∞ (1/5), 13.0× (4/5)"  # higher mode first
    assert s.holds(WithinFactor(13.0, 1.5))  # 4 of 5 in the passing mode
    assert not SeedSummary.of([12.0, 13.0, 14.0, math.inf, math.inf]).holds(WithinFactor(13.0, 1.5))
    # Finite values keep the linear percentiles of the resamples' medians (the PIBES section's).
    lo, hi = median_interval([0.1, 0.5, 0.2, 0.9, 0.4, 0.3])
    assert 0.1 <= lo < 0.35 < hi <= 0.9


def test_a_printed_range_is_widened_at_each_end() -> None:
    crit = RangeWithinFactor(1.82, 10.35, 1.5)
    assert (crit.lo, crit.hi) == pytest.approx((1.82 / 1.5, 10.35 * 1.5))
    assert crit.holds(1.214) and crit.holds(15.5) and crit.holds(5.0)
    assert not crit.holds(1.2) and not crit.holds(15.6) and not crit.holds(math.nan)
    assert crit.text(lambda v: f"{v:.2f}×") == "1.82× .. 10.35× widened ×1.5: 1.21× .. 15.52×"
    assert RangeWithinFactor(2, 4, 1.5, paper_number=False).text(str).endswith("no number in the paper")
    with pytest.raises(ValueError):
        RangeWithinFactor(4, 2, 1.5)
    with pytest.raises(ValueError):
        RangeWithinFactor(2, 4, 0.9)
