"""`polycc validate linux` without the emulator: how the simulator's side is measured."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from polycc import validate_linux as vl
from polycc.api import run_scenario
from polycc.scenario import Scenario


def test_the_mean_rtt_weighs_time_not_acks() -> None:
    # Flow a: 9 bins at 100 ms with one sample each, 1 bin at 400 ms with 30 samples. Per ACK the
    # mean would be (9·100 + 30·400)/39 = 331 ms; over time it is (9·100 + 400)/10 = 130 ms, as
    # the kernel's srtt read every 10 ms gives. Flow b has one bin without a sample (no ACK):
    # it is left out, not counted as zero.
    flows = pd.DataFrame(
        {
            "t_s": [i * 0.01 for i in range(10)] + [0.0, 0.01, 0.02],
            "flow": ["a"] * 10 + ["b"] * 3,
            "rtt_ms": [100.0] * 9 + [400.0] + [50.0, math.nan, 70.0],
        }
    )
    assert vl.time_weighted_rtt_ms(flows) == pytest.approx((130.0 + 60.0) / 2)
    assert math.isnan(vl.time_weighted_rtt_ms(flows.iloc[:0]))


def test_the_p95_rtt_is_over_each_flows_bins_then_averaged() -> None:
    # Flow a: bins 1..100 ms, p95 over time 95.05 ms (linear interpolation); flow b: constant
    # 40 ms with bins without samples left out.
    flows = pd.DataFrame(
        {
            "flow": ["a"] * 100 + ["b"] * 4,
            "rtt_ms": [float(v) for v in range(1, 101)] + [40.0, math.nan, 40.0, 40.0],
        }
    )
    assert vl.time_weighted_rtt_p95_ms(flows) == pytest.approx((95.05 + 40.0) / 2)


def test_a_row_agrees_only_when_its_p95_rtt_does_too() -> None:
    row = vl.Row("cubic", 1, "20Mbps", "40ms", "1bdp", 0.0)
    kernel = vl.Measured(10.0, 50.0, 5.0, seeds=1, rtt_p95_ms=60.0)
    assert vl.Compared(row, kernel, vl.Measured(10.5, 54.0, 6.0, seeds=1, rtt_p95_ms=66.0)).agrees
    far = vl.Compared(row, kernel, vl.Measured(10.5, 54.0, 6.0, seeds=1, rtt_p95_ms=72.0))
    assert far.rtt_p95_ratio == pytest.approx(1.2) and not far.agrees


def test_the_simulator_side_is_binned_as_the_kernel_samples_and_the_bin_changes_no_result() -> None:
    row = vl.Row("reno", 2, "20Mbps", "40ms", "4bdp", 0.0)
    scenario = row.scenario("3s")
    assert "bin" not in scenario, "the kernel cache's key must stay as it was"
    coarse = run_scenario(Scenario.from_dict(scenario), seed=1)
    goodput, rtt, qdelay, rtt_p95 = vl._sim_numbers(scenario, 1)
    summary = coarse.summary
    assert goodput == pytest.approx(sum(f["goodput_mbps"] for f in summary["flows"]) / 2)
    assert qdelay == summary["links"][0]["queue_delay_ms"]["p95"]
    # With a 4-BDP buffer filling up, the per-ACK mean leans to the full-queue end: the
    # time-weighted one is lower.
    per_ack = sum(f["rtt_ms"]["mean"] for f in summary["flows"]) / 2
    assert 40.0 < rtt < per_ack, (rtt, per_ack)
    # A standing queue grows: the 95th percentile over time lies above the mean over time.
    assert rtt < rtt_p95 < max(f["rtt_ms"]["p99"] for f in summary["flows"]) * 1.05, (rtt, rtt_p95)
