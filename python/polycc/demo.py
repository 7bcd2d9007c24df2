"""`polycc demo`: runs the scenarios in scenarios/demo in parallel and writes one index page."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polycc.executors import Executor, LocalExecutor
from polycc.outdir import atomic_dir, relative_link
from polycc.report import IndexEntry, render_index
from polycc.scenario import Scenario
from polycc.tasks import RunOutcome, RunTask, execute

#: Used in place of a trace file that is missing (e.g. a checkout without ../shared/traces): a
#: bounded random walk with roughly the range of an LTE downlink.
FALLBACK_TRACE = {
    "synth": "random_walk",
    "start": "12Mbps",
    "min": "1Mbps",
    "max": "24Mbps",
    "step": "3Mbps",
    "interval": "250ms",
}


class DemoError(ValueError):
    """The demo scenarios cannot be found."""


def demo_dir() -> Path:
    """scenarios/demo of this checkout (the package is installed editable from python/), else of
    the current directory; POLYCC_DEMO_DIR overrides both."""
    env = os.environ.get("POLYCC_DEMO_DIR")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2] / "scenarios" / "demo"
    if repo.is_dir():
        return repo
    return Path.cwd() / "scenarios" / "demo"


def with_trace_fallback(scenario: Scenario) -> Scenario:
    """Replaces links whose trace file is missing by FALLBACK_TRACE, with a note saying so."""
    doc = scenario.to_dict()
    replaced: list[str] = []
    for i, link in enumerate(doc.get("links", [])):
        trace = link.get("trace") if isinstance(link, dict) else None
        if isinstance(trace, str) and not (scenario.base_dir / trace).is_file():
            link["trace"] = dict(FALLBACK_TRACE)
            replaced.append(f"links[{i}] ({link.get('id', '?')}): {trace}")
    if not replaced:
        return scenario
    out = scenario.with_document(doc)
    for r in replaced:
        out = out.with_note(
            f"Trace file not found for {r}; using a synthesised random-walk trace instead "
            f"({FALLBACK_TRACE['min']}..{FALLBACK_TRACE['max']}, steps of up to {FALLBACK_TRACE['step']} "
            f"every {FALLBACK_TRACE['interval']})."
        )
    return out


@dataclass
class DemoResult:
    index: Path
    outcomes: list[RunOutcome]

    @property
    def failed(self) -> list[RunOutcome]:
        return [o for o in self.outcomes if o.error is not None]


def load_demo(directory: Path) -> list[Scenario]:
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise DemoError(
            f"{directory}: no demo scenarios (*.toml) found; set POLYCC_DEMO_DIR or run from the repository"
        )
    scenarios = [with_trace_fallback(Scenario.from_file(f)) for f in files]
    for s in scenarios:
        s.validate()
    return scenarios


def run_demo(
    out_dir: Path,
    *,
    directory: Path | None = None,
    jobs: int | None = None,
    executor: Executor | None = None,
    plots: bool = True,
    on_done: Callable[[RunOutcome], None] | None = None,
) -> DemoResult:
    """Validates every demo scenario, runs them in parallel and writes out_dir/index.html plus
    out_dir/runs/<scenario>/ for each. Raises ScenarioError/DemoError before writing anything."""
    scenarios = load_demo(directory or demo_dir())
    executor = executor or LocalExecutor(jobs)
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        tasks = [
            RunTask(
                index=i,
                run_id=Path(s.origin).stem,
                params={},
                seed=_seed_of(s),
                scenario=s,
                out_dir=str(tmp / "runs" / Path(s.origin).stem),
                plots=plots,
                back="../../index.html",
            )
            for i, s in enumerate(scenarios)
        ]
        outcomes: list[RunOutcome] = []
        results = executor.map_unordered(execute, tasks)
        try:
            for o in results:
                outcomes.append(o)
                if on_done is not None:
                    on_done(o)
        finally:
            # Stop the runs before an interrupt removes the directory they write into.
            close = getattr(results, "close", None)
            if close is not None:
                close()
        outcomes.sort(key=lambda o: o.task.index)
        entries = [_entry(o, tmp) for o in outcomes]
        (tmp / "index.html").write_text(
            render_index(
                "polycc demo",
                entries,
                subtitle=f"{len(entries)} scenarios from {directory or demo_dir()}",
            ),
            encoding="utf-8",
        )
    return DemoResult(index=out_dir / "index.html", outcomes=outcomes)


def _seed_of(s: Scenario) -> int:
    seed = s.to_dict().get("seed", 1)
    return seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else 1


def _entry(o: RunOutcome, root: Path) -> IndexEntry:
    t = o.task
    doc = t.scenario.to_dict()
    return IndexEntry(
        name=str((o.summary or {}).get("name") or doc.get("name") or t.run_id),
        link=relative_link(root / "runs" / t.run_id / "report.html", root),
        summary=o.summary or {},
        description=str(doc.get("description", "")),
        notes=list(t.scenario.notes),
        error=o.error,
    )


def describe(outcome: RunOutcome) -> str:
    """One line per finished run for the terminal."""
    name = outcome.task.run_id
    if outcome.error is not None:
        return f"  {name}: FAILED: {outcome.error}"
    flows: Sequence[dict[str, Any]] = (outcome.summary or {}).get("flows", [])
    parts = ", ".join(
        f"{f.get('id')} ({f.get('cca')}) {float(f.get('goodput_mbps', 0)):.1f} Mbit/s" for f in flows
    )
    return f"  {name}: {parts} [{outcome.wall_s:.1f} s]"
