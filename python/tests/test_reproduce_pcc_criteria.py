"""The PCC section's criteria at the papers' numbers (issue 19), checked without runs: each
claim's criterion against the value the section had before and values just inside and outside,
the knob rows kept out of the summary, and the closing list of changed verdicts."""

from __future__ import annotations

import math

import pytest

from polycc.reproduce.common import Reproduction, Section, Table, pct, ratio, render_markdown
from polycc.reproduce.pcc import CHANGE_WHY, OLD_CRITERIA, closing
from polycc.reproduce.pcc.allegro_changing_network import CRIT_4A, CRIT_4B, CRIT_4C
from polycc.reproduce.pcc.allegro_convergence import CRIT_6A, CRIT_6B, CRIT_6C
from polycc.reproduce.pcc.allegro_random_loss import (
    CRIT_1A,
    CRIT_1B,
    CRIT_1C,
    CRIT_1D,
    CRIT_1E,
    CRIT_1F,
    CRIT_1G,
    CRIT_1H,
    CRIT_1I,
)
from polycc.reproduce.pcc.allegro_rtt_fairness import CRIT_5A, CRIT_5B, fairer_share, farthest_from_one
from polycc.reproduce.pcc.allegro_satellite import CRIT_3A, CRIT_3B, CRIT_3C
from polycc.reproduce.pcc.allegro_shallow_buffer import (
    CRIT_2A,
    CRIT_2B,
    CRIT_2C,
    CRIT_2D,
    CRIT_2E,
    CRIT_2F,
    CRIT_2G,
    buffer_ratio,
)
from polycc.reproduce.pcc.proteus_bbr_s import CRIT_8A, CRIT_8C
from polycc.reproduce.pcc.proteus_scavenger import CRIT_7A, CRIT_7B, CRIT_7C, CRIT_7D


def test_ratios_are_the_papers_within_one_and_a_half() -> None:
    # 1c: the section accepted 5.8x against the paper's 10x (at >= 3x); now 6.7x .. 15x.
    assert not CRIT_1C.holds(5.8) and CRIT_1C.holds(8.0) and not CRIT_1C.holds(15.1)
    # 1d: 37x, accepted at >= 10x before; 24.3x (the old result) is now just outside.
    assert not CRIT_1D.holds(24.3) and CRIT_1D.holds(24.7) and CRIT_1D.holds(55.5)
    assert not CRIT_1D.holds(56.0)
    # 1e: > 10x at 0.7 %, the paper's Illinois ratios run to 16x: a band, not a floor.
    assert (CRIT_1E.lo, CRIT_1E.hi) == pytest.approx((10 / 1.5, 24.0))
    assert CRIT_1E.holds(7.6) and not CRIT_1E.holds(2.5) and not CRIT_1E.holds(30.0)
    assert CRIT_1F.holds(16.0) and not CRIT_1F.holds(24.4)  # 16x within x1.5: <= 24
    # 2b 13x, 2c 25x (buffer ratios), 3b 17x, 3c 54x, 4b 14x, 4c 5.6x, 6b 4.2x.
    for crit, paper in (
        (CRIT_2B, 13),
        (CRIT_2C, 25),
        (CRIT_3B, 17),
        (CRIT_3C, 54),
        (CRIT_4B, 14),
        (CRIT_4C, 5.6),
        (CRIT_6B, 4.2),
        (CRIT_2G, 35),
        (CRIT_1I, 151),
    ):
        assert crit.holds(paper) and crit.holds(paper / 1.5) and crit.holds(paper * 1.5)
        assert not crit.holds(paper / 1.51) and not crit.holds(paper * 1.51)
        assert not crit.holds(math.nan) and not crit.holds(math.inf)
    assert CRIT_2B.text(ratio) == "13.0× within ×1.5: 8.7× .. 19.5×"
    # 6c: "the same convergence time": 1x within x1.5, no longer "<= 2x" (0.5x fails too).
    assert CRIT_6C.holds(0.7) and not CRIT_6C.holds(0.5) and not CRIT_6C.holds(1.6)


