"""Results directories.

One run writes:

    DIR/scenario.toml        the scenario with every default filled in (re-runnable)
    DIR/summary.json         the run's summary (per flow, per link, Jain's index)
    DIR/timeseries.parquet   per-flow time series, long format (one row per flow per bin)
    DIR/links.parquet        per-link time series, long format (one row per link per bin)
    DIR/frames.parquet       video flows only: one row per frame (delay, size, decodable, ...)
    DIR/transfers.parquet    sized, web, dash and page flows: one row per transfer (request, completion, fct)
    DIR/*.png                goodput, RTT, cwnd per flow; capacity, queue delay/occupancy per link
    DIR/report.html          summary tables and plots, with relative links only

`stream_run` runs a scenario and writes its time series as the simulator records them, one
Parquet row group per chunk of ROW_GROUP_ROWS flow rows (`polycc.parquet_sink`), so that the
memory a run takes does not grow with its simulated time; the plots are drawn from at most
`polycc.plot_data.MAX_POINTS` bins per series. `write_run` writes a `RunResult` held in memory
(`polycc.run`) the same way.

Everything is written into a temporary directory next to DIR and renamed at the end, so a failure
or an interrupt never leaves a half-written result (and a previous result stays intact).
"""

from __future__ import annotations

import contextlib
import math
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from polycc import tomlw
from polycc.outdir import atomic_dir, relative_link
from polycc.plot_data import Rebinner, bins_of
from polycc.plots import Plot, flow_paths, pool_members, write_plots
from polycc.report import render_run_report
from polycc.video import frame_delay_lower_bounds

if TYPE_CHECKING:
    import pandas as pd

    from polycc._native import FusionFn, NativeTables
    from polycc.api import RunResult
    from polycc.scenario import Scenario

#: Flow rows per Parquet row group: the simulator pauses and its rows are taken over once this
#: many are pending (link rows gather until as many). About 1 MB of values for the usual 15
#: columns; each chunk is copied a few times on its way to the file, so larger groups cost
#: memory: 32768 rows took 21 MB more at the peak of a 50-flow, 600 s run than 4096
#: (BENCHMARKS.md).
ROW_GROUP_ROWS = 8192
#: Wall-clock seconds the simulator runs between two looks from Python (progress, Ctrl-C).
STEP_WALL_S = 0.25


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


def _write_head(result: RunResult, out: Path) -> str:
    """scenario.toml, summary.json, frames.parquet and transfers.parquet; returns the resolved
    scenario written."""
    resolved = relocate_traces(result.resolved_toml, result.base_dir, out)
    (out / "scenario.toml").write_text(resolved, encoding="utf-8")
    summary = result.summary_json if result.summary_json.endswith("\n") else result.summary_json + "\n"
    (out / "summary.json").write_text(summary, encoding="utf-8")
    if not result.frames.empty:
        result.frames.to_parquet(out / "frames.parquet", index=False)
    if not result.transfers.empty:
        result.transfers.to_parquet(out / "transfers.parquet", index=False)
    return resolved


def _write_tail(
    result: RunResult,
    out: Path,
    resolved: str,
    flows: pd.DataFrame | None,
    links: pd.DataFrame | None,
    back: str | None,
) -> list[Plot]:
    """The plots (from `flows` and `links`, None for none) and report.html."""
    made: list[Plot] = []
    if flows is not None and links is not None:
        doc = tomllib.loads(resolved)
        made = write_plots(
            flows,
            links,
            out,
            result.name,
            frames=result.frames,
            pools=pool_members(doc),
            frame_bounds=frame_delay_lower_bounds(doc),
            ccas={str(f.get("id")): str(f.get("cca")) for f in result.summary.get("flows", [])},
            paths=flow_paths(doc),
        )
    (out / "report.html").write_text(render_run_report(result, made, back=back), encoding="utf-8")
    return made


def _rebinned(frame: pd.DataFrame, key: str, bins: int, bin_s: float) -> pd.DataFrame:
    r = Rebinner(key, bins, bin_s)
    r.add(frame)
    return r.frame()


def write_run_files(
    result: RunResult, out: Path, *, plots: bool = True, back: str | None = None
) -> list[Plot]:
    """Writes the files of a run held in memory into an existing directory (callers make it
    atomic)."""
    resolved = _write_head(result, out)
    result.flows.to_parquet(out / "timeseries.parquet", index=False)
    result.links.to_parquet(out / "links.parquet", index=False)
    flows = links = None
    if plots:
        bins, bin_s = bins_of(result.flows if not result.flows.empty else result.links)
        flows = _rebinned(result.flows, "flow", bins, bin_s)
        links = _rebinned(result.links, "link", bins, bin_s)
    return _write_tail(result, out, resolved, flows, links, back)


def write_run(result: RunResult, out_dir: Path, *, plots: bool = True) -> Path:
    """Writes one run's results directory atomically; returns its path."""
    with atomic_dir(out_dir) as tmp:
        write_run_files(result, tmp, plots=plots)
    return out_dir


def stream_run(
    scenario: Scenario,
    out: Path | None,
    *,
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
    plots: bool = True,
    back: str | None = None,
    on_progress: Callable[[float, float], None] | None = None,
) -> RunResult:
    """Runs `scenario` and writes its files into the existing directory `out` (callers make it
    atomic) as the simulator records them; with `out` None, keeps only the summary. Calls
    `on_progress(simulated s reached, simulated s of the run)` about every STEP_WALL_S.

    The RunResult returned has the summary, the frames and the transfers, but empty `flows` and
    `links`: the
    time series are in the files."""
    from polycc.api import result_of
    from polycc.columns import to_arrow, to_frame
    from polycc.parquet_sink import ParquetSink
    from polycc.plot_data import plotted

    sim = scenario.simulation(seed, fusions)
    # The last bin may be partial; 1e-9 keeps a whole number of bins from counting one more.
    bins = max(1, math.ceil(sim.duration_s / sim.bin_s - 1e-9))
    with contextlib.ExitStack() as stack:
        sinks = rebin = None
        if out is not None:
            sinks = {
                "flows": stack.enter_context(ParquetSink(out / "timeseries.parquet", ROW_GROUP_ROWS)),
                "links": stack.enter_context(ParquetSink(out / "links.parquet", ROW_GROUP_ROWS)),
            }
            if plots:
                rebin = {
                    "flows": Rebinner("flow", bins, sim.bin_s),
                    "links": Rebinner("link", bins, sim.bin_s),
                }

        def take(tables: NativeTables) -> None:
            for name in ("flows", "links"):
                if sinks is not None:
                    sinks[name].write(to_arrow(tables[name]))
                if rebin is not None:
                    rebin[name].add(to_frame(tables[name], keep=plotted))

        done = False
        while not done:
            done = sim.advance(budget_s=STEP_WALL_S, max_rows=ROW_GROUP_ROWS)
            if on_progress is not None:
                on_progress(sim.now_s, sim.duration_s)
            if sim.pending_rows >= ROW_GROUP_ROWS:
                take(sim.drain())
        native = sim.finish()
        take(native)
        # The time series are in the files, not in the result.
        result = result_of(
            scenario,
            {
                "summary_json": native["summary_json"],
                "resolved_toml": native["resolved_toml"],
                "flows": {},
                "links": {},
                "frames": native.get("frames", {}),
                "transfers": native.get("transfers", {}),
            },
        )
        if out is None:
            return result
        resolved = _write_head(result, out)
    flows = rebin["flows"].frame() if rebin is not None else None
    links = rebin["links"].frame() if rebin is not None else None
    _write_tail(result, out, resolved, flows, links, back)
    return result
