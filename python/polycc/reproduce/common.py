"""What every paper reproduction shares: the record of one claim checked against the paper, the
sections of a paper's report, the context that runs scenarios into one output directory, and the
regeneration of the paper's section of REPRODUCTION.md between its markers.

A paper module (e.g. `polycc.reproduce.pcc`) only says which scenarios to run and how to turn
their results into `Section`s; everything written into REPRODUCTION.md is generated from those
results, never typed.
"""

from __future__ import annotations

import html
import itertools
import math
import statistics
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

    from polycc.api import RunResult
    from polycc.executors import Executor
    from polycc.reproduce.scenario_file import ScenarioFile


class ReproduceError(ValueError):
    """A reproduction cannot run: unknown paper, missing scenario, unusable document."""


@dataclass(frozen=True)
class Reproduction:
    """One published claim checked in the simulator.

    `paper` and `ours` are the numbers as people read them ("> 95 %", "97.2 %"); `holds` says
    whether the paper's *qualitative* claim holds in our run, judged by the margin stated in
    `criterion` (fixed with the claim, never moved to fit a result); `why` explains a gap between
    the paper's number and ours.
    """

    id: str
    figure: str
    claim: str
    paper: str
    ours: str
    holds: bool
    criterion: str
    why: str = ""
    #: The measured number behind `ours` (for tests and reproductions.json).
    value: float = math.nan
    #: The per-seed values `value` summarises (empty for a claim measured on one run).
    seeds: tuple[float, ...] = ()
    #: Non-empty for a second, labelled row of a claim run with a knob we added (not the paper's
    #: setup): the knob, e.g. "U[0, 1 ms] receive-timestamp noise". Not counted in the summary.
    knob: str = ""

    @classmethod
    def judge(
        cls,
        id: str,
        figure: str,
        claim: str,
        paper: str,
        values: Sequence[float],
        criterion: Criterion,
        show: Callable[[float], str],
        why: str = "",
        knob: str = "",
    ) -> Reproduction:
        """A claim measured once per seed: `ours` is the median with its 95 % interval (or the
        modes, see `SeedSummary`), judged by `criterion` as `SeedSummary.holds` says."""
        s = SeedSummary.of(values)
        return cls(
            id,
            figure,
            claim,
            paper,
            s.text(show),
            s.holds(criterion),
            criterion.text(show),
            why,
            s.median,
            tuple(float(v) for v in values),
            knob,
        )

    @classmethod
    def at_least(
        cls,
        id: str,
        figure: str,
        claim: str,
        paper: str,
        value: float,
        minimum: float,
        show: Callable[[float], str],
        why: str = "",
    ) -> Reproduction:
        """The claim holds when `value` >= `minimum` (NaN never holds)."""
        holds = not math.isnan(value) and value >= minimum
        return cls(id, figure, claim, paper, show(value), holds, f">= {show(minimum)}", why, value)

    @classmethod
    def within(
        cls,
        id: str,
        figure: str,
        claim: str,
        paper: str,
        value: float,
        lo: float,
        hi: float,
        show: Callable[[float], str],
        why: str = "",
    ) -> Reproduction:
        """The claim holds when `lo` <= `value` <= `hi` (NaN never holds)."""
        holds = not math.isnan(value) and lo <= value <= hi
        return cls(id, figure, claim, paper, show(value), holds, f"{show(lo)} .. {show(hi)}", why, value)

    @classmethod
    def at_most(
        cls,
        id: str,
        figure: str,
        claim: str,
        paper: str,
        value: float,
        maximum: float,
        show: Callable[[float], str],
        why: str = "",
    ) -> Reproduction:
        """The claim holds when `value` <= `maximum` (NaN never holds)."""
        holds = not math.isnan(value) and value <= maximum
        return cls(id, figure, claim, paper, show(value), holds, f"<= {show(maximum)}", why, value)


# ---------------------------------------------------------------------------------------------
# Criteria at the papers' numbers (issue 19): each kind says whether a value holds and renders its
# own text for the table, with the paper's number and the tolerance.


