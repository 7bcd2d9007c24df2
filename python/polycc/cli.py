"""The `polycc` command line.

Every user error (bad scenario, bad option, unusable output directory, a failing Python fusion
function) prints one message on stderr and exits with status 2 before any output directory is
created. An internal failure exits with status 1 and asks for a bug report; neither prints a
Python traceback. Ctrl-C exits with 130 and SIGTERM with 143 (128 + the signal), after removing
the temporary directory of an unfinished result.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from polycc import _native

if TYPE_CHECKING:
    from polycc.api import RunResult
    from polycc.scenario import Scenario

EXIT_USER = 2
EXIT_INTERNAL = 1
#: 128 + the signal number, as a shell reports a process killed by it.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
#: Longest wait, after Ctrl-C, for an emulated run to remove what it made (it needs well under
#: a second; a wedged run is left to the next run's clean-up of stale namespaces).
CANCEL_WAIT_S = 15.0

T = TypeVar("T")


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so that only cleanup
    (`finally`, `except BaseException`) runs on its way out."""


class UserError(click.ClickException):
    exit_code = EXIT_USER

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"polycc: error: {self.format_message()}", err=True)


class InternalError(click.ClickException):
    exit_code = EXIT_INTERNAL

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"polycc: internal error: {self.format_message()}", err=True)
        click.echo("This is a bug in polycc; please report it with the scenario file.", err=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turns the library's exceptions into CLI errors with the right exit status."""
    from polycc.ccas import UnknownCcaError
    from polycc.demo import DemoError
    from polycc.grid import GridError
    from polycc.outdir import OutputError
    from polycc.scenario import OverrideError

    try:
        yield
    except (
        _native.ScenarioError,
        _native.FusionError,
        GridError,
        OverrideError,
        OutputError,
        DemoError,
        UnknownCcaError,
    ) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")) from None
    except RuntimeError as e:
        raise InternalError(str(e)) from None


def _out_option(default: str | None, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--out",
        "out",
        type=click.Path(file_okay=False, path_type=Path),
        default=default,
        show_default=default is not None,
        help=help,
    )


SCENARIO = click.argument("file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE")
PLOTS = click.option("--plots/--no-plots", default=True, show_default=True, help="Write PNG plots.")


def _executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--executor` and `--ray-address`, for the commands that run many scenarios."""
    f = click.option(
        "--ray-address",
        metavar="ADDR",
        help="With --executor ray: a running Ray cluster to join (host:port of `ray start --head`) "
        "[default: start Ray on this machine].",
    )(f)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help=f"Where the runs execute: threads on this machine, or a Ray cluster ({RAY_INSTALL_HINT}).",
    )(f)


#: Said where the Ray executor is offered.
RAY_INSTALL_HINT = 'needs `pip install "polycc[ray]"`'


@contextmanager
def _chosen_executor(kind: str, address: str | None, jobs: int | None) -> Iterator[Any]:
    """The executor `--executor` names (None: the commands' own local one), shut down after."""
    if kind == "local":
        if address is not None:
            raise UserError("--ray-address: only with --executor ray")
        yield None
        return
    from polycc.ray_executor import RayExecutor, RayUnavailable

    try:
        executor = RayExecutor(address, num_cpus=jobs)
    except RayUnavailable as e:
        raise UserError(str(e)) from None
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f" at {address}" if address else ""
        raise UserError(f"--executor ray: cannot start or join Ray{where}: {e}") from None
    with executor:
        yield executor


BACKEND = click.option(
    "--backend",
    type=click.Choice(["sim", "emu"]),
    default="sim",
    show_default=True,
    help="sim: the simulator. emu: the emulated testbed (real stacks between network namespaces; "
    "needs root; runs one at a time, in real time).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(_native.__version__, prog_name="polycc")
def cli() -> None:
    """polycc: application-aware congestion control and a deterministic packet-level simulator."""


@cli.command()
@SCENARIO
@_out_option(None, "Results directory [default: results/<scenario name>].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), help="Replace the scenario's seed.")
@PLOTS
@BACKEND
def run(file: Path, out: Path | None, seed: int | None, plots: bool, backend: str) -> None:
    """Run one scenario FILE and write its results directory.

    The directory holds scenario.toml (resolved), summary.json, timeseries.parquet, links.parquet,
    PNG plots and report.html.
    """
    from polycc.outdir import atomic_dir, check_output_dir
    from polycc.progress import ProgressLine
    from polycc.scenario import Scenario

    with user_errors():
        scenario = Scenario.from_file(file)
        name = scenario.validate(seed)
        target = out or Path("results") / name
        check_output_dir(target)
        from polycc.results import stream_run

        if backend == "emu":
            from polycc.results import write_run

            with _program_logs(target) as logs:
                result = _emulated(scenario, seed, name, logs)
                write_run(result, target, plots=plots)
        else:
            # The run steps in this thread, a quarter of a second of wall time at a time, so
            # Ctrl-C and SIGTERM are handled between steps; the time series go to the files as
            # they come.
            progress = ProgressLine(f"running {name}")
            try:
                with atomic_dir(target) as tmp:
                    result = stream_run(scenario, tmp, seed=seed, plots=plots, on_progress=progress.update)
            finally:
                progress.close()
    _print_run(result.summary)
    click.echo(f"report: {(target / 'report.html').resolve()}")


@cli.command()
@SCENARIO
@_out_option(None, "Comparison directory [default: results/compare-<scenario name>].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), help="Replace the scenario's seed.")
@PLOTS
def compare(file: Path, out: Path | None, seed: int | None, plots: bool) -> None:
    """Run one scenario FILE in the simulator and in the emulated testbed, side by side.

    Writes sim/ and emu/ (each a run's results directory), compare.json (every flow's and link's
    metrics in both, with the testbed's over the simulator's), compare-flows.png and
    compare-links.png (both runs' time series overlaid) and report.html. The testbed part needs
    root and runs in real time.
    """
    from polycc.api import run_scenario
    from polycc.compare import write_comparison
    from polycc.outdir import check_output_dir
    from polycc.scenario import Scenario

    with user_errors():
        scenario = Scenario.from_file(file)
        name = scenario.validate(seed)
        target = out or Path("results") / f"compare-{name}"
        check_output_dir(target)
        # What the simulator refuses (an outside program's flow, say) is refused before the
        # testbed's real-time run; the testbed refuses what it cannot emulate as it starts.
        scenario.simulation(seed)
        with _program_logs(target) as logs:
            emu = _emulated(scenario, seed, name, logs)
            sim = run_scenario(scenario, seed=seed)
            rows = write_comparison(sim, emu, target, plots=plots)
    click.echo(f"{name}: simulator / testbed")
    for r in rows:
        if r.metric in ("goodput_mbps", "rtt_ms.mean", "utilization"):
            ratio = f", testbed / simulator {r.ratio:.3f}" if r.ratio is not None else ""
            both = f"{_shown(r.sim, r.fraction)} / {_shown(r.emu, r.fraction)}"
            click.echo(f"  {r.kind} {r.id} {r.label}: {both}{ratio}")
    click.echo(f"report: {(target / 'report.html').resolve()}")


def _shown(value: float | None, fraction: bool) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f} %" if fraction else f"{value:.2f}"


@contextmanager
def _program_logs(target: Path) -> Iterator[Path]:
    """A directory for the output of a run's outside programs (`stack = "external"`), moved to
    `target`/external once the run's directory is written; left where it is (the error names
    it) when the run fails, and removed when no program wrote into it."""
    import shutil
    import tempfile

    logs = Path(tempfile.mkdtemp(prefix="polycc-external-"))
    try:
        yield logs
        if any(logs.iterdir()):
            shutil.move(logs, target / "external")
    finally:
        if logs.exists() and not any(logs.iterdir()):
            logs.rmdir()


def _emulated(scenario: Scenario, seed: int | None, name: str, log_dir: Path | None = None) -> RunResult:
    """Runs `scenario` in the emulated testbed with a progress line; Ctrl-C and SIGTERM end it
    after it has removed what it made. Outside programs write their output into `log_dir`."""
    from polycc.api import run_scenario
    from polycc.progress import ProgressLine

    # Emulated time is the wall clock's: the line shows how much of the run has passed.
    total_s = _duration_s(scenario, seed)
    progress = ProgressLine(f"running {name}", kind="emulated")
    try:
        return _cancellable(
            lambda cancel: run_scenario(
                scenario, seed=seed, backend="emu", cancelled=cancel.is_set, log_dir=log_dir
            ),
            tick=lambda: progress.update(min(progress.clock() - progress.t0, total_s), total_s),
        )
    finally:
        progress.close()


def _duration_s(scenario: Scenario, seed: int | None) -> float:
    """The scenario's length in seconds, also when the simulator would refuse one of its flows
    (an outside program, a kernel controller it has no model of): the length does not depend on
    the flows, so it is read with one plain flow in their place."""
    try:
        return scenario.simulation(seed).duration_s
    except _native.ScenarioError:
        doc = scenario.to_dict()
        doc["flows"] = [{"id": "length", "rtt": "10ms"}]
        return scenario.with_document(doc).simulation(seed).duration_s


def _cancellable(fn: Callable[[threading.Event], T], tick: Callable[[], None] | None = None) -> T:
    """Runs `fn(cancel)` in a worker thread while this one waits, so that Ctrl-C and SIGTERM are
    handled at once; on either, sets `cancel` and waits (up to CANCEL_WAIT_S) for `fn` to return:
    an emulated run must remove its namespaces before the process exits. `tick()` is called
    every quarter second of the wait (a progress line)."""
    box: dict[str, Any] = {}
    cancel = threading.Event()
    # Waited on instead of `Thread.join`: a join interrupted by Ctrl-C can later report the
    # thread as finished while it still runs (CPython gh-90882).
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn(cancel)
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, name="polycc-run", daemon=True).start()
    try:
        while not done.wait(0.25):
            if tick is not None:
                tick()
    except BaseException:
        cancel.set()
        done.wait(CANCEL_WAIT_S)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _print_run(summary: dict[str, Any]) -> None:
    click.echo(
        f"{summary.get('name')}: {summary.get('duration_s')} s "
        f"{'emulated' if summary.get('backend') == 'emu' else 'simulated'} "
        f"in {summary.get('wall_s', 0):.2f} s, "
        f"Jain's index {summary.get('jain_index', float('nan')):.3f}"
    )
    for f in summary.get("flows", []):
        rtt = f.get("rtt_ms", {})
        click.echo(
            f"  flow {f.get('id')} ({f.get('cca')}): goodput {f.get('goodput_mbps', 0):.2f} Mbit/s, "
            f"RTT mean {rtt.get('mean', float('nan')):.1f} ms p95 {rtt.get('p95', float('nan')):.1f} ms, "
            f"loss {100 * f.get('loss_rate', 0):.2f} %"
        )
    for lk in summary.get("links", []):
        click.echo(
            f"  link {lk.get('id')}: utilisation {100 * lk.get('utilization', 0):.1f} %, "
            f"drops {lk.get('drops')}, "
            f"queue delay mean {lk.get('queue_delay_ms', {}).get('mean', float('nan')):.1f} ms"
        )


@cli.command()
@SCENARIO
@click.option(
    "--grid",
    "grid",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Values to try for a key path (links.0.rate, flows.0.cca, flows.*.rtt, duration, seed). "
    "Repeat for a cartesian product. Values are TOML literals when they parse, else strings.",
)
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="Seeds per point.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores].")
@_out_option(None, "Sweep directory [default: results/sweep-<scenario name>].")
@PLOTS
@BACKEND
@_executor_options
def sweep(
    file: Path,
    grid: tuple[str, ...],
    seeds: int,
    jobs: int | None,
    out: Path | None,
    plots: bool,
    backend: str,
    executor: str,
    ray_address: str | None,
) -> None:
    """Run FILE over a grid of parameter values × seeds, in parallel.

    Writes DIR/results.parquet (one row per run: run_id, the varied keys, seed, summary metrics),
    DIR/index.html and DIR/runs/<run-id>/ for each run.
    """
    from polycc.grid import GridError, parse_grid, plan
    from polycc.outdir import check_output_dir
    from polycc.scenario import Scenario

    with user_errors():
        scenario = Scenario.from_file(file)
        try:
            parsed = parse_grid(grid)
        except GridError as e:
            raise GridError(f"{file}: {e}") from None
        tasks = plan(scenario, parsed, seeds=seeds)  # validates every point before anything runs
        target = out or Path("results") / f"sweep-{scenario.validate()}"
        check_output_dir(target)
        click.echo(f"{len(tasks)} runs", err=True)
        from polycc.sweeps import sweep as run_sweep

        if backend == "emu" and executor != "local":
            raise UserError("--executor ray: emulated runs need this machine's namespaces; use --backend sim")
        with _chosen_executor(executor, ray_address, jobs) as chosen:
            df = run_sweep(
                scenario,
                parsed,
                seeds=seeds,
                jobs=jobs,
                out_dir=target,
                plots=plots,
                progress=True,
                backend=backend,
                executor=chosen,
            )
    failed = df[df["status"] != "ok"]
    for rec in failed.to_dict("records"):
        click.echo(f"polycc: run {rec['run_id']} failed: {rec['error']}", err=True)
    click.echo(f"{len(df) - len(failed)}/{len(df)} runs ok")
    click.echo(f"index: {(target / 'index.html').resolve()}")
    click.echo(f"results: {(target / 'results.parquet').resolve()}")
    if len(failed):
        sys.exit(EXIT_INTERNAL)


def _names(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UserError(f"{flag}: {text!r}: an empty name; write names separated by commas")
    return names


@cli.command()
@click.option(
    "--ccas",
    metavar="A,B,...",
    help="Candidate controllers, comma-separated [default: cubic,newreno,bbr,bbr3,copa,vegas,pcc-vivace].",
)
@click.option(
    "--seeds", type=click.IntRange(min=1), default=5, show_default=True, help="Seeds per scenario and CCA."
)
@BACKEND
@_out_option("results/suite", "Leaderboard directory.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores].")
@_executor_options
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Suite directory [default: scenarios/suite of this checkout].",
)
@click.option(
    "--scenarios", "only", metavar="NAME,...", help="Run only these scenarios (names or file stems)."
)
@click.option(
    "--public-traces",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory of the public traces that extra rows name "
    "[default: ../shared/traces beside the checkout].",
)
@click.option(
    "--summary",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the leaderboard's tables as Markdown to this file.",
)
def suite(
    ccas: str | None,
    seeds: int,
    backend: str,
    out: Path,
    jobs: int | None,
    executor: str,
    ray_address: str | None,
    directory: Path | None,
    only: str | None,
    public_traces: Path | None,
    summary: Path | None,
) -> None:
    """Run every CCA × suite scenario × seed and write a leaderboard.

    Each scenario of scenarios/suite/ declares its metric in a [suite] table (README "Scenario
    suite"). Writes DIR/results.parquet (one row per run: scenario, half, cca, seed, value,
    score, ...), DIR/scores.parquet (per scenario and CCA: score relative to the best with its
    95 % interval, rank), DIR/ranks.parquet and DIR/index.html with a throughput-vs-delay
    scatter per scenario.
    """
    from polycc.ccas import UnknownCcaError
    from polycc.outdir import check_output_dir
    from polycc.suite import (
        DEFAULT_CCAS,
        SuiteError,
        check_ccas,
        emulator_refusals,
        is_root,
        load_suite,
        run_suite,
        summary_markdown,
    )

    chosen_ccas = _names(ccas, "--ccas") or list(DEFAULT_CCAS)
    wanted = _names(only, "--scenarios")
    with user_errors():
        try:
            check_ccas(chosen_ccas)
        except UnknownCcaError as e:
            raise UserError(f"--ccas: {e}") from None
        except SuiteError as e:
            raise UserError(str(e)) from None
        if backend == "emu":
            if executor != "local":
                raise UserError(
                    "--executor ray: emulated runs need this machine's namespaces; use --backend sim"
                )
            if not is_root():
                raise UserError("--backend emu: the emulated testbed needs root (network namespaces)")
        try:
            scenarios, notes = load_suite(directory, public_traces=public_traces)
        except SuiteError as e:
            raise UserError(str(e)) from None
        for note in notes:
            click.echo(f"note: {note}", err=True)
        if wanted is not None:
            known = {s.name: s for s in scenarios} | {s.path.stem: s for s in scenarios}
            missing = [w for w in wanted if w not in known]
            if missing:
                raise UserError(
                    f"--scenarios: no suite scenario {', '.join(missing)}; known: "
                    + ", ".join(s.path.stem for s in scenarios)
                )
            scenarios = list({known[w].name: known[w] for w in wanted}.values())
        if backend == "emu":
            refused = emulator_refusals(scenarios, chosen_ccas)
            for name, why in refused.items():
                click.echo(f"note: {name}: not run in the testbed: {why}", err=True)
            scenarios = [s for s in scenarios if s.name not in refused]
            if not scenarios:
                raise UserError("--backend emu: the testbed can run none of the chosen scenarios (see above)")
        check_output_dir(out)
        if summary is not None and summary.is_dir():
            raise UserError(f"--summary: {summary} is a directory")
        with _chosen_executor(executor, ray_address, jobs) as chosen:
            runs, scores = run_suite(
                scenarios,
                chosen_ccas,
                seeds=seeds,
                out_dir=out,
                jobs=jobs,
                executor=chosen,
                backend=backend,
                progress=True,
                on_planned=lambda n: click.echo(
                    f"{n} runs: {len(scenarios)} scenarios × {len(chosen_ccas)} CCAs × {seeds} seeds",
                    err=True,
                ),
            )
        if summary is not None:
            summary.write_text(summary_markdown(scores, chosen_ccas), encoding="utf-8")
    failed = runs[runs.status != "ok"]
    for rec in failed.to_dict("records"):
        click.echo(
            f"polycc: {rec['scenario']} {rec['cca']} seed {rec['seed']} failed: {rec['error']}", err=True
        )
    click.echo(f"{len(runs) - len(failed)}/{len(runs)} runs ok")
    click.echo(f"leaderboard: {(out / 'index.html').resolve()}")
    if len(failed):
        sys.exit(EXIT_INTERNAL)


@cli.command()
@_out_option("results/demo", "Output directory.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores].")
@PLOTS
def demo(out: Path, jobs: int | None, plots: bool) -> None:
    """Run the demo scenarios (scenarios/demo/*.toml) and write an index page linking their reports."""
    from polycc.demo import demo_dir, describe, load_demo, run_demo

    with user_errors():
        directory = demo_dir()
        scenarios = load_demo(directory)
        for s in scenarios:
            for note in s.notes:
                click.echo(f"note: {Path(s.origin).name}: {note}", err=True)
        click.echo(f"running {len(scenarios)} demo scenarios from {directory}", err=True)
        result = run_demo(
            out, directory=directory, jobs=jobs, plots=plots, on_done=lambda o: click.echo(describe(o))
        )
    if result.failed:
        click.echo(f"polycc: {len(result.failed)} demo run(s) failed; see above", err=True)
    click.echo(f"report: {result.index.resolve()}")
    if result.failed:
        sys.exit(EXIT_INTERNAL)


@cli.command()
@click.argument("paper", metavar="PAPER")
@click.option(
    "--quick", is_flag=True, help="Shortened versions (seconds, for tests); REPRODUCTION.md untouched."
)
@_out_option(None, "Output directory [default: results/reproduce-<paper>[-quick]].")
@click.option(
    "--doc",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Document whose section to regenerate "
    "[default: REPRODUCTION.md of the checkout; none with --quick].",
)
@click.option("--no-doc", is_flag=True, help="Do not touch any document.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Parallel runs [default: all cores].")
@PLOTS
@_executor_options
def reproduce(
    paper: str,
    quick: bool,
    out: Path | None,
    doc: Path | None,
    no_doc: bool,
    jobs: int | None,
    plots: bool,
    executor: str,
    ray_address: str | None,
) -> None:
    """Reproduce PAPER's published results in the simulator (papers: pcc, janus, polycc, pibes).

    Runs the scenarios under scenarios/papers/PAPER/, checks the paper's claims, writes
    DIR/index.html, DIR/reproductions.json, DIR/REPRODUCTION-PAPER.md and one results directory
    per experiment, and regenerates PAPER's section of REPRODUCTION.md.
    """
    from polycc.reproduce import ReproduceError, repo_root
    from polycc.reproduce import reproduce as run_reproduce

    if doc is None and not quick:
        doc = repo_root() / "REPRODUCTION.md"
    if no_doc:
        doc = None
    with user_errors(), _chosen_executor(executor, ray_address, jobs) as chosen:
        try:
            result = run_reproduce(
                paper, quick=quick, out=out, doc=doc, jobs=jobs, plots=plots, progress=True, executor=chosen
            )
        except ReproduceError as e:
            raise UserError(str(e)) from None
    for r in result.reproductions:
        click.echo(f"  {'ok  ' if r.holds else 'FAIL'} {r.id} {r.figure}: paper {r.paper}, ours {r.ours}")
    claims = [r for r in result.reproductions if not r.knob]
    knobbed = [r for r in result.reproductions if r.knob]
    held = sum(r.holds for r in claims)
    extra = f"; {sum(r.holds for r in knobbed)}/{len(knobbed)} rows with a knob of ours" if knobbed else ""
    click.echo(f"{held}/{len(claims)} claims hold ({result.runs} runs{extra})")
    if quick and held < len(claims):
        click.echo(
            "note: --quick runs shortened experiments (seconds instead of minutes, fewer seeds) to "
            "check that the pipeline works; some claims are expected to fail in quick mode. "
            f"Run `polycc reproduce {paper}` without --quick to check the claims.",
            err=True,
        )
    if result.doc is not None:
        click.echo(f"updated: {result.doc}")
    click.echo(f"index: {(result.out / 'index.html').resolve()}")


@cli.group()
def validate() -> None:
    """Check the simulator against a reference."""


@contextmanager
def _kernel_table_errors(document: Path) -> Iterator[None]:
    """`--kernel-from-doc`: a table that cannot serve is the user's error, named by its file."""
    from polycc.validate_linux import KernelTableError

    try:
        yield
    except KernelTableError as e:
        raise UserError(f"{document}: {e}") from None


@validate.command("linux")
@click.option("--quick", is_flag=True, help="Four rows, 5 s each, instead of the full grid.")
@click.option("--duration", help="Run length [default: 20s; 5s with --quick].")
@click.option(
    "--lossy-seeds",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Seeds of rows with random loss.",
)
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("results/validate-linux/cache.jsonl"),
    show_default=True,
    help="Kernel runs by scenario, seed and kernel release; an interrupted grid resumes.",
)
@click.option(
    "--kernel-from-doc",
    is_flag=True,
    help="Take the kernel's numbers from the table in VALIDATION.md instead of running the kernel "
    "(the simulator is judged again against the same kernel runs; no root needed).",
)
@click.option(
    "--markdown",
    "markdown_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the table to this file.",
)
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every row with both sides' numbers as JSON.",
)
@click.option(
    "--doc/--no-doc",
    default=None,
    help="Regenerate VALIDATION.md's Linux section [default: yes for the full grid].",
)
def validate_linux(
    quick: bool,
    duration: str | None,
    lossy_seeds: int,
    cache: Path,
    kernel_from_doc: bool,
    markdown_out: Path | None,
    json_out: Path | None,
    doc: bool | None,
) -> None:
    """The simulator's Linux TCP model (stack = "linux") against the real kernel in the emulated
    testbed (needs root), on a grid of dumbbells: cubic, bbr, reno × 1, 2 flows × 10, 50 Mbit/s
    × 20, 80 ms × 0.25, 1, 4 BDP × 0, 0.5 % loss. Kernel runs are real time (the full grid takes
    hours) and cached."""
    from polycc import validate_linux as vl

    rows = vl.QUICK if quick else vl.grid()
    duration = duration or ("5s" if quick else "20s")

    def progress(i: int, n: int, row: vl.Row) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r[{i + 1}/{n}] {row.label():<48}")
            sys.stderr.flush()

    from polycc.reproduce import repo_root

    document = repo_root() / "VALIDATION.md"
    kernel_table = None
    with user_errors(), _kernel_table_errors(document):
        if kernel_from_doc:
            kernel_table = vl.kernel_from_table(document.read_text(encoding="utf-8"), lossy_seeds=lossy_seeds)
        results = _cancellable(
            lambda c: vl.compare(
                rows,
                duration=duration,
                lossy_seeds=lossy_seeds,
                cache=cache,
                kernel_table=kernel_table,
                progress=progress,
                cancelled=c.is_set,
            )
        )
    table = vl.markdown(
        results,
        duration=duration,
        lossy_seeds=lossy_seeds,
        kernel_release=kernel_table.release if kernel_table is not None else None,
    )
    click.echo(table)
    if markdown_out is not None:
        markdown_out.write_text(table, encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps(vl.to_json(results), indent=2) + "\n", encoding="utf-8")
    if doc if doc is not None else not quick:
        with user_errors():
            vl.write_section(document, table)
        click.echo(f"updated: {document}")


@cli.command()
@click.argument("name", required=False, metavar="[NAME]")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: name, summary and declared parameters.")
def ccas(name: str | None, as_json: bool) -> None:
    """List the registered congestion controllers and policies, or show NAME's parameters."""
    names = [name] if name is not None else _native.cca_names()
    if as_json:
        described = [_cca_json(n) for n in names]
        click.echo(json.dumps(described[0] if name is not None else described, indent=2, ensure_ascii=False))
        return
    if name is not None:
        _show_cca(name)
        return
    width = max((len(n) for n in names), default=0)
    for n in names:
        click.echo(f"{n:<{width}}  {_native.cca_summary(n) or ''}")


def _cca_json(name: str) -> dict[str, Any]:
    from polycc.ccas import cca_needs_video, cca_parameters, cca_summary

    with user_errors():
        return {
            "name": name,
            "summary": cca_summary(name),
            "needs_video": cca_needs_video(name),
            "parameters": [p.to_json() for p in cca_parameters(name)],
        }


def _show_cca(name: str) -> None:
    """One controller: summary, then per parameter its type, range, default with its source,
    and what it does."""
    from polycc.ccas import cca_needs_video, cca_parameters, cca_summary

    with user_errors():
        summary = cca_summary(name)
        params = cca_parameters(name)
        needs_video = cca_needs_video(name)
    click.echo(f"{name}: {summary}")
    if needs_video:
        click.echo('needs: video traffic (traffic = { kind = "video" }); other traffic is refused')
    if not params:
        click.echo("parameters: none")
    else:
        click.echo("parameters:")
        width = max(len(p.name) for p in params)
        for p in params:
            bounds = f" in {p.range_text}" if p.range_text is not None else ""
            default = f"default {p.default_text}" if p.default is not None else f"if absent: {p.absent}"
            click.echo(f"  {p.name:<{width}}  {p.type}{bounds}; {default} — {p.source}")
            click.echo(f"  {'':<{width}}  {p.description}")
    click.echo(f'use: cca = {{ name = "{name}", <parameter> = <value>, ... }}')


@cli.command()
@SCENARIO
def check(file: Path) -> None:
    """Validate a scenario FILE without running it."""
    from polycc.scenario import Scenario
    from polycc.suite import SuiteError, read_suite_table, suite_table_of

    with user_errors():
        name = Scenario.from_file(file).validate()
        doc = suite_table_of(file)
        if doc is not None:  # a suite scenario: its [suite] table too
            try:
                read_suite_table(file, doc)
            except SuiteError as e:
                raise UserError(str(e)) from None
    click.echo(f"{file}: ok ({name})")


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> NoReturn:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        # Not standalone: click would turn Ctrl-C into "Aborted!" with status 1.
        code = cli.main(args=argv, prog_name="polycc", standalone_mode=False)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except click.exceptions.Abort as e:
        if isinstance(e.__cause__, KeyboardInterrupt):
            click.echo("polycc: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        click.echo("polycc: aborted", err=True)
        sys.exit(EXIT_INTERNAL)
    except KeyboardInterrupt:
        click.echo("\npolycc: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Terminated:
        click.echo("polycc: terminated", err=True)
        sys.exit(EXIT_TERMINATED)
    except Exception as e:
        # A bug, not a user error: say so in one line; POLYCC_DEBUG=1 shows the traceback.
        if os.environ.get("POLYCC_DEBUG"):
            raise
        InternalError(f"{type(e).__name__}: {e} (set POLYCC_DEBUG=1 for the traceback)").show()
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
