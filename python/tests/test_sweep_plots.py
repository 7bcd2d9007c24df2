"""Sweep plots and the sweep index: grid values in the order of their quantities, the mean and
confidence interval over seeds, the files written; and the results directory's flows table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from polycc import report, sweep_plots


def test_grid_values_sort_by_quantity_not_as_text() -> None:
    assert sweep_plots.sorted_values(["2000pkt", "500pkt", "50pkt"]) == ["50pkt", "500pkt", "2000pkt"]
    assert sweep_plots.sorted_values(["10Mbps", "2Mbps", "500Kbps", "1Gbps"]) == [
        "500Kbps",
        "2Mbps",
        "10Mbps",
        "1Gbps",
    ]
    assert sweep_plots.sorted_values(["1.5s", "40ms", "2min", "900us"]) == ["900us", "40ms", "1.5s", "2min"]
    assert sweep_plots.sorted_values(["375KB", "1MiB", "100pkt"]) == ["100pkt", "375KB", "1MiB"]  # 150 KB
    assert sweep_plots.sorted_values([0.05, 0, 0.001, 0.05]) == [0, 0.001, 0.05]
    assert sweep_plots.sorted_values(["vegas", "bbr", "cubic"]) == ["bbr", "cubic", "vegas"]
    assert sweep_plots.quantity("10Mbps") == ("rate", 1e7)
    assert sweep_plots.quantity(np.int64(3)) == ("number", 3.0)
    assert sweep_plots.quantity("cubic") is None


def test_mean_and_confidence_interval_over_seeds() -> None:
    mean, half, n = sweep_plots.mean_ci([1.0, 2.0, 3.0, math.nan])
    assert (mean, n) == (2.0, 3)
    assert half == pytest.approx(4.303 * 1.0 / math.sqrt(3))  # t(2, 0.975) · s / √n
    assert sweep_plots.mean_ci([5.0]) == (5.0, 0.0, 1)
    assert math.isnan(sweep_plots.mean_ci([])[0])


def _results() -> pd.DataFrame:
    rows = []
    run = 0
    for rate, mbps in (("10Mbps", 10.0), ("2Mbps", 2.0), ("50Mbps", 50.0)):
        for cca in ("cubic", "bbr"):
            for seed in (1, 2, 3):
                run += 1
                rows.append(
                    {
                        "run_id": f"run-{run:03d}",
                        "links.0.rate": rate,
                        "flows.0.cca": cca,
                        "seed": seed,
                        "status": "ok",
                        "error": None,
                        "total_goodput_mbps": 0.9 * mbps + 0.01 * seed,
                        "jain_index": 0.9,
                        "max_rtt_p95_ms": 50.0,
                        "mean_loss_rate": 0.01,
                        "mean_utilization": 0.95,
                        "total_drops": 3,
                    }
                )
    # The last run failed: no metrics.
    rows[-1] = {k: v for k, v in rows[-1].items() if k in ("run_id", "links.0.rate", "flows.0.cca", "seed")}
    rows[-1].update(status="error", error="boom")
    return pd.DataFrame(rows)


def test_sweep_plots_are_written_per_key_with_values_in_quantity_order(tmp_path: Path) -> None:
    results = _results()
    keys = ["links.0.rate", "flows.0.cca"]
    figs = sweep_plots.sweep_figures(results, keys)
    assert [(k, p.file, xs) for k, p, xs, _ in figs] == [
        (
            "links.0.rate",
            "sweep-links.0.rate.png",
            ["2Mbps", "10Mbps", "50Mbps"],
        ),
        ("flows.0.cca", "sweep-flows.0.cca.png", ["bbr", "cubic"]),
    ]
    assert figs[0][3] == [
        "total_goodput_mbps",
        "jain_index",
        "max_rtt_p95_ms",
        "mean_loss_rate",
        "mean_utilization",
    ]
    made = sweep_plots.write_sweep_plots(results, keys, tmp_path)
    assert [p.file for p in made] == ["sweep-links.0.rate.png", "sweep-flows.0.cca.png"]
    assert all((tmp_path / p.file).stat().st_size > 10_000 for p in made)
    # One swept value: nothing to plot against.
    assert sweep_plots.sweep_figures(results[results["links.0.rate"] == "2Mbps"], ["links.0.rate"]) == []


def test_the_sweep_index_shows_the_plots_and_orders_rows_by_quantity(tmp_path: Path) -> None:
    html = report.render_sweep_index(
        "s.toml",
        _results(),
        ["links.0.rate", "flows.0.cca"],
        link=lambda r: f"runs/{r}/report.html",
        plots_dir=tmp_path,
    )
    assert '<img src="sweep-links.0.rate.png"' in html and (tmp_path / "sweep-flows.0.cca.png").exists()
    order = [html.index(f'<td class="l">{r}</td>') for r in ("2Mbps", "10Mbps", "50Mbps")]
    assert order == sorted(order)
    no_plots = report.render_sweep_index("s.toml", _results(), ["links.0.rate"], link=str)
    assert "<img" not in no_plots


def test_long_grid_values_get_short_tick_labels() -> None:
    poly = '{"name":"poly","pilot":"bbr","copilots":["cubic"]}'
    other = '{"name":"poly","pilot":"cubic","copilots":["bbr"]}'
    assert sweep_plots.tick_labels(["cubic", poly]) == ["cubic", "poly…"]
    assert sweep_plots.tick_labels([poly, other, "bbr"]) == ["poly… #1", "poly… #2", "bbr"]
    assert sweep_plots.tick_labels(["a-very-long-scenario-value"]) == ["a-very-long-sc…"]


def test_one_line_per_value_of_the_other_key_in_quantity_order() -> None:
    ok = _results()
    ok = ok[ok["status"] == "ok"]
    lines = sweep_plots._lines(ok, "flows.0.cca", ["links.0.rate"])
    assert [label for label, _ in lines] == ["2Mbps", "10Mbps", "50Mbps"]
    assert [len(g) for _, g in lines] == [6, 6, 5]  # two CCAs × three seeds; one 50Mbps run failed
    many = pd.concat(
        [ok.assign(seed=ok["seed"] + 10 * i, **{"links.0.rate": f"{i}Mbps"}) for i in range(1, 9)]
    )
    (merged,) = sweep_plots._lines(many, "flows.0.cca", ["links.0.rate"])
    assert merged[0] == "mean over 8 combinations of links.0.rate"


def test_explicit_points_that_vary_together_get_no_plots() -> None:
    points = pd.DataFrame(
        {
            "flows.0.cca": ["cubic", "bbr", "cubic"],
            "links.0.rate": ["10Mbps", "10Mbps", "20Mbps"],  # (bbr, 20Mbps) is missing
            "seed": [1, 1, 1],
            "status": ["ok"] * 3,
            "total_goodput_mbps": [9.0, 9.5, 19.0],
        }
    )
    assert not sweep_plots.is_cartesian(points, ["flows.0.cca", "links.0.rate"])
    assert sweep_plots.sweep_figures(points, ["flows.0.cca", "links.0.rate"]) == []
    partial = points.assign(**{"links.0.rate": ["10Mbps", None, "20Mbps"]})  # a key only some points set
    assert not sweep_plots.is_cartesian(partial, ["flows.0.cca", "links.0.rate"])
    assert sweep_plots.is_cartesian(_results(), ["links.0.rate", "flows.0.cca"])


# --- numeric x axes -------------------------------------------------------------------------------


def test_quantities_get_a_numeric_axis_in_one_unit_and_names_stay_categories() -> None:
    axis = sweep_plots.x_axis(["2Mbps", "10Mbps", "50Mbps"])  # 1.4 decades: linear
    assert (axis.scale, axis.positions, axis.unit, axis.ticks) == (
        "linear",
        (2.0, 10.0, 50.0),
        "Mbit/s",
        ("2", "10", "50"),
    )
    assert axis.label("links.0.rate") == "links.0.rate (Mbit/s)"
    # Mixed units: the largest unit not above the median value; 3 decades: logarithmic.
    axis = sweep_plots.x_axis(["1Mbps", "10Mbps", "100Mbps", "1Gbps"])
    assert (axis.scale, axis.positions, axis.unit) == ("log", (1.0, 10.0, 100.0, 1000.0), "Mbit/s")
    axis = sweep_plots.x_axis(["500Kbps", "2Mbps", "10Mbps"])
    assert (axis.scale, axis.positions, axis.unit) == ("linear", (0.5, 2.0, 10.0), "Mbit/s")
    # Values written in one unit keep it.
    axis = sweep_plots.x_axis(["50pkt", "500pkts", "2000pkt"])
    assert (axis.scale, axis.positions, axis.unit) == ("log", (50.0, 500.0, 2000.0), "packets")
    assert sweep_plots.x_axis(["20ms", "0.2s"]).unit == "ms"
    assert sweep_plots.x_axis(["20ms", "0.2s"]).positions == (20.0, 200.0)
    assert sweep_plots.x_axis(["100pkt", "375KB"]).positions == (150.0, 375.0)  # KB, 1500-byte packets
    # Plain numbers have no unit; with 0 among values over decades, a symmetric-log axis.
    axis = sweep_plots.x_axis([0, 0.001, 0.01, 0.05])
    assert (axis.scale, axis.unit, axis.linthresh, axis.ticks) == (
        "symlog",
        "",
        0.001,
        ("0", "0.001", "0.01", "0.05"),
    )
    # Ticks at the values only where they would not overlap.
    assert sweep_plots.x_axis([1, 2, 3, 30]).ticks is None
    assert sweep_plots.x_axis(list(range(1, 20))).ticks is None  # more than MAX_VALUE_TICKS
    # Names, and quantities of different dimensions, are categories labelled as written.
    assert sweep_plots.x_axis(["bbr", "cubic"]) == sweep_plots.XAxis(
        "category", (0.0, 1.0), "", ("bbr", "cubic")
    )
    assert sweep_plots.x_axis(["0.5bdp", "100pkt"]).scale == "category"
    assert sweep_plots.x_axis(["10Mbps", "cubic"]).scale == "category"
    assert sweep_plots.x_axis(["1000ms", "1s"]).ticks == ("1000ms", "1s")  # one point twice: as written


def _figure(results: pd.DataFrame, keys: list[str], key: str) -> Any:
    (entry,) = [f for f in sweep_plots.sweep_figures(results, keys) if f[0] == key]
    return sweep_plots.draw_sweep(results, keys, *entry)


def _error_bar_xs(ax: Any) -> list[np.ndarray]:
    """The x of each line's means (errorbar lines have markers "o")."""
    return [np.asarray(ln.get_xdata(), dtype=float) for ln in ax.lines if ln.get_marker() == "o"]