class Criterion(ABC):
    """What a claim's value must satisfy. `paper_number=False` marks a criterion for a claim whose
    paper gives no number (the text says so; the section justifies the tolerance)."""

    paper_number: bool

    @abstractmethod
    def holds(self, value: float) -> bool:
        """Whether `value` satisfies the criterion (NaN never does)."""

    @abstractmethod
    def bounds_text(self, show: Callable[[float], str]) -> str:
        """The criterion itself, e.g. "63.0 % .. 83.0 %"."""

    def text(self, show: Callable[[float], str]) -> str:
        return self.bounds_text(show) + ("" if self.paper_number else "; no number in the paper")


@dataclass(frozen=True)
class Band(Criterion):
    """About `paper`: `lo` <= value <= `hi` (either side may be open: ±inf)."""

    paper: float
    lo: float
    hi: float
    paper_number: bool = True

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and self.lo <= value <= self.hi

    def range_text(self, show: Callable[[float], str]) -> str:
        if math.isinf(self.lo):
            return f"<= {show(self.hi)}"
        if math.isinf(self.hi):
            return f">= {show(self.lo)}"
        return f"{show(self.lo)} .. {show(self.hi)}"

    def bounds_text(self, show: Callable[[float], str]) -> str:
        return f"≈ {show(self.paper)}: {self.range_text(show)}"


class WithinPoints(Band):
    """A share within ± `points` percentage points of the paper's share (fractions, 0.73 = 73 %);
    a share cannot be negative, so the band starts at 0 at the lowest."""

    def __init__(self, paper: float, points: float, paper_number: bool = True) -> None:
        lo = paper - points / 100
        super().__init__(paper, max(lo, 0.0) if paper >= 0 else lo, paper + points / 100, paper_number)

    @property
    def points(self) -> float:
        return round(100 * (self.hi - self.paper), 6)

    def bounds_text(self, show: Callable[[float], str]) -> str:
        return f"{show(self.paper)} ± {num(self.points)} points: {self.range_text(show)}"


class WithinFactor(Band):
    """A ratio within a factor `factor` of the paper's, either way: paper / factor .. paper · factor."""

    def __init__(self, paper: float, factor: float, paper_number: bool = True) -> None:
        if factor < 1:
            raise ValueError(f"WithinFactor: factor {factor} < 1")
        super().__init__(paper, paper / factor, paper * factor, paper_number)

    @property
    def factor(self) -> float:
        return round(self.hi / self.paper, 6)

    def bounds_text(self, show: Callable[[float], str]) -> str:
        return f"{show(self.paper)} within ×{num(self.factor)}: {show(self.lo)} .. {show(self.hi)}"


@dataclass(frozen=True)
class RangeWithinFactor(Criterion):
    """A value the paper prints as a range ("1.82 to 10.35 times"): the range widened by `factor`
    at each end, `paper_lo` / factor .. `paper_hi` · factor."""

    paper_lo: float
    paper_hi: float
    factor: float
    paper_number: bool = True

    def __post_init__(self) -> None:
        if self.factor < 1 or not self.paper_lo <= self.paper_hi:
            raise ValueError(f"RangeWithinFactor: {self.paper_lo} .. {self.paper_hi} within ×{self.factor}")

    @property
    def lo(self) -> float:
        return self.paper_lo / self.factor

    @property
    def hi(self) -> float:
        return self.paper_hi * self.factor

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and self.lo <= value <= self.hi

    def bounds_text(self, show: Callable[[float], str]) -> str:
        return (
            f"{show(self.paper_lo)} .. {show(self.paper_hi)} widened ×{num(self.factor)}:"
            f" {show(self.lo)} .. {show(self.hi)}"
        )


@dataclass(frozen=True)
class SameSide(Criterion):
    """ "Better than" / "lower than": strictly on the paper's side of `pivot` (1 for a ratio, 0 for
    a difference)."""

    pivot: float
    above: bool
    paper_number: bool = True

    def holds(self, value: float) -> bool:
        return not math.isnan(value) and (value > self.pivot if self.above else value < self.pivot)

    def bounds_text(self, show: Callable[[float], str]) -> str:
        return f"{'>' if self.above else '<'} {show(self.pivot)}"


