"""The suite's leaderboard page (DIR/index.html of `polycc suite`), Pantheon-style: the rank table
over all scenarios, then per scenario each CCA's score relative to the best with its 95 %
interval over seeds, and a throughput-vs-delay scatter (one point per CCA at its mean over
seeds, with bars from the lowest to the highest seed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from polycc.plots import _LOCK, figure
from polycc.report import _env

if TYPE_CHECKING:
    from polycc.suite import SuiteScenario

#: Scatter figure size (inches).
SCATTER_SIZE = (5.2, 3.4)


def scatter_file(scenario: str) -> str:
    return f"scatter-{scenario}.png"


def write_scatter(out_dir: Path, name: str, runs: pd.DataFrame, ccas: Sequence[str]) -> str:
    """Goodput of the flows under test against their p95 RTT (log axis, lower delay to the right
    as in Pantheon), one point per CCA with each seed's spread."""
    import matplotlib as mpl
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ok = runs[(runs.scenario == name) & (runs.status == "ok")]
    colours = mpl.colormaps["tab10"]
    with _LOCK:
        fig, axes = figure(SCATTER_SIZE[0], SCATTER_SIZE[1])
        ax = axes[0][0]
        for i, cca in enumerate(ccas):
            g = ok[ok.cca == cca]
            if g.empty:
                continue
            x, y = g.rtt_p95_ms, g.goodput_mbps
            mx, my = float(x.mean()), float(y.mean())
            ax.errorbar(
                [mx],
                [my],
                # Clipped at 0: the mean of equal values can round a hair past them.
                xerr=[[max(0.0, mx - float(x.min()))], [max(0.0, float(x.max()) - mx)]],
                yerr=[[max(0.0, my - float(y.min()))], [max(0.0, float(y.max()) - my)]],
                fmt="o",
                color=colours(i % 10),
                label=cca,
                capsize=2,
            )
        ax.set_xscale("log")
        # Plain numbers at 1-2-5 steps: the default log labels (10^2, 3×10^2, ...) overlap.
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.invert_xaxis()
        ax.set_xlabel("p95 RTT of the flow under test (ms, log; better →)")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title(name, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="best")
        fig.savefig(out_dir / scatter_file(name), dpi=90)
    return scatter_file(name)


def _bar_px(score: float) -> float:
    """Width of a score's bar: 100 px for 1.0."""
    return round(max(0.0, min(1.0, score)) * 100, 1) if math.isfinite(score) else 0.0


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{float(v):.{digits}f}"


def write_leaderboard(
    out_dir: Path,
    scenarios: Sequence[SuiteScenario],
    runs: pd.DataFrame,
    scores: pd.DataFrame,
    ccas: Sequence[str],
) -> Path:
    from polycc.suite import rank_table

    sections = []
    for s in scenarios:
        g = scores[scores.scenario == s.name].set_index("cca")
        rows = []
        for cca in ccas:
            if cca not in g.index:
                continue
            r = g.loc[cca]
            failed = runs[(runs.scenario == s.name) & (runs.cca == cca) & (runs.status != "ok")]
            rows.append(
                {
                    "cca": cca,
                    "score": _fmt(r.score),
                    "interval": f"{_fmt(r.score_lo)} – {_fmt(r.score_hi)}",
                    "value": _fmt(r.mean_value, 3),
                    "goodput": _fmt(r.mean_goodput_mbps),
                    "rtt": _fmt(r.mean_rtt_p95_ms, 1),
                    "competitor_loss": _fmt(r.mean_competitor_loss_rate * 100, 2),
                    "best": cca == r.best_cca,
                    "bar": _bar_px(float(r.score)),
                    "failed": len(failed),
                    "error": failed.error.iloc[0] if len(failed) else None,
                }
            )
        sections.append(
            {
                "name": s.name,
                "half": s.half.replace("_", "-"),
                "metric": s.metric,
                "params": ", ".join(f"{k} = {v}" for k, v in s.params.items()),
                "higher": s.higher_is_better,
                "description": s.scenario.to_dict().get("description", ""),
                "rows": rows,
                "scatter": write_scatter(out_dir, s.name, runs, ccas),
            }
        )
    ranks = {
        title: rank_table(scores, halves).to_dict("records")
        for title, halves in (
            ("both halves", ("tuning", "held_out")),
            ("tuning half", ("tuning",)),
            ("held-out half", ("held_out",)),
        )
    }
    html = (
        _env()
        .get_template("suite.html.j2")
        .render(
            sections=sections,
            ranks=ranks,
            ccas=ccas,
            seeds=int(runs.seed.nunique()),
            runs=len(runs),
            failed=int((runs.status != "ok").sum()),
        )
    )
    path = out_dir / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
