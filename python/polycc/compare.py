"""One scenario in the simulator and in the emulated testbed, side by side (`polycc compare`).

The comparison directory holds both runs' own results directories (`sim/`, `emu/`), a table of
their summary metrics with the testbed's value over the simulator's (`compare.json`), figures
with both runs' time series overlaid (the simulator's solid, the testbed's dashed, one colour
per flow or link) and `report.html` tying them together. The two runs share the scenario and
seed; where a flow's traffic or the link's losses are random, the two draw different samples
of them, so a comparison of a lossy scenario wants several seeds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polycc.outdir import atomic_dir

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult
    from polycc.plots import Panel, Plot

#: Per-flow metrics compared: (summary key path, label, whether it is a fraction).
FLOW_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("goodput_mbps", "goodput Mbit/s", False),
    ("rtt_ms.mean", "RTT mean ms", False),
    ("rtt_ms.p95", "RTT p95 ms", False),
    ("loss_rate", "loss rate", True),
)
#: Per-link metrics compared.
LINK_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("utilization", "utilisation", True),
    ("queue_delay_ms.mean", "queue delay mean ms", False),
    ("drops", "drops", False),
)
#: The two sides, in the order they are drawn and tabled, with their line style.
SIDES: tuple[tuple[str, str], ...] = (("sim", "-"), ("emu", "--"))


@dataclass(frozen=True)
class Row:
    """One metric of one flow or link in both runs."""

    kind: str  # "flow" or "link"
    id: str
    metric: str
    label: str
    fraction: bool
    sim: float | None
    emu: float | None

    @property
    def ratio(self) -> float | None:
        """The testbed's value over the simulator's (None where either is missing or the
        simulator's is 0)."""
        if self.sim is None or self.emu is None or self.sim == 0:
            return None
        return self.emu / self.sim


def _lookup(entry: Mapping[str, Any], path: str) -> float | None:
    value: Any = entry
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def compare_rows(sim: Mapping[str, Any], emu: Mapping[str, Any]) -> list[Row]:
    """The metrics of every flow and link in both summaries (`summary.json` as dicts), in the
    simulator's order; a flow or link one side lacks has None there."""
    rows: list[Row] = []
    for kind, key, metrics in (("flow", "flows", FLOW_METRICS), ("link", "links", LINK_METRICS)):
        emu_by_id = {str(e.get("id")): e for e in emu.get(key, [])}
        for entry in sim.get(key, []):
            id_ = str(entry.get("id"))
            other = emu_by_id.get(id_, {})
            for path, label, fraction in metrics:
                rows.append(Row(kind, id_, path, label, fraction, _lookup(entry, path), _lookup(other, path)))
    return rows


def _overlaid(frames: Mapping[str, pd.DataFrame], key: str, column: str, scale: float = 1.0) -> list[Any]:
    """Series of `column` per `key` value from both sides: one colour per key value, the
    simulator's solid and the testbed's dashed."""
    from polycc.plots import _series

    colour: dict[str, str] = {}
    out = []
    for side, dashes in SIDES:
        for s in _series(frames[side], key, column, scale):
            c = colour.setdefault(s.label, f"C{len(colour) % 10}")
            s.style.update(color=c, linestyle=dashes)
            s.label = f"{s.label} {side}"
            out.append(s)
    return out


def overlay_figures(sim: RunResult, emu: RunResult) -> list[tuple[Plot, list[Panel]]]:
    """The compared time series, as (plot, panels) for `polycc.plots._draw`."""
    from polycc.plots import Panel, Plot, clip_bounds

    flows = {"sim": _plotted(sim.flows, "flow"), "emu": _plotted(emu.flows, "flow")}
    links = {"sim": _plotted(sim.links, "link"), "emu": _plotted(emu.links, "link")}
    rate_clip, window_clip = clip_bounds(sim.flows, sim.links)
    return [
        (
            Plot("Flows: simulator (solid) and testbed (dashed)", "compare-flows.png"),
            [
                Panel("goodput (Mbit/s)", _overlaid(flows, "flow", "goodput_mbps"), clip=rate_clip),
                Panel("RTT (ms)", _overlaid(flows, "flow", "rtt_ms")),
                Panel("cwnd (KB)", _overlaid(flows, "flow", "cwnd_bytes", 1e-3), clip=window_clip),
                Panel("pacing rate (Mbit/s)", _overlaid(flows, "flow", "pacing_rate_mbps"), clip=rate_clip),
            ],
        ),
        (
            Plot("Links: simulator (solid) and testbed (dashed)", "compare-links.png"),
            [
                Panel("queue delay (ms)", _overlaid(links, "link", "queue_delay_ms"), robust=False),
                Panel("queue (KB)", _overlaid(links, "link", "queue_bytes", 1e-3), robust=False),
                Panel("drops per bin", _overlaid(links, "link", "drops"), robust=False),
            ],
        ),
    ]


def _plotted(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """A run's table thinned for plotting as its own report does."""
    from polycc.plot_data import Rebinner, bins_of

    bins, bin_s = bins_of(frame)
    r = Rebinner(key, bins, bin_s)
    r.add(frame)
    return r.frame()


def write_comparison(
    sim: RunResult,
    emu: RunResult,
    out_dir: Path,
    *,
    plots: bool = True,
) -> list[Row]:
    """Writes the comparison directory atomically (see the module documentation); returns the
    compared metrics."""
    from polycc.plots import _LOCK, _draw
    from polycc.report import render_comparison
    from polycc.results import write_run_files

    rows = compare_rows(sim.summary, emu.summary)
    with atomic_dir(out_dir) as tmp:
        for side, result in (("sim", sim), ("emu", emu)):
            (tmp / side).mkdir()
            write_run_files(result, tmp / side, plots=plots, back="../report.html")
        made: list[Plot] = []
        if plots:
            with _LOCK:
                for plot, panels in overlay_figures(sim, emu):
                    _draw(tmp / plot.file, f"{sim.name}: {plot.title}", panels)
                    made.append(plot)
        doc = {
            "name": sim.name,
            "seed": sim.seed,
            "rows": [{**asdict(r), "ratio": r.ratio} for r in rows],
        }
        (tmp / "compare.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        page = render_comparison(sim, rows, made)
        (tmp / "report.html").write_text(page, encoding="utf-8")
    return rows