class Bound(Band):
    """A one-sided band: value >= `lo` or value <= `hi`, the other side open; `paper` is the
    paper's number the bound derives from (NaN: none)."""

    def bounds_text(self, show: Callable[[float], str]) -> str:
        ref = "" if math.isnan(self.paper) else f"paper {show(self.paper)}: "
        return ref + self.range_text(show)


class AtLeast(Bound):
    """value >= `minimum`."""

    def __init__(self, minimum: float, paper: float = math.nan, paper_number: bool = True) -> None:
        super().__init__(paper, minimum, math.inf, paper_number)


class AtMost(Bound):
    """value <= `maximum`."""

    def __init__(self, maximum: float, paper: float = math.nan, paper_number: bool = True) -> None:
        super().__init__(paper, -math.inf, maximum, paper_number)


# ---------------------------------------------------------------------------------------------
# A claim over seeds: the median with a bootstrap interval, and the modes of a bimodal outcome.

# Issue 19's rules, fixed before the runs and shared by every section.
#: Scenario seeds per claim (issue 19: at least 5; the quick versions run QUICK_SEEDS).
SEEDS, QUICK_SEEDS = 5, 2
#: A ratio the paper prints ("10×") holds within this factor of it either way, and a range it
#: prints is widened by this factor at each end: the papers read their numbers off single
#: testbed runs.
RATIO_FACTOR = 1.5
#: A share the paper prints as a measured value ("74 %") holds within ± this many points.
SHARE_POINTS = 10.0
#: A share the paper prints as a bound ("> 95 %", a target "satisfied") holds at most this many
#: points below it: our goodput counts application payload only (1448 of 1500 bytes, at most
#: 96.5 % of the link rate), where the papers' throughput was what their senders counted.
BOUND_POINTS = 4.0

#: The column of a run's bytes in flight counted as whole IP packets, the unit the links carry
#: and a BDP is counted in (README, "Flows"). Each stack's own `inflight_bytes` counts what its
#: real stack counts: the kernel's TCP payload (1448 of each 1500 bytes here), QUIC's UDP
#: payload (1472), polycc's UDP sender the whole packet.
WIRE_INFLIGHT = "cc_inflight_wire_bytes"


def inflight_on_the_wire(flows: pd.DataFrame) -> str:
    """The column of `flows` (a run's time series) holding bytes in flight as whole packets on
    the wire: `WIRE_INFLIGHT` where the run wrote it (the simulator always; the testbed for
    kernel and QUIC sockets), else `inflight_bytes` (polycc's UDP sender counts whole packets)."""
    return WIRE_INFLIGHT if WIRE_INFLIGHT in flows.columns else "inflight_bytes"


#: The interval's confidence, and the bootstrap's resamples (percentile method, fixed RNG seed so
#: the document regenerates identically from the same runs).
CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 19
#: Two modes when the largest gap between the sorted per-seed values is more than this many times
#: the range of either side of it ...
MODE_GAP_OVER_SPREAD = 2.0
#: ... and more than this share of the largest |value| (so equal values split by a rounding-size
#: gap stay one mode).
MODE_GAP_MIN_SHARE = 0.1
#: A claim holds when the modes whose median meets the criterion cover at least this share of runs.
MODE_COVERAGE = 0.8
#: Fewer runs than this are never split into modes (two or three values say nothing of clusters).
MODE_MIN_RUNS = 4


def all_alike(values: Sequence[float]) -> bool:
    """Whether several seeds gave one and the same value (the runs draw nothing from the seed)."""
    return len(values) > 1 and not any(math.isnan(v) for v in values) and len(set(values)) == 1


def judge_over_seeds(
    id: str,
    figure: str,
    claim: str,
    paper: str,
    values: Sequence[float],
    criterion: Criterion,
    show: Callable[[float], str],
    why: str = "",
    knob: str = "",
) -> Reproduction:
    """`Reproduction.judge` over the per-seed `values`; where every seed gave the same value,
    "ours" says the outcome is deterministic instead of showing an interval of identical runs."""
    r = Reproduction.judge(id, figure, claim, paper, values, criterion, show, why, knob)
    if all_alike(values):
        r = replace(r, ours=f"{show(values[0])} (deterministic: all {len(values)} seeds alike)")
    return r


