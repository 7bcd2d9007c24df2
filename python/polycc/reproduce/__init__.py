"""`polycc reproduce <paper>`: runs a paper's experiments in the simulator, checks its claims and
regenerates the paper's section of REPRODUCTION.md.

Adding a paper: write a module `polycc/reproduce/<paper>.py`, or a package `<paper>/` with one
module per experiment (as `pcc/` and `pibes/`), with `TITLE` (the section heading) and
`experiments(ctx: Context) -> list[Section]` (run scenarios under `scenarios/papers/<paper>/`
through `ctx.sweep` / `ctx.run`, build `Section`s with `Reproduction` records, state the setup
from the scenario files through `ctx.scenario_file`), and add it to `PAPERS`. Optionally `PREAMBLE`
(paragraphs after the summary line) and `closing(sections) -> list[str]` (markdown lines closing the
section). Its section of REPRODUCTION.md lives between `<!-- reproduce:<paper>:begin -->` and
`<!-- reproduce:<paper>:end -->`.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from polycc.reproduce.common import (
    Context,
    ReproduceError,
    Reproduction,
    Section,
    Table,
    as_json,
    render_index,
    render_markdown,
    update_document,
)

if TYPE_CHECKING:
    from polycc.executors import Executor

__all__ = [
    "PAPERS",
    "Context",
    "ReportResult",
    "ReproduceError",
    "Reproduction",
    "Section",
    "Table",
    "reproduce",
]

#: Paper name -> module implementing it.
PAPERS = {
    "pcc": "polycc.reproduce.pcc",
    "janus": "polycc.reproduce.janus",
    "polycc": "polycc.reproduce.polycc",
    "pibes": "polycc.reproduce.pibes",
}


def repo_root() -> Path:
    """The checkout this (editable) package lives in."""
    return Path(__file__).resolve().parents[3]


@dataclass
class ReportResult:
    paper: str
    sections: list[Section]
    out: Path
    #: REPRODUCTION.md when it was updated.
    doc: Path | None
    runs: int

    @property
    def reproductions(self) -> list[Reproduction]:
        return [r for s in self.sections for r in s.reproductions]

    def get(self, rid: str) -> Reproduction:
        for r in self.reproductions:
            if r.id == rid:
                return r
        raise KeyError(rid)

    def failing(self, *rids: str) -> list[Reproduction]:
        """Those of the claims `rids` that do not hold by their own criterion (for tests:
        `assert not result.failing("1a", "1b")` shows each failing claim's value and criterion)."""
        return [r for r in map(self.get, rids) if not r.holds]


def reproduce(
    paper: str,
    *,
    quick: bool = False,
    out: Path | None = None,
    doc: Path | None = None,
    jobs: int | None = None,
    executor: Executor | None = None,
    plots: bool = True,
    progress: bool = False,
) -> ReportResult:
    """Runs `paper`'s experiments into `out` (default results/reproduce-<paper>[-quick]), written
    atomically, with `out/REPRODUCTION-<paper>.md`, `out/reproductions.json` and `out/index.html`.
    With `doc`, also regenerates the paper's section of that document. With `progress`, each
    experiment shows its runs done / total on stderr (when it is a terminal)."""
    from polycc.executors import check_jobs
    from polycc.outdir import atomic_dir, check_output_dir

    check_jobs(jobs)
    module_name = PAPERS.get(paper)
    if module_name is None:
        raise ReproduceError(f"unknown paper {paper!r}; known: {', '.join(sorted(PAPERS))}")
    module = importlib.import_module(module_name)
    root = repo_root()
    scenarios = root / "scenarios" / "papers" / paper
    if not scenarios.is_dir():
        raise ReproduceError(f"{scenarios}: the paper's scenario directory is missing")
    target = out or Path("results") / f"reproduce-{paper}{'-quick' if quick else ''}"
    check_output_dir(target)
    if doc is not None and doc.exists() and not doc.is_file():
        raise ReproduceError(f"{doc}: not a file")
    with atomic_dir(target) as tmp:
        ctx = Context(
            repo=root,
            scenarios=scenarios,
            out=tmp,
            quick=quick,
            jobs=jobs,
            executor=executor,
            plots=plots,
            progress=progress,
        )
        sections: list[Section] = module.experiments(ctx)
        command = f"polycc reproduce {paper}{' --quick' if quick else ''}"
        closing = getattr(module, "closing", None)
        body = render_markdown(
            paper,
            module.TITLE,
            sections,
            command=command,
            quick=quick,
            runs=ctx.runs,
            preamble=getattr(module, "PREAMBLE", ()),
            closing=closing(sections) if closing else (),
        )
        (tmp / f"REPRODUCTION-{paper}.md").write_text(body, encoding="utf-8")
        (tmp / "reproductions.json").write_text(
            json.dumps(as_json(sections), indent=2) + "\n", encoding="utf-8"
        )
        (tmp / "index.html").write_text(render_index(module.TITLE, sections), encoding="utf-8")
    if doc is not None:
        update_document(doc, paper, body)
    return ReportResult(paper=paper, sections=sections, out=target, doc=doc, runs=ctx.runs)
