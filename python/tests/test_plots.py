"""Run plots drawn on reused figures (polycc.plots keeps one figure per panel count) come out
exactly as on a new figure, whatever was drawn on it before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import fake_result

from polycc import plots


def _write(result_name: str, out: Path, *, scale: float = 1.0, drop_rtt: bool = False) -> dict[str, bytes]:
    r = fake_result(result_name)
    flows = r.flows.copy()
    flows["goodput_mbps"] *= scale
    if drop_rtt:
        flows["rtt_ms"] = np.nan  # an empty panel: "no data", autoscaled limits
    out.mkdir(parents=True)
    made = plots.write_plots(flows, r.links, out, result_name)
    return {p.file: (out / p.file).read_bytes() for p in made}


def test_reused_figures_draw_the_same_pngs_as_new_ones(tmp_path: Path) -> None:
    plots._PANEL_FIGURES.clear()
    fresh = _write("x", tmp_path / "fresh")
    fresh_empty = _write("y", tmp_path / "fresh-empty", drop_rtt=True)
    assert set(fresh) == {"goodput.png", "rtt.png", "cwnd.png", "links.png"}
    assert len(plots._PANEL_FIGURES) >= 2  # one- and two-panel figures (and links' four)

    # Other data (ten times the goodput, an empty RTT panel) on the same figures first.
    _write("x", tmp_path / "other", scale=10.0, drop_rtt=True)
    assert _write("x", tmp_path / "again") == fresh
    assert _write("y", tmp_path / "again-empty", drop_rtt=True) == fresh_empty
    assert fresh["rtt.png"] != fresh_empty["rtt.png"]


# --- axis limits, groups, pool panels -------------------------------------------------------------

T = np.round(np.arange(0.0, 10.0, 0.1), 3)


def _flows(specs: dict[str, dict[str, np.ndarray | float]]) -> pd.DataFrame:
    """A flows table: {flow id: {column: values or a constant}} over T."""
    frames = []
    for fid, cols in specs.items():
        data: dict[str, object] = {"t_s": T, "flow": pd.Series([fid] * len(T), dtype=object)}
        for c, v in cols.items():
            data[c] = np.broadcast_to(np.asarray(v, dtype=float), T.shape).copy()
        frames.append(pd.DataFrame(data))
    return pd.concat(frames, ignore_index=True)


def _links(capacity_mbps: float = 20.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "t_s": T,
            "link": pd.Series(["bottleneck"] * len(T), dtype=object),
            "capacity_mbps": np.full(len(T), capacity_mbps),
            "queue_bytes": np.full(len(T), 10_000.0),
            "queue_delay_ms": np.full(len(T), 5.0),
            "drops": np.zeros(len(T)),
        }
    )


def _panel(figs: list[tuple[plots.Plot, list[plots.Panel]]], file: str, ylabel: str) -> plots.Panel:
    return next(p for plot, panels in figs if plot.file == file for p in panels if p.ylabel == ylabel)


def _pibes_and_cubic() -> pd.DataFrame:
    """A PIBES flow pacing bursts at 10 Gbit/s with a 68 MB window, a CUBIC flow at 8 Mbit/s
    with windows of 80-120 KB, on 20 Mbit/s with 40 ms RTTs."""
    cubic_cwnd = 100_000 + 20_000 * np.sin(T)
    return _flows(
        {
            "video": {"pacing_rate_mbps": 10_000.0, "cwnd_bytes": 68e6, "rtt_ms": 45.0, "goodput_mbps": 10.0},
            "tcp": {
                "pacing_rate_mbps": 8.0 + np.sin(T),
                "cwnd_bytes": cubic_cwnd,
                "rtt_ms": 45.0,
                "goodput_mbps": 9.0,
            },
        }
    )


def test_a_burst_pacing_flow_does_not_flatten_the_others() -> None:
    flows = _pibes_and_cubic()
    figs = plots.figures(flows, _links(20.0))
    rate = plots.y_limits(_panel(figs, "cwnd.png", "pacing rate (Mbit/s)"))
    assert rate is not None
    # The axis ends at CUBIC's highest rate (9 Mbit/s) with headroom, not at 10 Gbit/s.
    assert rate.top == pytest.approx(9.0 * plots.HEADROOM, rel=0.01)
    assert rate.clipped_max == 10_000.0
    window = plots.y_limits(_panel(figs, "cwnd.png", "cwnd (KB)"))
    assert window is not None
    assert window.top == pytest.approx(120.0 * plots.HEADROOM, rel=0.01)  # KB
    assert window.clipped_max == pytest.approx(68_000.0)
    goodput = plots.y_limits(_panel(figs, "goodput.png", "goodput (Mbit/s)"))
    assert goodput is not None and goodput.clipped_max is None  # capacity 20 is the highest
    assert goodput.top == pytest.approx(20.0 * plots.HEADROOM)


def test_the_drawn_axes_use_the_computed_limits_and_mark_clipped_points(tmp_path: Path) -> None:
    flows = _pibes_and_cubic()
    made = plots.write_plots(flows, _links(20.0), tmp_path, "t", ccas={"video": "pibes", "tcp": "cubic"})
    assert {p.file for p in made} >= {"goodput.png", "rtt.png", "cwnd.png", "links.png"}
    assert all((tmp_path / p.file).stat().st_size > 10_000 for p in made)
    _, axes = plots._PANEL_FIGURES[2]  # cwnd.png was the last two-panel figure drawn
    top = axes[1].get_ylim()[1]
    assert top == pytest.approx(9.0 * plots.HEADROOM, rel=0.01)
    markers = [ln for ln in axes[1].lines if ln.get_label() == "_clipped"]
    assert len(markers) == 1  # the video flow's, on the top edge, thinned
    assert 0 < len(markers[0].get_xdata()) <= plots.MAX_CLIP_MARKERS
    assert set(markers[0].get_ydata()) == {top}
    assert any("video (up to 10,000)" in t.get_text() for t in axes[1].texts)


def test_a_rare_spike_is_clipped_at_a_multiple_of_the_99th_percentile() -> None:
    estimate = np.full(len(T), 18.0)
    estimate[40] = 600.0  # one bin in 100
    panel = plots.Panel("B", [plots.Series("B", T, estimate)])
    lim = plots.y_limits(panel)
    assert lim is not None and lim.clipped_max == 600.0
    assert lim.top == pytest.approx(18.0 * plots.HEADROOM)
    # Counts and flags keep their extremes.
    lim = plots.y_limits(plots.Panel("drops", [plots.Series("d", T, estimate)], robust=False))
    assert lim is not None and lim.clipped_max is None and lim.top == pytest.approx(600 * plots.HEADROOM)
    assert plots.y_limits(plots.Panel("none", [plots.Series("x", T, np.full(len(T), np.nan))])) is None


def test_the_video_estimate_axis_ends_near_the_capacity() -> None:
    estimate = np.full(len(T), 19.0)
    estimate[10:20] = 600.0  # ten bins: too many for the percentile rule, above 3 × capacity
    flows = _flows(
        {
            "video": {
                "cc_bw_estimate_mbps": estimate,
                "cc_target_mbps": 15.0,
                "cc_share": 0.8,
                "cc_competing": 0.0,
            }
        }
    )
    panel = _panel(plots.figures(flows, _links(20.0)), "video.png", "estimate B, target R (Mbit/s)")
    assert panel.clip == pytest.approx(20.0 * plots.ESTIMATE_CLIP_CAPACITY)
    lim = plots.y_limits(panel)
    assert lim is not None and lim.clipped_max == 600.0
    assert lim.top == pytest.approx(20.0 * plots.HEADROOM)  # the capacity line is the highest kept


def test_many_flows_are_grouped_by_cca_with_one_colour_each(tmp_path: Path) -> None:
    specs = {
        f"{cca}-{k}": {"goodput_mbps": g + 0.1 * k, "rtt_ms": 40.0}
        for cca, g in (("cubic", 1), ("bbr", 2), ("reno", 3))
        for k in range(1, 18)
    }
    ccas = {fid: fid.split("-")[0] for fid in specs}
    flows = _flows(specs)
    assert flows["flow"].nunique() == 51
    panel = _panel(plots.figures(flows, _links(100.0), ccas=ccas), "goodput.png", "goodput (Mbit/s)")
    groups = [s for s in panel.series if s.band is not None]
    assert [s.label.split(" ")[0] for s in groups] == ["cubic", "bbr", "reno"]
    assert all("×17" in s.label for s in groups)
    assert len({s.style["color"] for s in groups}) == 3
    cubic = groups[0]
    assert np.allclose(cubic.y, np.mean(1 + 0.1 * np.arange(1, 18)))  # the mean over its flows
    lo, hi = cubic.band  # type: ignore[misc]
    assert np.allclose(lo, np.percentile(1 + 0.1 * np.arange(1, 18), 10))
    assert np.allclose(hi, np.percentile(1 + 0.1 * np.arange(1, 18), 90))

    plots.write_plots(flows, _links(100.0), tmp_path, "many", ccas=ccas)
    assert (tmp_path / "goodput.png").exists()
    plots._draw(tmp_path / "g.png", "g", [panel])  # the one-panel figure holds goodput again
    _, (ax,) = plots._PANEL_FIGURES[1]
    legend = ax.get_legend()
    # Three CCAs, the fair share (100 Mbit/s over 51 flows) and the capacity.
    assert legend is not None and len(legend.get_texts()) == 5
    assert len(ax.collections) == 3  # one band per CCA
    (fair,) = [ln for ln in ax.lines if ln.get_label() == "fair share"]
    assert np.allclose(fair.get_ydata(), 100.0 / 51)


def test_few_flows_keep_one_line_each_and_equal_rtts_differ_in_dashes() -> None:
    flows = _flows({f: {"goodput_mbps": 5.0, "rtt_ms": 40.0} for f in ("a", "b", "c")})
    figs = plots.figures(flows, _links(), ccas={"a": "cubic", "b": "cubic", "c": "bbr"})
    rtt = _panel(figs, "rtt.png", "RTT (ms)")
    assert [s.label for s in rtt.series] == ["a", "b", "c"]
    assert len({s.style["linestyle"] for s in rtt.series}) == 3


def test_the_pool_plot_has_one_unit_per_panel_and_no_empty_pilot_panel() -> None:
    pool = {
        "cc_pilot": 0.0,
        "cc_fused_cwnd_bytes": 90_000.0,
        "cc_m0_cwnd_bytes": 80_000.0,
        "cc_m1_cwnd_bytes": 90_000.0,
        "cc_m0_rate_mbps": 12.0,
        "cc_m1_rate_mbps": 15.0,
        "inflight_bytes": 70_000.0,
        "pacing_rate_mbps": 12.0,
        "rtt_ms": 45.0,
    }
    figs = plots.figures(_flows({"pool": pool}), _links(), pools={"pool": ["bbr", "cubic"]})
    plot, panels = next((p, ps) for p, ps in figs if p.file == "pool-pool.png")
    assert plot.title == "PolyCC members of flow pool (pilot bbr throughout)"
    assert [p.ylabel for p in panels] == ["window (KB)", "rate (Mbit/s)"]
    assert [s.label for s in panels[0].series] == ["fused cwnd", "bytes in flight", "m0 bbr", "m1 cubic"]
    assert [s.label for s in panels[1].series] == ["sender pacing", "m0 bbr", "m1 cubic"]

    switching = dict(pool, cc_pilot=(T > 5).astype(float))
    plot, panels = next(
        (p, ps)
        for p, ps in plots.figures(_flows({"pool": switching}), _links(), pools={"pool": ["bbr", "cubic"]})
        if p.file == "pool-pool.png"
    )
    assert "pilot changes between bbr, cubic" in plot.title
    assert panels[-1].ylabel == "pilot (member #)"


def test_bands_markers_and_notes_do_not_stay_on_a_reused_figure(tmp_path: Path) -> None:
    plots._PANEL_FIGURES.clear()
    fresh = _write("x", tmp_path / "fresh")
    # Clipped markers, notes above panels and CCA bands on the same figures first.
    plots.write_plots(_pibes_and_cubic(), _links(20.0), tmp_path, "clipped")
    many = _flows({f"f{k}": {"goodput_mbps": 1.0 + k, "rtt_ms": 40.0, "cwnd_bytes": 1e4} for k in range(12)})
    plots.write_plots(many, _links(100.0), tmp_path, "grouped")
    assert _write("x", tmp_path / "again") == fresh


def test_row_percentiles_match_numpy_with_inactive_flows() -> None:
    rng = np.random.default_rng(1)
    values = rng.random((50, 7))
    values[rng.random((50, 7)) < 0.3] = np.nan  # inactive flows
    values[3] = np.nan  # a bin where no flow of the group is active
    for q in (0.0, 10.0, 50.0, 90.0, 100.0):
        with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
            expected = np.nanpercentile(values, q, axis=1)
        assert np.allclose(plots._row_percentiles(values, q), expected, equal_nan=True)


def test_a_cca_with_one_flow_among_many_keeps_its_own_line() -> None:
    specs = {f"cubic-{k}": {"goodput_mbps": 1.0} for k in range(9)} | {"video": {"goodput_mbps": 4.0}}
    ccas = {f: "pibes" if f == "video" else "cubic" for f in specs}
    series = plots.flow_series(_flows(specs), "goodput_mbps", ccas)
    assert [(s.label, s.band is None) for s in series] == [
        ("cubic ×9 (mean, p10-p90)", False),
        ("video (pibes)", True),
    ]
    assert np.allclose(series[1].y, 4.0)


# --- fair share ----------------------------------------------------------------------------------


def _staggered() -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """12 CUBIC flows all along and 8 BBR flows active from 5 s to 8 s (a window only then, no
    goodput before, some bytes after they stop) on a link whose capacity drops from 100 to
    50 Mbit/s at 6 s; returns (flows, links, the expected fair share)."""
    on = (T >= 5) & (T < 8)
    specs: dict[str, dict[str, np.ndarray | float]] = {
        f"cubic-{k}": {"goodput_mbps": 4.0 + 0.1 * k, "cwnd_bytes": 50_000.0, "rtt_ms": 40.0}
        for k in range(12)
    }
    for k in range(8):
        specs[f"bbr-{k}"] = {
            "goodput_mbps": np.where(on, 3.0, np.where(T >= 8, 0.5, 0.0)),
            "cwnd_bytes": np.where(on, 60_000.0, np.nan),
            "rtt_ms": 40.0,
        }
    links = _links(100.0)
    links["capacity_mbps"] = np.where(T < 6, 100.0, 50.0)
    expected = links["capacity_mbps"].to_numpy() / np.where(on, 20, 12)
    return _flows(specs), links, expected


def test_the_fair_share_is_capacity_over_the_flows_active_in_each_bin(tmp_path: Path) -> None:
    flows, links, expected = _staggered()
    ccas = {f: f.split("-")[0] for f in flows["flow"].unique()}
    panel = _panel(plots.figures(flows, links, ccas=ccas), "goodput.png", "goodput (Mbit/s)")
    (fair,) = [s for s in panel.series if s.label == "fair share"]
    assert np.allclose(fair.t, T)
    assert np.allclose(fair.y, expected)
    assert expected[0] == pytest.approx(100 / 12) and expected[55] == pytest.approx(100 / 20)
    assert expected[65] == pytest.approx(50 / 20) and expected[90] == pytest.approx(50 / 12)
    # The groups' mean and band are over their active flows: BBR's 3 Mbit/s while active, a gap
    # before and after (not the zeros and leftovers of flows not running).
    bbr = next(s for s in panel.series if s.label.startswith("bbr"))
    on = (T >= 5) & (T < 8)
    assert np.allclose(bbr.y[on], 3.0) and bool(np.isnan(bbr.y[~on]).all())
    cubic = next(s for s in panel.series if s.label.startswith("cubic"))
    assert np.allclose(cubic.y, 4.0 + 0.1 * np.arange(12).mean())

    # Drawn: a dotted line at those values in the goodput figure.
    plots.write_plots(flows, links, tmp_path, "staggered", ccas=ccas)
    plots._draw(tmp_path / "g.png", "g", [panel])
    _, (ax,) = plots._PANEL_FIGURES[1]
    (line,) = [ln for ln in ax.lines if ln.get_label() == "fair share"]
    assert np.allclose(line.get_xdata(), T) and np.allclose(line.get_ydata(), expected)
    assert line.get_linestyle() == ":"


def test_few_flows_get_the_fair_share_line_too_but_a_lone_flow_does_not() -> None:
    flows = _flows(
        {
            "a": {"goodput_mbps": 9.0, "cwnd_bytes": 1e4},
            "b": {"goodput_mbps": 9.0, "cwnd_bytes": np.where(T >= 4, 1e4, np.nan)},
            "c": {"goodput_mbps": 0.0, "cwnd_bytes": np.where(T >= 7, 1e4, np.nan)},
        }
    )
    panel = _panel(plots.figures(flows, _links(30.0)), "goodput.png", "goodput (Mbit/s)")
    assert [s.label for s in panel.series] == ["a", "b", "c", "fair share", "capacity bottleneck"]
    assert np.allclose(panel.series[3].y, 30.0 / (1 + (T >= 4) + (T >= 7)))
    alone = _flows({"a": {"goodput_mbps": 9.0, "cwnd_bytes": 1e4}})
    assert plots.fair_share_series(alone, _links(30.0)) == []  # it would be the capacity line


def test_flows_on_different_bottlenecks_get_one_fair_share_line_each() -> None:
    # x, y cross access (10 Mbit/s) and core (30 Mbit/s); z, w only core: core is shared by 4
    # flows (7.5 each), access by 2 (5 each), so x and y are limited by access.
    flows = _flows({f: {"goodput_mbps": 5.0, "cwnd_bytes": 1e4} for f in ("x", "y", "z", "w")})
    links = pd.concat(
        [
            _links(10.0).assign(link="access"),
            _links(30.0).assign(link="core"),
            _links(5.0).assign(link="core:reverse"),
        ],
        ignore_index=True,
    )
    paths = {"x": ["access", "core"], "y": ["access", "core"], "z": ["core"], "w": ["core"]}
    fair = plots.fair_share_series(flows, links, paths)
    assert [(s.label, float(s.y[0])) for s in fair] == [("fair share access", 5.0), ("fair share core", 7.5)]
    # Without paths every flow is on the first forward link.
    (default,) = plots.fair_share_series(flows, links)
    assert default.label == "fair share" and np.allclose(default.y, 10.0 / 4)


def test_flow_paths_of_a_resolved_scenario() -> None:
    doc = {
        "links": [{"id": "access"}, {"id": "core"}],
        "flows": [
            {"id": "a"},
            {"id": "b", "path": ["access", "core"], "count": 2},
            {"id": "r", "reverse": True, "count": 1},
        ],
    }
    assert plots.flow_paths(doc) == {
        "a": ["access"],
        "b-1": ["access", "core"],
        "b-2": ["access", "core"],
        "r": ["access:reverse"],
    }


def test_an_unresponsive_flow_counts_as_active_while_it_carries_data() -> None:
    flows = _flows(
        {
            "tcp": {"goodput_mbps": 6.0, "throughput_mbps": 6.2, "cwnd_bytes": 1e4},
            "cbr": {"goodput_mbps": 4.0, "throughput_mbps": np.where(T >= 2, 4.1, 0.0)},  # no window
        }
    )
    assert plots.active_rows(flows).sum() == len(T) + int((T >= 2).sum())
    (fair,) = plots.fair_share_series(flows, _links(12.0))
    assert np.allclose(fair.y, np.where(T >= 2, 6.0, 12.0))