def changed_verdicts(
    sections: Sequence[Section],
    old_criteria: Mapping[str, tuple[str, bool]],
    *,
    before: str,
    change_why: Mapping[str, str] | None = None,
    new_why: Mapping[str, str] | None = None,
) -> list[str]:
    """Markdown closing a section (issue 19): the claims whose verdict changed from before, each
    with its old criterion (`old_criteria`: id -> (criterion, held)), the result now and, given
    `change_why`, why; then the claims new with issue 19. `before` says how they were run then."""
    reps = [r for s in sections for r in s.reproductions if not r.knob]
    items = []
    for r in reps:
        if r.id not in old_criteria or old_criteria[r.id][1] == r.holds:
            continue
        old, held = old_criteria[r.id]
        now = "holds" if r.holds else "does not hold"
        why = "" if change_why is None else f" {change_why.get(r.id, 'Cause not investigated.')}"
        items.append(
            f"- **{r.id}** {'held' if held else 'failed'} before issue 19 ({old}) and {now} now: "
            f"{r.ours} against {r.criterion}.{why}"
        )
    for r in reps:
        if r.id not in old_criteria:
            now = "holds" if r.holds else "does not hold"
            why = f" {new_why[r.id]}" if new_why and r.id in new_why else ""
            items.append(f"- **{r.id}** is new with issue 19 and {now}: {r.ours} against {r.criterion}.{why}")
    held_before = sum(h for _, h in old_criteria.values())
    head = (
        f"**Verdicts changed by issue 19** (before: {held_before} of {len(old_criteria)} held, "
        f"{before})" + (":" if items else ": none.")
    )
    return [head, "", *items] if items else [head]


def median(xs: Sequence[float]) -> float:
    """The median of the values of `xs` that are not NaN (infinite ones count); NaN when none."""
    kept = [float(x) for x in xs if not math.isnan(x)]
    return statistics.median(kept) if kept else math.nan


