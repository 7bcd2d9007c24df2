"""Results directories.

One run writes:

    DIR/scenario.toml        the scenario with every default filled in (re-runnable)
    DIR/summary.json         the run's summary (per flow, per link, Jain's index)
    DIR/timeseries.parquet   per-flow time series, long format (one row per flow per bin)
    DIR/links.parquet        per-link time series, long format (one row per link per bin)
    DIR/frames.parquet       video flows only: one row per frame (delay, size, decodable, ...)
    DIR/*.png                goodput, RTT, cwnd per flow; capacity, queue delay/occupancy per link
    DIR/report.html          summary tables and plots, with relative links only

Everything is written into a temporary directory next to DIR and renamed at the end, so a failure
or an interrupt never leaves a half-written result (and a previous result stays intact).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from polycc import tomlw
from polycc.outdir import atomic_dir, relative_link
from polycc.plots import Plot, flow_paths, pool_members, write_plots
from polycc.report import render_run_report
from polycc.video import frame_delay_lower_bounds

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult


def relocate_traces(resolved_toml: str, base_dir: Path, out: Path) -> str:
    """Rewrites relative trace paths so that `out/scenario.toml` runs from where it is written.

    The results directory is written beside its final place (same depth), so a path relative to
    the temporary directory is also right once it is renamed.
    """
    try:
        doc = tomllib.loads(resolved_toml)
    except tomllib.TOMLDecodeError:
        return resolved_toml
    changed = False
    for link in doc.get("links", []):
        trace = link.get("trace") if isinstance(link, dict) else None
        if isinstance(trace, str) and not Path(trace).is_absolute():
            link["trace"] = relative_link((base_dir / trace).resolve(), out.resolve())
            changed = link["trace"] != trace or changed
    return tomlw.dumps(doc) if changed else resolved_toml


def flows_frame(flows: pd.DataFrame) -> pd.DataFrame:
    """The flows table as written to timeseries.parquet: `cc_state` is null, not "", while a flow
    is inactive. `polycc.run` already loads it so (`api.columns_to_frame`); this keeps frames
    built or edited elsewhere to the same rule."""
    if "cc_state" not in flows.columns or not (flows["cc_state"] == "").any():
        return flows
    out = flows.copy()
    out["cc_state"] = out["cc_state"].mask(out["cc_state"] == "", None)
    return out


def write_run_files(
    result: RunResult, out: Path, *, plots: bool = True, back: str | None = None
) -> list[Plot]:
    """Writes one run's files into an existing directory (callers make it atomic)."""
    resolved = relocate_traces(result.resolved_toml, result.base_dir, out)
    (out / "scenario.toml").write_text(resolved, encoding="utf-8")
    summary = result.summary_json if result.summary_json.endswith("\n") else result.summary_json + "\n"
    (out / "summary.json").write_text(summary, encoding="utf-8")
    flows_frame(result.flows).to_parquet(out / "timeseries.parquet", index=False)
    result.links.to_parquet(out / "links.parquet", index=False)
    if not result.frames.empty:
        result.frames.to_parquet(out / "frames.parquet", index=False)
    doc = tomllib.loads(resolved)
    made = (
        write_plots(
            result.flows,
            result.links,
            out,
            result.name,
            frames=result.frames,
            pools=pool_members(doc),
            frame_bounds=frame_delay_lower_bounds(doc),
            ccas={str(f.get("id")): str(f.get("cca")) for f in result.summary.get("flows", [])},
            paths=flow_paths(doc),
        )
        if plots
        else []
    )
    (out / "report.html").write_text(render_run_report(result, made, back=back), encoding="utf-8")
    return made


def write_run(result: RunResult, out_dir: Path, *, plots: bool = True) -> Path:
    """Writes one run's results directory atomically; returns its path."""
    with atomic_dir(out_dir) as tmp:
        write_run_files(result, tmp, plots=plots)
    return out_dir
