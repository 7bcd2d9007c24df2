"""What the real-stack sections of REPRODUCTION.md share (`janus_kernel`, `real_quic`): a
scenario file run in the simulator and in the emulated testbed, and the command that prints a
section and writes it between its markers."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polycc.reproduce.common import update_document

if TYPE_CHECKING:
    from polycc.api import RunResult


def run_file(path: Path, overrides: Mapping[str, Any], backend: str, *, host_noise: bool = True) -> RunResult:
    """One run of a scenario file with overrides; `host_noise=False` drops the flows'
    `send_jitter` (the simulator's stand-in for a real host's send-time noise, which the
    testbed's hosts bring themselves and the kernel's TCP does not take)."""
    from polycc.api import run_scenario
    from polycc.scenario import Scenario

    scenario = Scenario.from_file(path)
    if not host_noise:
        doc = scenario.to_dict()
        for f in doc.get("flows", []):
            f.pop("send_jitter", None)
        scenario = scenario.with_document(doc)
    return run_scenario(scenario.with_overrides(dict(overrides)), backend=backend)


def sim_and_testbed(
    path: Path, overrides: Mapping[str, Any], real: Mapping[str, Any] | None = None, *, sim_noise: bool = True
) -> tuple[RunResult, RunResult]:
    """The simulator's run and the testbed's, the testbed's with `real` overrides on top (the
    stacks that carry the flows there)."""
    sim = run_file(path, overrides, "sim", host_noise=sim_noise)
    emu = run_file(path, {**overrides, **(real or {})}, "emu", host_noise=False)
    return sim, emu


def section_main(
    description: str, section: str, render: Callable[[Path], str], argv: list[str] | None
) -> None:
    """The command of a real-stack section: prints it, and with --doc writes it into
    REPRODUCTION.md between its markers. `render` gets `scenarios/papers/`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--doc", action="store_true", help="write the section into REPRODUCTION.md")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="repository root [default: .]")
    args = parser.parse_args(argv)
    body = render(args.repo / "scenarios" / "papers")
    print(body)
    if args.doc:
        update_document(args.repo / "REPRODUCTION.md", section, body)