def test_shares_are_the_papers_within_points_or_a_few_points_below_a_bound() -> None:
    # Bounds ("> 95 %", "within 97 %", "90 %"): at most 4 points below (payload-only goodput).
    assert CRIT_1A.holds(0.91) and not CRIT_1A.holds(0.909)
    # 1h: the paper's ">= 97 %", accepted at >= 90 % before; now >= 93 %.
    assert CRIT_1H.holds(0.93) and not CRIT_1H.holds(0.92) and not CRIT_1H.holds(0.9)
    assert CRIT_1H.text(pct) == "paper 97.0 %: >= 93.0 %"
    assert CRIT_2A.holds(0.86) and not CRIT_2A.holds(0.85)
    assert CRIT_3A.holds(0.86) and not CRIT_3A.holds(0.85)
    # Measured values: +- 10 points, two-sided (a result far above fails too).
    assert CRIT_1B.holds(0.787) and not CRIT_1B.holds(0.95) and not CRIT_1B.holds(0.63)
    assert CRIT_1G.holds(0.065) and not CRIT_1G.holds(0.14)
    assert not CRIT_2D.holds(0.953) and CRIT_2D.holds(0.3)
    assert CRIT_4A.holds(0.898) and not CRIT_4A.holds(0.94)
    # Fig. 9's baselines at 6 packets: CUBIC 2 %, paced TCP 30 % (our CUBIC kept 85.4 % on the
    # default stack, 48.5 % on the Linux model).
    assert not CRIT_2E.holds(0.854) and CRIT_2E.holds(0.0) and CRIT_2E.holds(0.12)
    assert CRIT_2F.holds(0.3) and not CRIT_2F.holds(0.721)
    assert CRIT_7A.holds(0.718) and not CRIT_7A.holds(1.0) and CRIT_7A.holds(2 / 3)
    assert CRIT_7D.holds(0.513) and not CRIT_7D.holds(1.0) and not CRIT_7D.holds(2 / 3)


def test_qualitative_claims_are_never_weaker_than_the_sentence() -> None:
    # 5a and 6a: "better at all RTTs / time scales", strictly, no slack.
    assert CRIT_5A.holds(1.0) and not CRIT_5A.holds(0.8)
    assert CRIT_6A.holds(1.0) and not CRIT_6A.holds(0.75)
    assert fairer_share([1.0, 0.9], [[0.5, 0.9]]) == 0.5  # a tie is not fairer
    assert fairer_share([1.1, 0.95], [[0.7, 0.5], [0.6, 0.1]]) == 1.0
    # 5b: PCC's ratio farthest from 1, within x1.5 of 1 (0.65 at 100 ms failed that).
    assert farthest_from_one([1.1, 0.65, 1.02]) == 0.65
    assert not CRIT_5B.holds(0.65) and CRIT_5B.holds(1.4)
    # 7b: all five primaries, strictly (4 of 5 passed the old >= 80 %).
    assert CRIT_7B.holds(1.0) and not CRIT_7B.holds(0.8)
    # "Fair" with no index printed: Jain >= 0.95 (0.939 passed the old 0.9).
    assert not CRIT_7C.holds(0.939) and CRIT_7C.holds(0.996) and CRIT_8C.holds(0.95)
    assert CRIT_8A.holds(0.25) and not CRIT_8A.holds(0.46)
    assert CRIT_8A.text(pct).endswith("no number in the paper")


def test_a_level_never_reached_is_an_infinite_buffer_ratio() -> None:
    assert buffer_ratio(80.0, 2.0) == 40.0
    assert buffer_ratio(math.nan, 1.0) == math.inf
    assert math.isnan(buffer_ratio(6.0, math.nan))


def _rep(rid: str, value: float, holds: bool, knob: str = "") -> Reproduction:
    return Reproduction(rid, "f", "c", "p", ratio(value), holds, "crit", value=value, knob=knob)


def test_knob_rows_are_apart_and_changed_verdicts_are_listed() -> None:
    reps = [
        _rep("1c", 5.8, False),
        _rep("1e", 2.5, False),
        _rep("1e-jitter", 7.6, True, knob="send jitter"),
        _rep("1h", 0.95, True),
        _rep("4b", 10.0, True),
        _rep("7d", 1.0, False),
    ]
    section = Section("1", "t", "f", "setup", [], "r", Table(["a"]), reps)
    body = render_markdown(
        "pcc", "T", [section], command="c", quick=False, runs=1, closing=closing([section])
    )
    assert "2 of 5 claims hold in the simulator at the paper's numbers; 1 of 1 second rows" in body
    assert "*with send jitter (ours, not the paper's setup):*" in body
    items = closing([section])
    # 1c and 1e held before and fail now, 1h failed before and holds now; 4b unchanged.
    assert [i.split("**")[1] for i in items if i.startswith("- ")] == ["1c", "1e", "1h", "7d"]
    assert "is new with issue 19 and does not hold" in items[-1]
    assert "held before issue 19 (>= 3.0×) and does not hold now" in items[2]
    assert items[4].endswith(CHANGE_WHY["1h"])  # 1h: the reason kept by hand
    assert sum(held for _, held in OLD_CRITERIA.values()) == 25 and len(OLD_CRITERIA) == 29