def test_a_rate_sweep_is_drawn_on_a_numeric_axis_and_a_cca_sweep_on_categories() -> None:
    results, keys = _results(), ["links.0.rate", "flows.0.cca"]
    fig = _figure(results, keys, "links.0.rate")
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear"
    assert list(ax.get_xticks()) == [2.0, 10.0, 50.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "10", "50"]
    assert fig.axes[-1].get_xlabel() == "links.0.rate (Mbit/s)"
    # Two lines (bbr, cubic), side by side around each value by LINE_OFFSET × the closest gap (8).
    bbr, cubic = _error_bar_xs(ax)
    half = sweep_plots.LINE_OFFSET * 8.0 / 2
    assert np.allclose(bbr, [2 - half, 10 - half, 50 - half]) and np.allclose(
        cubic, [2 + half, 10 + half, 50 + half]
    )
    low, high = ax.get_xlim()
    assert low < 2 - half and high > 50 + half

    fig = _figure(results, keys, "flows.0.cca")
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [0.0, 1.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["bbr", "cubic"]
    assert ax.get_xlim() == (-0.5, 1.5) and fig.axes[-1].get_xlabel() == "flows.0.cca"


def test_a_grid_over_decades_is_drawn_on_a_log_axis() -> None:
    rows = [
        {
            "links.0.rate": rate,
            "links.0.loss": loss,
            "seed": seed,
            "status": "ok",
            "total_goodput_mbps": 0.9 * mbps,
        }
        for rate, mbps in (("1Mbps", 1.0), ("10Mbps", 10.0), ("100Mbps", 100.0), ("1Gbps", 1000.0))
        for loss in (0, 0.001, 0.05)
        for seed in (1, 2)
    ]
    results, keys = pd.DataFrame(rows), ["links.0.rate", "links.0.loss"]
    fig = _figure(results, keys, "links.0.rate")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "links.0.rate (Mbit/s)"
    assert list(ax.get_xticks()) == [1.0, 10.0, 100.0, 1000.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "10", "100", "1000"]
    # Three lines (one per loss), offset by equal factors on the log axis; the middle one on the values.
    lines = _error_bar_xs(ax)
    assert np.allclose(lines[1], [1.0, 10.0, 100.0, 1000.0])
    assert np.allclose(lines[2] / lines[1], 10**sweep_plots.LINE_OFFSET)
    fig = _figure(results, keys, "links.0.loss")
    (ax,) = fig.axes
    assert ax.get_xscale() == "symlog" and ax.get_xlabel() == "links.0.loss"
    assert list(ax.get_xticks()) == [0.0, 0.001, 0.05]
