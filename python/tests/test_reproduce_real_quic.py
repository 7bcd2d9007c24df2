"""The real-QUIC section's aggregation over seeds (the runs themselves need the testbed: they
are the section's command, not a test)."""

from __future__ import annotations

import math

from polycc.reproduce.real_quic import Claim, Outcome, _ratio, render


def _claim(sim: float, real: float, goodput: float) -> Claim:
    return Claim(
        "PolyCC 1c",
        "PolyCC / BBR v1",
        "1.82×",
        "≥ 1.5×",
        lambda v: v >= 1.5,
        _ratio,
        sim,
        real,
        {"PolyCC goodput (Mbit/s)": (goodput, goodput + 1.0)},
    )


def test_the_median_over_seeds_decides_and_the_range_and_run_count_are_shown() -> None:
    o = Outcome.of([_claim(2.0, 1.0, 3.0), _claim(3.0, 2.0, 4.0), _claim(1.0, 1.6, 5.0)])
    assert o.median(o.sims) == 2.0 and o.holds(o.sims)
    assert o.median(o.reals) == 1.6 and o.holds(o.reals)
    assert o.held(o.reals) == "2/3"
    text = render([o], (1, 2, 3))
    assert "| 2.00× (1.00×–3.00×) | 1.60× (1.00×–2.00×) | yes / yes (2/3 / 2/3) |" in text
    assert "| PolyCC 1c | PolyCC goodput (Mbit/s) | 4.0 (3.0–5.0) | 5.0 (4.0–6.0) |" in text
    assert "1 of 1 claims hold over real QUIC" in text


def test_a_run_without_a_value_leaves_no_median_and_is_counted() -> None:
    o = Outcome.of([_claim(2.0, math.nan, 3.0), _claim(2.0, 0.5, 3.0)])
    assert math.isnan(o.median(o.reals)) and not o.holds(o.reals)
    assert o.cell(o.reals, _ratio) == "– (0.50×, 1 without)"
