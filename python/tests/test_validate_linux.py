"""`polycc validate linux` without the emulator: how the simulator's side is measured."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from polycc import validate_linux as vl
from polycc.api import run_scenario
from polycc.scenario import Scenario


def _bins(flow: str, rtts: list[float], goodput_mbps: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "t_s": [i * vl.SIM_SRTT_BIN_S for i in range(len(rtts))],
            "flow": flow,
            "rtt_ms": rtts,
            "goodput_mbps": goodput_mbps,
        }
    )


def test_the_srtt_like_series_follows_each_ack_by_an_eighth_and_is_read_every_10_ms() -> None:
    # 1-ms bins of one ACK each: 10 at 100 ms, then 20 at 200 ms. Readings at the end of every
    # 10 ms: 100, then 200 − 100·(7/8)^10, then 200 − 100·(7/8)^20.
    readings = vl.srtt_like(_bins("a", [100.0] * 10 + [200.0] * 20))
    got = readings["srtt_ms"].tolist()
    assert got == pytest.approx([100.0, 200.0 - 100.0 * 0.875**10, 200.0 - 100.0 * 0.875**20])
    # A bin of 12 Mbit/s delivers 1 full packet per ms, half an ACK: still counted as one. At
    # 48 Mbit/s, 4 packets, 2 ACKs: the bin's sample weighs 1 − (7/8)^2.
    fast = vl.srtt_like(_bins("b", [100.0] * 9 + [200.0], goodput_mbps=48.0))
    assert fast["srtt_ms"].tolist() == pytest.approx([100.0 + 100.0 * (1 - 0.875**2)])
    # Bins without a sample leave srtt alone, and readings before the first sample are left out.
    gaps = vl.srtt_like(_bins("c", [math.nan] * 10 + [50.0] + [math.nan] * 9))
    assert gaps["srtt_ms"].tolist() == [50.0]


def test_the_rtt_mean_and_p95_are_over_each_flows_readings_then_averaged() -> None:
    readings = pd.DataFrame(
        {
            "flow": ["a"] * 100 + ["b"] * 3,
            "srtt_ms": [float(v) for v in range(1, 101)] + [40.0, 40.0, 40.0],
        }
    )
    assert vl.srtt_mean_ms(readings) == pytest.approx((50.5 + 40.0) / 2)
    assert vl.srtt_p95_ms(readings) == pytest.approx((95.05 + 40.0) / 2)
    assert math.isnan(vl.srtt_p95_ms(readings.iloc[:0]))


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
    # Time-weighted over the 10-ms readings: between the path's RTT and the full buffer's.
    # (It no longer sits below the per-ACK mean: the Linux receiver's compressed SACKs, while
    # the full queue overflows, thinned the ACKs of that phase.)
    assert 40.0 < rtt < 40.0 + 160.0, rtt
    # A standing queue grows: the 95th percentile over time lies above the mean over time.
    assert rtt < rtt_p95 < max(f["rtt_ms"]["p99"] for f in summary["flows"]) * 1.05, (rtt, rtt_p95)


def test_the_kernel_side_reads_back_from_a_written_table_and_the_simulator_is_judged_again() -> None:
    rows = [
        vl.Row("cubic", 1, "20Mbps", "40ms", "1bdp", 0.0),
        vl.Row("reno", 2, "10Mbps", "20ms", "4bdp", 0.005),
    ]
    kernel = [
        vl.Measured(18.77, 52.3, 11.2, seeds=1, rtt_p95_ms=61.0),
        vl.Measured(4.12, 31.4, 7.5, seeds=3, rtt_p95_ms=40.2),
    ]
    stale_sim = vl.Measured(1.0, 1.0, 1.0, seeds=1, rtt_p95_ms=1.0)
    written = vl.markdown(
        [vl.Compared(r, k, stale_sim) for r, k in zip(rows, kernel, strict=True)],
        duration="2s",
        lossy_seeds=3,
        kernel_release="6.1.0-test",
    )
    doc = f"# Validation\n\n{vl.BEGIN}\n{written}{vl.END}\n"
    table = vl.kernel_from_table(doc, lossy_seeds=3)
    assert table.release == "6.1.0-test"
    assert table.rows == {r.label(): k for r, k in zip(rows, kernel, strict=True)}
    # The simulator side is run again; the kernel's numbers are the table's, as printed.
    again = vl.compare(rows[:1], duration="2s", kernel_table=table)
    assert again[0].kernel == kernel[0]
    assert again[0].sim.goodput_mbps > 10.0
    rewritten = vl.markdown(again, duration="2s", lossy_seeds=3, kernel_release=table.release)
    assert "Kernel 6.1.0-test." in rewritten


def test_a_table_without_rows_or_markers_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="markers"):
        vl.kernel_from_table("no table here", lossy_seeds=3)
    with pytest.raises(ValueError, match="no table rows"):
        vl.kernel_from_table(f"{vl.BEGIN}\nKernel 6.1. RTT over time\n{vl.END}", lossy_seeds=3)
    table = vl.kernel_from_table(
        f"{vl.BEGIN}\nKernel 6.1. RTT over time\n"
        "| cubic 1× 20Mbps 40ms 1bdp 0 % | 1.00 / 1.00 | 1.000 | 1.0 / 1.0 | 1.000 "
        "| 1.0 / 1.0 | 1.000 | 1.0 / 1.0 | yes |\n"
        f"{vl.END}",
        lossy_seeds=3,
    )
    with pytest.raises(ValueError, match="no row 'bbr"):
        vl.compare([vl.Row("bbr", 1, "20Mbps", "40ms", "1bdp", 0.0)], duration="1s", kernel_table=table)


def test_the_cli_reads_the_kernel_side_from_the_document_and_names_a_row_it_lacks() -> None:
    from conftest import polycc

    # `--quick`'s rows run at 20 Mbit/s, which the full grid in VALIDATION.md does not have.
    res = polycc("validate", "linux", "--quick", "--kernel-from-doc", "--no-doc")
    assert res.returncode == 2, res
    assert "no row 'cubic 1× 20Mbps 40ms 1bdp 0 %'" in res.stderr
