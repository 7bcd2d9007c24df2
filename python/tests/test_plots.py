"""Run plots drawn on reused figures (polycc.plots keeps one figure per panel count) come out
exactly as on a new figure, whatever was drawn on it before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
