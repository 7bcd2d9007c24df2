"""HTML pages: one report per run and an index over several runs (demo, sweeps)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from polycc import _native

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult
    from polycc.compare import Row
    from polycc.plots import Plot

TEMPLATES = Path(__file__).parent / "templates"


def _num(value: Any, digits: int = 2) -> str:
    """Numbers for people: fixed decimals, thousands separators, a dash for missing values."""
    if (
        value is None
        or isinstance(value, jinja2.Undefined)
        or (isinstance(value, float) and math.isnan(value))
    ):
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    v = float(value)
    if v != 0 and abs(v) < 10 ** (-digits):
        return f"{v:.{digits}g}"
    return f"{v:,.{digits}f}"


def _pct(value: Any) -> str:
    # Undefined: a summary key the flow does not report (GCC has no competing-flow flag).
    if (
        value is None
        or isinstance(value, jinja2.Undefined)
        or (isinstance(value, float) and math.isnan(value))
    ):
        return "–"
    v = float(value) * 100
    return f"{v:.3g} %" if 0 < abs(v) < 0.1 else f"{v:.1f} %"


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.globals["version"] = _native.__version__
    return env


def _description(resolved_toml: str) -> str:
    import tomllib

    try:
        return str(tomllib.loads(resolved_toml).get("description", ""))
    except tomllib.TOMLDecodeError:
        return ""


def render_run_report(result: RunResult, plots: Sequence[Plot], *, back: str | None = None) -> str:
    return (
        _env()
        .get_template("report.html.j2")
        .render(
            s=result.summary,
            description=_description(result.resolved_toml),
            origin=result.origin,
            notes=result.notes,
            plots=plots,
            resolved_toml=result.resolved_toml,
            back=back,
            transfers=not result.transfers.empty,
        )
    )


def render_comparison(sim: RunResult, rows: Sequence[Row], plots: Sequence[Plot]) -> str:
    """The page of `polycc compare`: both runs' metrics side by side and the overlaid plots."""
    return (
        _env()
        .get_template("compare.html.j2")
        .render(
            name=sim.name,
            seed=sim.seed,
            description=_description(sim.resolved_toml),
            sim=sim.summary,
            rows=rows,
            plots=plots,
        )
    )


@dataclass
class IndexEntry:
    name: str
    link: str
    summary: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    notes: list[str] = field(default_factory=list)
    error: str | None = None


def render_index(
    title: str, entries: Sequence[IndexEntry], *, subtitle: str = "", notes: Sequence[str] = ()
) -> str:
    return (
        _env()
        .get_template("index.html.j2")
        .render(title=title, subtitle=subtitle, runs=entries, notes=list(notes))
    )


SWEEP_METRICS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("total_goodput_mbps", "total goodput Mbit/s", _num),
    ("min_goodput_mbps", "lowest flow goodput Mbit/s", _num),
    ("jain_index", "Jain's index", lambda v: _num(v, 3)),
    ("mean_rtt_ms", "mean RTT ms", _num),
    ("max_rtt_p95_ms", "max RTT p95 ms", _num),
    ("mean_loss_rate", "mean loss rate", _pct),
    ("mean_utilization", "mean link utilisation", _pct),
    ("total_drops", "drops", lambda v: _num(v, 0)),
)


def render_sweep_index(
    scenario: str,
    results: pd.DataFrame,
    keys: Sequence[str],
    *,
    link: Callable[[str], str],
    plots_dir: Path | None = None,
) -> str:
    """The sweep's index.html: with `plots_dir`, first writes there a plot of each summary metric
    against each swept key (`polycc.sweep_plots`) and shows them above the table. Rows are
    ordered by the keys' quantities (2Mbps before 10Mbps), then the seed."""
    from polycc.sweep_plots import sort_key, write_sweep_plots

    plots = write_sweep_plots(results, keys, plots_dir) if plots_dir is not None else []
    metrics = [(c, label, fmt) for c, label, fmt in SWEEP_METRICS if c in results.columns]
    records = results.to_dict("records")
    records.sort(key=lambda rec: ([sort_key(rec.get(k)) for k in keys], rec.get("seed") or 0))
    rows = []
    for rec in records:
        rows.append(
            {
                "link": link(str(rec["run_id"])),
                "run_id": rec["run_id"],
                "params": [rec.get(k) for k in keys],
                "seed": rec["seed"],
                "error": rec.get("error"),
                "metrics": [fmt(rec.get(c)) for c, _, fmt in metrics],
            }
        )
    return (
        _env()
        .get_template("sweep.html.j2")
        .render(
            scenario=scenario,
            keys=list(keys),
            metrics=[label for _, label, _ in metrics],
            rows=rows,
            plots=plots,
        )
    )