def farthest_from_one(xs: Sequence[float]) -> float:
    """The ratio of `xs` farthest from 1 by factor (0 and ∞ count as farthest; NaN if any is)."""
    if any(math.isnan(x) for x in xs):
        return math.nan
    return max(xs, key=lambda x: math.inf if x <= 0 or math.isinf(x) else abs(math.log(x)))


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The bootstrap percentile interval of the median of `values` (NaN, NaN when empty; the value
    itself for one)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if not v.size:
        return math.nan, math.nan
    if v.size == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    samples = np.sort(rng.choice(v, size=(BOOTSTRAP_RESAMPLES, v.size), replace=True), axis=1)
    # The median of each sorted resample; the mean of two infinite middle values is infinite (not
    # the NaN numpy's median gives for inf + inf).
    lo_mid, hi_mid = samples[:, (v.size - 1) // 2], samples[:, v.size // 2]
    medians = np.where(lo_mid == hi_mid, lo_mid, (lo_mid + hi_mid) / 2)
    tail = 100 * (1 - confidence) / 2
    # With infinite values (a ratio over zero, a level never reached) interpolating between
    # percentiles would give inf − inf; the nearest resample's median is taken instead.
    method: Literal["linear", "nearest"] = "linear" if np.isfinite(v).all() else "nearest"
    return (
        float(np.percentile(medians, tail, method=method)),
        float(np.percentile(medians, 100 - tail, method=method)),
    )


def split_modes(values: Sequence[float]) -> list[list[float]]:
    """The per-seed values as one mode, or two when they fall in two clusters: at least
    MODE_MIN_RUNS values, and the largest gap between the sorted values exceeds
    MODE_GAP_OVER_SPREAD × the range of each side and MODE_GAP_MIN_SHARE × the largest |value|.
    Each mode sorted, lower first; infinite values (never NaN) take part as the largest."""
    v = sorted(float(x) for x in values)
    if len(v) < MODE_MIN_RUNS:
        return [v]
    gaps = [b - a for a, b in itertools.pairwise(v)]
    i = max(range(len(gaps)), key=gaps.__getitem__)
    lo, hi = v[: i + 1], v[i + 1 :]

    def side_range(side: list[float]) -> float:
        # Equal values span 0, infinite ones included (inf − inf would be NaN).
        return 0.0 if side[-1] == side[0] else side[-1] - side[0]

    spread = max(side_range(lo), side_range(hi))
    gap = gaps[i]
    # An infinite value (a ratio over zero, a level never reached) is measured against the
    # largest finite one.
    largest = max((abs(x) for x in v if math.isfinite(x)), default=0.0)
    if gap > MODE_GAP_OVER_SPREAD * spread and gap > MODE_GAP_MIN_SHARE * largest:
        return [lo, hi]
    return [v]


@dataclass(frozen=True)
class SeedSummary:
    """A claim's per-seed values: their median and its 95 % interval, and their modes (NaN runs,
    e.g. an event that never came, are a mode of their own that never holds)."""

    values: tuple[float, ...]
    median: float
    lo: float
    hi: float
    modes: tuple[tuple[float, ...], ...]
    missing: int

    @classmethod
    def of(cls, values: Sequence[float]) -> SeedSummary:
        finite = [float(v) for v in values if not math.isnan(v)]
        lo, hi = median_interval(finite)
        return cls(
            tuple(float(v) for v in values),
            statistics.median(finite) if finite else math.nan,
            lo,
            hi,
            tuple(tuple(m) for m in split_modes(finite)) if finite else (),
            len(values) - len(finite),
        )

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def bimodal(self) -> bool:
        return len(self.modes) > 1 or (self.missing > 0 and bool(self.modes))

    def holds(self, criterion: Criterion) -> bool:
        """Unimodal: the criterion on the median. Bimodal: the modes whose median meets it cover
        at least MODE_COVERAGE of the runs."""
        if not self.n:
            return False
        if not self.bimodal:
            return criterion.holds(self.median)
        covered = sum(len(m) for m in self.modes if criterion.holds(statistics.median(m)))
        return covered / self.n >= MODE_COVERAGE

    def text(self, show: Callable[[float], str]) -> str:
        """ "95.0 % [94.8 %, 95.2 %]" (median [95 % interval]); for a bimodal outcome its modes
        "93.0 % (4/5), 41.0 % (1/5)"; a single run shows its value only."""
        if self.n == 1:
            return show(self.values[0])
        if not self.modes:
            return f"– (none of {self.n} seeds has a value)"
        if not self.bimodal:
            return f"{show(self.median)} [{show(self.lo)}, {show(self.hi)}]"
        parts = [f"{show(statistics.median(m))} ({len(m)}/{self.n})" for m in reversed(self.modes)]
        if self.missing:
            parts.append(f"none ({self.missing}/{self.n})")
        return ", ".join(parts)


@dataclass
class Table:
    """A generated results table: column headers and rows of already formatted cells."""

    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def add(self, *cells: Any) -> None:
        self.rows.append([c if isinstance(c, str) else fmt(c) for c in cells])

    def markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        rule = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join([head, rule, *body])


@dataclass
class Section:
    """One experiment of a paper: its setup, the generated results table, the checked claims."""

    id: str
    title: str
    figure: str
    #: The setup in one paragraph, including every deviation from the paper (scaled times...).
    setup: str
    #: Scenario files used, relative to the repository root.
    scenarios: list[str]
    #: The experiment's results directory, relative to the reproduction's output directory.
    results: str
    table: Table
    reproductions: list[Reproduction]
    #: Explanations of differences from the paper that do not belong to a single claim.
    notes: list[str] = field(default_factory=list)


def fmt(value: Any, digits: int = 1) -> str:
    """A number for a table: fixed decimals, a dash when missing."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    v = float(value)
    if math.isnan(v):
        return "–"
    if math.isinf(v):
        return "∞"
    return f"{v:.{digits}f}"


def prose(text: str) -> str:
    """A paragraph written as an indented triple-quoted string, on one line."""
    return " ".join(text.split())


def pct(value: float, digits: int = 1) -> str:
    """A fraction as a percentage ("97.3 %"), a dash when missing."""
    if value is None or math.isnan(value):
        return "–"
    return f"{100 * value:.{digits}f} %"


def num(value: float) -> str:
    """A number in its shortest form ("2", "0.74", "12.5"), free of float noise."""
    return f"{round(value, 6):g}"


def pct_exact(value: float) -> str:
    """A fraction as a percentage in its shortest form ("2 %", "0.74 %")."""
    return f"{num(100 * value)} %"


def ratio(value: float) -> str:
    """A factor ("12.3×"), a dash when missing, ∞ when the divisor was zero."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞"
    return f"{value:.1f}×" if value < 100 else f"{value:.0f}×"


def mbps(value: float, digits: int = 2) -> str:
    """A rate in Mbit/s ("12.34 Mbit/s"), a dash when missing."""
    return "–" if math.isnan(value) else f"{value:.{digits}f} Mbit/s"


def ms(value: float) -> str:
    """A delay in milliseconds ("12.3 ms"), a dash when missing."""
    return "–" if math.isnan(value) else f"{value:.1f} ms"


def seconds(value: float, digits: int = 1) -> str:
    """A duration in seconds ("1.2 s"), a dash when missing."""
    return "–" if math.isnan(value) else f"{value:.{digits}f} s"


def safe_div(a: float, b: float) -> float:
    if b == 0:
        return math.inf if a > 0 else math.nan
    return a / b


def span(xs: Sequence[float], show: Callable[[float], str]) -> str:
    """The range of `xs` as text, "lo–hi" (one value when they show alike)."""
    if not xs:
        return "–"
    lo, hi = show(min(xs)), show(max(xs))
    return lo if lo == hi else f"{lo}–{hi}"


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index of `xs` (NaN when all are zero)."""
    total, squares = sum(xs), sum(x * x for x in xs)
    return total * total / (len(xs) * squares) if squares > 0 else math.nan


class Context:
    """Runs a paper's scenarios into one output directory and remembers what it ran.

    `quick` asks the paper module for its shortened versions (tests); `out` is the (temporary)
    directory the runs are written into; runs go through `polycc.sweep` / `polycc.run`, so each
    experiment is an ordinary sweep or results directory with its own index and plots.
    """

    def __init__(
        self,
        *,
        repo: Path,
        scenarios: Path,
        out: Path,
        quick: bool,
        jobs: int | None = None,
        executor: Executor | None = None,
        plots: bool = True,
        progress: bool = False,
    ) -> None:
        self.repo = repo
        #: Show runs done / total of each experiment on stderr (when it is a terminal).
        self.progress = progress
        self.scenarios = scenarios
        self.out = out
        self.quick = quick
        self.jobs = jobs
        self.executor = executor
        self.plots = plots
        self.runs = 0
        self.sim_wall_s = 0.0

    def scenario(self, name: str) -> Path:
        path = self.scenarios / name
        if not path.is_file():
            raise ReproduceError(f"{path}: scenario file missing")
        return path

    def scenario_file(self, name: str) -> ScenarioFile:
        """The scenario file's document, for the setup the prose states."""
        from polycc.reproduce.scenario_file import ScenarioFile

        return ScenarioFile.read(self.scenario(name))

    def rel(self, path: Path) -> str:
        """A path relative to the repository root, for the report."""
        try:
            return path.resolve().relative_to(self.repo.resolve()).as_posix()
        except ValueError:
            return str(path)

    def sweep(
        self,
        name: str,
        scenario: str,
        points: Sequence[Mapping[str, Any]],
        *,
        seeds: int = 1,
    ) -> pd.DataFrame:
        """Runs explicit override points × seeds of a scenario file into `out/name/`; fails on
        any failed run (a reproduction built on a partial sweep would mislead)."""
        from polycc.sweeps import sweep

        t0 = time.perf_counter()
        df = sweep(
            self.scenario(scenario),
            list(points),
            seeds=seeds,
            jobs=self.jobs,
            out_dir=self.out / name,
            executor=self.executor,
            plots=self.plots,
            progress=self.progress,
            progress_label=f"{name} ({self.runs} runs before)",
        )
        self.sim_wall_s += time.perf_counter() - t0
        self.runs += len(df)
        failed = df[df["status"] != "ok"]
        if len(failed):
            first = failed.iloc[0]
            raise RuntimeError(
                f"{name}: {len(failed)} run(s) failed, e.g. {first['run_id']}: {first['error']}"
            )
        return df

    def sweep_labeled(
        self,
        name: str,
        scenario: str,
        points: Mapping[Any, Mapping[str, Any]],
        *,
        seeds: int = 1,
    ) -> dict[Any, list[dict[str, Any]]]:
        """`sweep` over {label: overrides}; returns {label: [one results row per seed]}."""
        labels = list(points)
        df = self.sweep(name, scenario, [points[k] for k in labels], seeds=seeds)
        rows = df.to_dict("records")  # in point order, seeds innermost
        return {k: rows[i * seeds : (i + 1) * seeds] for i, k in enumerate(labels)}

    def timeseries(self, name: str, row: Mapping[str, Any]) -> pd.DataFrame:
        """The per-flow time series of one run of sweep `name` (its results row)."""
        import pandas as pd

        return pd.read_parquet(self.out / name / "runs" / str(row["run_id"]) / "timeseries.parquet")

    def transfers(self, name: str, row: Mapping[str, Any]) -> pd.DataFrame:
        """The per-transfer table of one run of sweep `name` (its results row)."""
        import pandas as pd

        return pd.read_parquet(self.out / name / "runs" / str(row["run_id"]) / "transfers.parquet")

    def run(
        self, name: str, scenario: str, overrides: Mapping[str, Any] | None = None, *, plots: bool = True
    ) -> RunResult:
        """Runs one scenario file (with overrides) and writes its results directory `out/name/`
        (with its plots when both `plots` and the context's plots are on)."""
        from polycc.api import run_scenario
        from polycc.scenario import Scenario

        t0 = time.perf_counter()
        result = run_scenario(Scenario.from_file(self.scenario(scenario)).with_overrides(overrides or {}))
        result.write(self.out / name, plots=self.plots and plots)
        self.sim_wall_s += time.perf_counter() - t0
        self.runs += 1
        return result

    def seeds_of(self, scenario: str, seeds: int) -> list[int]:
        """The scenario seeds a claim over `seeds` runs uses: the file's seed (default 1) and the
        next ones."""
        from polycc.scenario import Scenario

        first = Scenario.from_file(self.scenario(scenario)).to_dict().get("seed", 1)
        return [int(first) + i for i in range(seeds)]

    def run_seeds(
        self, name: str, scenario: str, overrides: Mapping[str, Any] | None = None, *, seeds: int
    ) -> list[RunResult]:
        """`run` once per scenario seed (`seeds_of`): the first into `out/name/` with its plots,
        the others into `out/name-seed<seed>/` without (their numbers only feed the claims)."""
        out = []
        for i, seed in enumerate(self.seeds_of(scenario, seeds)):
            label = name if i == 0 else f"{name}-seed{seed}"
            out.append(self.run(label, scenario, dict(overrides or {}) | {"seed": seed}, plots=i == 0))
        return out


# ---------------------------------------------------------------------------------------------
# REPRODUCTION.md


def markers(paper: str) -> tuple[str, str]:
    return f"<!-- reproduce:{paper}:begin -->", f"<!-- reproduce:{paper}:end -->"


def render_markdown(
    paper: str,
    title: str,
    sections: Sequence[Section],
    *,
    command: str,
    quick: bool,
    runs: int,
    preamble: Sequence[str] = (),
    closing: Sequence[str] = (),
) -> str:
    """The paper's section of REPRODUCTION.md (without the markers). `preamble`: paragraphs after
    the summary line (e.g. how claims over seeds are judged); `closing`: list items after the last
    experiment (e.g. the claims whose verdict changed). Rows with a knob (`Reproduction.knob`) are
    counted apart from the claims."""
    reps = [r for s in sections for r in s.reproductions]
    claims = [r for r in reps if not r.knob]
    knobbed = [r for r in reps if r.knob]
    held = sum(r.holds for r in claims)
    summary = f"{held} of {len(claims)} qualitative claims hold in the simulator."
    if knobbed:
        summary = (
            f"{held} of {len(claims)} claims hold in the simulator at the paper's numbers; "
            f"{sum(r.holds for r in knobbed)} of {len(knobbed)} second rows run with a knob we added "
            "(labelled, not counted) hold."
        )
    out = [
        f"## {title}",
        "",
        f"Generated by `{command}` ({runs} simulated runs{', QUICK (shortened) versions' if quick else ''}); "
        f"do not edit by hand. {summary}",
    ]
    for p in preamble:
        out += ["", p]
    out += [
        "",
        "| # | figure | claim | paper | ours | holds (criterion) |",
        "|---|---|---|---|---|---|",
    ]
    for r in reps:
        mark = "yes" if r.holds else "**no**"
        claim = f"*with {r.knob} (ours, not the paper's setup):* {r.claim}" if r.knob else r.claim
        out.append(f"| {r.id} | {r.figure} | {claim} | {r.paper} | {r.ours} | {mark} ({r.criterion}) |")
    for s in sections:
        out += ["", f"### {s.id}. {s.title} ({s.figure})", "", s.setup, ""]
        out.append("Scenarios: " + ", ".join(f"`{p}`" for p in s.scenarios) + f"; results: `{s.results}/`.")
        out += ["", s.table.markdown()]
        whys = [f"- **{r.id}**: {r.why}" for r in s.reproductions if r.why]
        notes = [f"- {n}" for n in s.notes]
        if whys or notes:
            out += ["", *notes, *whys]
    if closing:
        out += ["", *closing]
    return "\n".join(out) + "\n"


DOC_HEADER = """# Reproductions

Published results reproduced in the polycc simulator. Each paper's section is regenerated by
`polycc reproduce <paper>` from the runs it makes (scenario files under `scenarios/papers/`);
the tables are never typed by hand. "holds" says whether the paper's qualitative claim holds in
our runs, by the stated criterion; where our numbers differ from the paper's, the section says why.
"""


def update_document(doc: Path, paper: str, body: str) -> None:
    """Replaces the paper's section of `doc` between its markers (appending it, or creating the
    document, when absent); the rest of the document is left as it is."""
    begin, end = markers(paper)
    block = f"{begin}\n{body.rstrip()}\n{end}"
    text = doc.read_text(encoding="utf-8") if doc.exists() else DOC_HEADER
    i, j = text.find(begin), text.find(end)
    if (i < 0) != (j < 0) or (i >= 0 and j < i):
        raise ReproduceError(f"{doc}: the markers {begin} / {end} are unbalanced; fix them by hand")
    text = text[:i] + block + text[j + len(end) :] if i >= 0 else text.rstrip() + "\n\n" + block + "\n"
    tmp = doc.with_name(f".{doc.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(doc)


def render_index(title: str, sections: Sequence[Section]) -> str:
    """A small HTML page linking each experiment's results (sweep index or run report)."""
    rows = []
    for s in sections:
        for r in s.reproductions:
            rows.append(
                "<tr>"
                + "".join(
                    f"<td>{html.escape(c)}</td>"
                    for c in (r.id, r.figure, r.claim, r.paper, r.ours, "yes" if r.holds else "NO")
                )
                + "</tr>"
            )
    links = "".join(
        f'<li><a href="{html.escape(s.results)}/">{html.escape(s.id)}. {html.escape(s.title)}</a></li>'
        for s in sections
    )
    return (
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<h1>{html.escape(title)}</h1><table border=1 cellpadding=4>"
        "<tr><th>#</th><th>figure</th><th>claim</th><th>paper</th><th>ours</th><th>holds</th></tr>"
        + "".join(rows)
        + f"</table><h2>Experiments</h2><ul>{links}</ul>\n"
    )


def as_json(sections: Sequence[Section]) -> list[dict[str, Any]]:
    return [asdict(r) | {"section": s.id} for s in sections for r in s.reproductions]
