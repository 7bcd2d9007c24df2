"""The scenario suite (`scenarios/suite/`): every candidate CCA × scenario × seed, each run scored
by the metric its scenario declares, and a leaderboard (`polycc suite`).

A suite scenario is an ordinary scenario file with a `[suite]` table, which the simulator carries
unread:

    [suite]
    half = "tuning"            # or "held_out"; "extra" for rows run only when their data exist
    metric = "p95_delay_at_floor"
    floor_mbps = 16            # the metric's parameters
    flow = "test"              # the flow(s) under test (default "test"; `count` copies too)
    public_trace = "X.down"    # extra rows: a public trace replacing links[0].trace

The runs go through the sweep machinery (`polycc.grid.plan`, one grid `flows.<i>.cca = ccas`
per scenario, and `polycc.sweeps.run_tasks` on any executor). Metrics (README "Scenario suite"),
per run, from the summary of the flows under test (T) and the others (C):

- goodput: total goodput of T (Mbit/s), higher is better;
- p95_delay_at_floor: the highest p95 RTT of T divided by min(1, goodput(T) / floor_mbps), lower
  is better (a flow below the floor pays in proportion: half the floor doubles its delay);
- p95_frame_delay_at_floor: the same with the video frames' p95 delay;
- share: r = (goodput(T) / goodput(T + C)) / (|T| / |T + C|), the ratio to the fair share; the
  value min(r, 1/r), higher is better (starving and crowding out score alike);
- scavenger: goodput(T) × min(1, goodput(primary) / floor_mbps), higher is better;
- fct: mean flow completion time of T (s), lower is better.

Scores: per scenario and CCA, m = the mean of the per-seed values; best = the best m of the
CCAs; score = m / best (higher is better) or best / m (lower is better), so the best CCA scores
1.0; the 95 % interval is the Student-t interval of m mapped the same way.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from polycc._native import ScenarioError
from polycc.ccas import UnknownCcaError, cca_needs_video
from polycc.executors import Executor, LocalExecutor, check_jobs
from polycc.grid import plan
from polycc.outdir import atomic_dir
from polycc.scenario import Scenario
from polycc.sweep_plots import mean_ci
from polycc.tasks import BACKENDS, RunOutcome, RunTask

#: The default candidates: the pool's single controllers that serve bulk traffic (`polycc ccas`;
#: Reno is `newreno` here). Delay targets (LEDBAT), scavengers (Proteus-S) and video-only
#: controllers (PIBES, GCC) are not general-purpose candidates.
DEFAULT_CCAS: tuple[str, ...] = ("cubic", "newreno", "bbr", "bbr3", "copa", "vegas", "pcc-vivace")
HALVES = ("tuning", "held_out", "extra")
#: metric -> (higher is better, required parameters).
METRICS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "goodput": (True, ()),
    "p95_delay_at_floor": (False, ("floor_mbps",)),
    "p95_frame_delay_at_floor": (False, ("floor_mbps",)),
    "share": (True, ()),
    "scavenger": (True, ("primary", "floor_mbps")),
    "fct": (False, ()),
}
#: Known `[suite]` keys.
SUITE_KEYS = ("half", "metric", "flow", "floor_mbps", "primary", "public_trace")
#: A CCA within this fraction of the best on a scenario counts as "near the best".
NEAR_BEST = 0.9


class SuiteError(ValueError):
    """A suite scenario's [suite] table, or a suite option, is wrong."""


def suite_dir() -> Path:
    """scenarios/suite of this checkout (the package is installed editable from python/), else of
    the current directory."""
    repo = Path(__file__).resolve().parents[2] / "scenarios" / "suite"
    return repo if repo.is_dir() else Path.cwd() / "scenarios" / "suite"


def default_public_traces() -> Path:
    """The public traces directory beside the checkout (`../shared/traces` of the repository)."""
    return Path(__file__).resolve().parents[3] / "shared" / "traces"


@dataclass(frozen=True)
class SuiteScenario:
    name: str
    path: Path
    half: str
    metric: str
    params: dict[str, Any]
    #: Index (in `flows`) of the entry under test and its id.
    flow_index: int
    flow_id: str
    scenario: Scenario = field(repr=False)

    @property
    def higher_is_better(self) -> bool:
        return METRICS[self.metric][0]


def read_suite_table(path: Path, doc: Mapping[str, Any]) -> tuple[str, str, dict[str, Any], int, str]:
    """(half, metric, parameters, flow index, flow id) of a suite scenario; SuiteError naming the
    file and key otherwise."""
    t = doc.get("suite")
    if not isinstance(t, Mapping):
        raise SuiteError(f"{path}: suite: missing; a suite scenario declares [suite] half and metric")
    for k in t:
        if k not in SUITE_KEYS:
            raise SuiteError(f"{path}: suite.{k}: unknown key; allowed: {', '.join(SUITE_KEYS)}")
    half = t.get("half")
    if half not in HALVES:
        raise SuiteError(f"{path}: suite.half: {half!r}; allowed: {', '.join(HALVES)}")
    metric = t.get("metric")
    if metric not in METRICS:
        raise SuiteError(f"{path}: suite.metric: {metric!r}; allowed: {', '.join(METRICS)}")
    params = {k: v for k, v in t.items() if k not in ("half", "metric", "flow", "public_trace")}
    for k in METRICS[metric][1]:
        if k not in params:
            raise SuiteError(f"{path}: suite.{k}: metric {metric} needs it")
    floor = params.get("floor_mbps")
    if floor is not None and (isinstance(floor, bool) or not isinstance(floor, int | float) or floor <= 0):
        raise SuiteError(f"{path}: suite.floor_mbps: {floor!r}; allowed: a positive number (Mbit/s)")
    flow = t.get("flow", "test")
    flows = doc.get("flows", [])
    ids = [f.get("id") for f in flows if isinstance(f, Mapping)]
    if flow not in ids:
        raise SuiteError(f"{path}: suite.flow: no flow {flow!r}; flows: {', '.join(map(str, ids))}")
    primary = params.get("primary")
    if primary is not None and primary not in ids:
        raise SuiteError(f"{path}: suite.primary: no flow {primary!r}; flows: {', '.join(map(str, ids))}")
    return half, metric, params, ids.index(flow), flow


def load_suite(
    directory: Path | None = None, *, public_traces: Path | None = None, include_extra: bool = True
) -> tuple[list[SuiteScenario], list[str]]:
    """The suite's scenarios (`*.toml`, then `extra/*.toml`), validated, in name order; and
    notes on extra rows skipped because their public trace is absent."""
    directory = directory or suite_dir()
    if not directory.is_dir():
        raise SuiteError(f"{directory}: no such suite directory")
    files = sorted(directory.glob("*.toml"))
    if include_extra:
        files += sorted((directory / "extra").glob("*.toml"))
    if not files:
        raise SuiteError(f"{directory}: no scenario files (*.toml)")
    traces = public_traces or default_public_traces()
    out: list[SuiteScenario] = []
    notes: list[str] = []
    for path in files:
        scenario = Scenario.from_file(path)
        name = scenario.validate()
        doc = scenario.to_dict()
        half, metric, params, index, flow_id = read_suite_table(path, doc)
        public = doc["suite"].get("public_trace")
        if public is not None:
            trace = traces / str(public)
            if not trace.is_file():
                notes.append(f"{path.name}: skipped: public trace {public} not found in {traces}")
                continue
            scenario = scenario.with_overrides({"links.0.trace": str(trace.resolve())})
        out.append(SuiteScenario(name, path, half, metric, params, index, flow_id, scenario))
    return out, notes


def check_ccas(ccas: Sequence[str]) -> list[str]:
    """The candidates, each a registered controller that runs bulk traffic (UnknownCcaError or
    SuiteError naming the bad one)."""
    if not ccas:
        raise SuiteError("--ccas: no controllers given")
    seen: list[str] = []
    for c in ccas:
        if cca_needs_video(c):  # raises UnknownCcaError for an unknown name
            raise SuiteError(f"--ccas: {c} needs video frames and cannot run the suite's bulk flows")
        if c in seen:
            raise SuiteError(f"--ccas: {c} is given twice")
        seen.append(c)
    return seen


def emulator_refusals(scenarios: Sequence[SuiteScenario], ccas: Sequence[str]) -> dict[str, str]:
    """Scenario name -> why the emulated testbed cannot run it with some candidate (its own
    support check, run without creating anything); scenarios it can run are absent."""
    from polycc import _native

    out: dict[str, str] = {}
    for s in scenarios:
        for cca in ccas:
            sc = s.scenario.with_overrides({f"flows.{s.flow_index}.cca": cca})
            why = _native.emulator_refusal(sc.text, sc.format, sc.origin, str(sc.base_dir))
            if why is not None:
                out[s.name] = why
                break
    return out


def plan_suite(scenarios: Sequence[SuiteScenario], ccas: Sequence[str], seeds: int) -> list[RunTask]:
    """Every scenario × CCA × seed as sweep tasks, validated; run ids `<scenario>/<cca>-s<seed>`."""
    tasks: list[RunTask] = []
    for s in scenarios:
        key = f"flows.{s.flow_index}.cca"
        for t in plan(s.scenario, {key: list(ccas)}, seeds=seeds):
            cca = t.params[key]
            tasks.append(
                replace(
                    t,
                    index=len(tasks),
                    run_id=f"{s.name}/{cca}-s{t.seed}",
                    params={"scenario": s.name, "cca": cca},
                )
            )
    return tasks


def _flows_of(summary: Mapping[str, Any], flow_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(flows under test, the others): `flow_id` and its `count` copies `flow_id-<k>`."""
    test: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []
    for f in summary.get("flows", []):
        fid = str(f.get("id"))
        is_test = fid == flow_id or (fid.startswith(f"{flow_id}-") and fid[len(flow_id) + 1 :].isdigit())
        (test if is_test else other).append(f)
    return test, other


def _floored(delay: float, goodput: float, floor: float) -> float:
    frac = min(1.0, goodput / floor)
    return math.inf if frac <= 0 else delay / frac


def run_metrics(s: SuiteScenario, summary: Mapping[str, Any]) -> dict[str, float]:
    """The run's metric `value`, and what the scatter plots and tables show: the goodput and p95
    RTT of the flows under test, and the loss rate of the others (competitors)."""
    test, other = _flows_of(summary, s.flow_id)
    goodput = sum(float(f["goodput_mbps"]) for f in test)
    delay = max(float(f["rtt_ms"]["p95"]) for f in test)
    p = s.params
    if s.metric == "goodput":
        value = goodput
    elif s.metric == "p95_delay_at_floor":
        value = _floored(delay, goodput, float(p["floor_mbps"]))
    elif s.metric == "p95_frame_delay_at_floor":
        frame = max(float((f.get("frame_delay_ms") or {}).get("p95", math.inf)) for f in test)
        value = _floored(frame, goodput, float(p["floor_mbps"]))
    elif s.metric == "share":
        total = goodput + sum(float(f["goodput_mbps"]) for f in other)
        r = (goodput / total) / (len(test) / (len(test) + len(other))) if total > 0 else 0.0
        value = min(r, 1 / r) if r > 0 else 0.0
    elif s.metric == "scavenger":
        primary = next(f for f in other if f.get("id") == p["primary"])
        value = goodput * min(1.0, float(primary["goodput_mbps"]) / float(p["floor_mbps"]))
    elif s.metric == "fct":
        fcts = [f.get("fct_s") for f in test]
        done = [float(x) for x in fcts if x is not None]
        value = sum(done) / len(done) if done and len(done) == len(fcts) else math.inf
    else:  # read_suite_table admits only METRICS
        raise AssertionError(s.metric)
    losses = [float(f["loss_rate"]) for f in other]
    return {
        "value": value,
        "goodput_mbps": goodput,
        "rtt_p95_ms": delay,
        "competitor_loss_rate": sum(losses) / len(losses) if losses else math.nan,
    }


def results_table(scenarios: Sequence[SuiteScenario], outcomes: Sequence[RunOutcome]) -> pd.DataFrame:
    """One row per run: scenario, half, metric, cca, seed, status, error, value, score (the run's
    value relative to the best CCA's mean on its scenario), goodput, p95 RTT, competitor loss."""
    by_name = {s.name: s for s in scenarios}
    rows: list[dict[str, Any]] = []
    for o in sorted(outcomes, key=lambda o: o.task.index):
        s = by_name[o.task.params["scenario"]]
        row: dict[str, Any] = {
            "scenario": s.name,
            "half": s.half,
            "metric": s.metric,
            "cca": o.task.params["cca"],
            "seed": o.task.seed,
            "status": "ok" if o.error is None else "error",
            "error": o.error,
            "wall_s": o.wall_s,
        }
        nan = {
            "value": math.nan,
            "goodput_mbps": math.nan,
            "rtt_p95_ms": math.nan,
            "competitor_loss_rate": math.nan,
        }
        row.update(run_metrics(s, o.summary) if o.summary is not None else nan)
        rows.append(row)
    df = pd.DataFrame(rows)
    df["score"] = math.nan
    scores = scores_table(scenarios, df)
    for s in scenarios:
        best = scores.loc[scores.scenario == s.name, "best_value"]
        if best.empty or not math.isfinite(float(best.iloc[0])):
            continue
        b = float(best.iloc[0])
        m = df.scenario == s.name
        df.loc[m, "score"] = [_relative(v, b, s.higher_is_better) for v in df.loc[m, "value"]]
    return df


def _relative(value: float, best: float, higher: bool) -> float:
    """A value against the best mean: value / best, or best / value (an infinite delay or
    completion time gives 0)."""
    if math.isnan(value):
        return math.nan
    if higher:
        return value / best if best > 0 else math.nan
    return best / value if value > 0 else math.nan


def scores_table(scenarios: Sequence[SuiteScenario], runs: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario and CCA: the mean value over seeds, the score relative to the best CCA
    (1.0 for the best) with its 95 % interval, and the CCA's rank on the scenario (1 = best)."""
    rows: list[dict[str, Any]] = []
    for s in scenarios:
        sub = runs[(runs.scenario == s.name) & (runs.status == "ok")]
        per: dict[str, tuple[float, float, int]] = {}
        for cca in runs.loc[runs.scenario == s.name, "cca"].unique():
            vals = [float(v) for v in sub.loc[sub.cca == cca, "value"]]
            finite = [v for v in vals if math.isfinite(v)]
            if s.higher_is_better or len(finite) == len(vals):
                per[str(cca)] = mean_ci(finite) if vals else (math.nan, math.nan, 0)
            else:  # a lower-is-better value that is infinite (no goodput) makes the mean infinite
                per[str(cca)] = (math.inf, math.nan, len(vals))
        finite_means = [m for m, _, _ in per.values() if math.isfinite(m)]
        best = (max if s.higher_is_better else min)(finite_means) if finite_means else math.nan
        for cca, (m, half_width, n) in per.items():
            if not math.isfinite(best) or not math.isfinite(m) or n == 0:
                score = 0.0 if m == math.inf else math.nan
                lo = hi = score
            elif s.higher_is_better:
                score = m / best if best > 0 else math.nan
                lo, hi = (m - half_width) / best, (m + half_width) / best
            else:
                score = best / m
                lo = best / (m + half_width)
                hi = best / (m - half_width) if m - half_width > 0 else math.inf
            rows.append(
                {
                    "scenario": s.name,
                    "half": s.half,
                    "metric": s.metric,
                    "cca": cca,
                    "seeds": n,
                    "mean_value": m,
                    "best_value": best,
                    "score": score,
                    "score_lo": lo,
                    "score_hi": hi,
                    **{
                        f"mean_{c}": float(sub.loc[sub.cca == cca, c].mean())
                        for c in ("goodput_mbps", "rtt_p95_ms", "competitor_loss_rate")
                    },
                }
            )
    df = pd.DataFrame(rows)
    if not df.empty:
        df["rank"] = df.groupby("scenario")["score"].rank(
            ascending=False, method="average", na_option="bottom"
        )
        df["best_cca"] = df.scenario.map(
            df.loc[df.groupby("scenario")["score"].idxmax().dropna()].set_index("scenario").cca
        )
    return df


def rank_table(scores: pd.DataFrame, halves: Sequence[str] = ("tuning", "held_out")) -> pd.DataFrame:
    """Overall per CCA over the scenarios of `halves`: mean rank, mean and worst score (and where),
    scenarios within 10 % of the best and more than 25 % below it. Sorted by mean rank."""
    s = scores[scores.half.isin(halves)].copy()
    s["score0"] = s.score.fillna(0.0)
    rows = []
    for cca, g in s.groupby("cca", sort=False):
        worst = g.loc[g.score0.idxmin()]
        rows.append(
            {
                "cca": cca,
                "scenarios": len(g),
                "mean_rank": float(g["rank"].mean()),
                "mean_score": float(g.score0.mean()),
                "worst_score": float(worst.score0),
                "worst_scenario": worst.scenario,
                "near_best": int((g.score0 >= NEAR_BEST).sum()),
                "far_below": int((g.score0 < 0.75).sum()),
            }
        )
    columns = ["cca", "scenarios", "mean_rank", "mean_score", "worst_score", "worst_scenario"]
    columns += ["near_best", "far_below"]
    return pd.DataFrame(rows, columns=columns).sort_values(["mean_rank", "cca"]).reset_index(drop=True)


def run_suite(
    scenarios: Sequence[SuiteScenario],
    ccas: Sequence[str],
    *,
    seeds: int = 5,
    out_dir: Path,
    jobs: int | None = None,
    executor: Executor | None = None,
    backend: str = "sim",
    progress: bool = False,
    on_planned: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs the suite and writes DIR/results.parquet (per run), DIR/scores.parquet (per scenario
    and CCA), DIR/ranks.parquet and DIR/index.html with the scatter plots, atomically. Returns
    (runs, scores)."""
    from polycc.suite_report import write_leaderboard
    from polycc.sweeps import run_tasks

    check_jobs(jobs)
    if backend not in BACKENDS:
        raise ScenarioError(f"backend: {backend!r}; allowed: {', '.join(BACKENDS)}")
    tasks = [replace(t, backend=backend) for t in plan_suite(scenarios, check_ccas(ccas), seeds)]
    if on_planned is not None:
        on_planned(len(tasks))
    if backend == "emu":
        jobs = 1  # real-time runs would skew each other's timing
    executor = executor or LocalExecutor(jobs)
    with atomic_dir(out_dir) as tmp:
        outcomes = run_tasks(executor, tasks, progress, "suite")
        runs = results_table(scenarios, outcomes)
        scores = scores_table(scenarios, runs)
        runs.to_parquet(tmp / "results.parquet", index=False)
        scores.to_parquet(tmp / "scores.parquet", index=False)
        rank_table(scores).to_parquet(tmp / "ranks.parquet", index=False)
        write_leaderboard(tmp, scenarios, runs, scores, list(ccas))
    return runs, scores


def summary_markdown(scores: pd.DataFrame, ccas: Sequence[str]) -> str:
    """The leaderboard as Markdown: per scenario the best CCA and each CCA's score, then the rank
    table per half and overall."""
    lines = ["| scenario | half | metric | best | " + " | ".join(ccas) + " |"]
    lines.append("|---|---|---|---|" + "---:|" * len(ccas))
    for name, g in scores.groupby("scenario", sort=False):
        by = g.set_index("cca")
        cells = [_fmt_score(by.score.get(c)) for c in ccas]
        lines.append(
            f"| {name} | {g.half.iloc[0]} | {g.metric.iloc[0]} | {g.best_cca.iloc[0]} | "
            + " | ".join(cells)
            + " |"
        )
    out = ["\n".join(lines)]
    for title, halves in (
        ("tuning half", ("tuning",)),
        ("held-out half", ("held_out",)),
        ("both halves", ("tuning", "held_out")),
    ):
        r = rank_table(scores, halves)
        t = [
            f"Rank table, {title}:",
            "",
            "| cca | mean rank | mean score | worst score (scenario) | within 10 % of best "
            "| > 25 % below best |",
            "|---|---:|---:|---|---:|---:|",
        ]
        for rec in r.to_dict("records"):
            t.append(
                f"| {rec['cca']} | {rec['mean_rank']:.2f} | {rec['mean_score']:.3f} "
                f"| {rec['worst_score']:.3f} ({rec['worst_scenario']}) "
                f"| {rec['near_best']}/{rec['scenarios']} | {rec['far_below']} |"
            )
        out.append("\n".join(t))
    return "\n\n".join(out) + "\n"


def _fmt_score(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{float(v):.2f}"


def suite_table_of(path: Path) -> Mapping[str, Any] | None:
    """The `[suite]` table of a scenario file, or None (for `polycc check`)."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc.get("suite"), Mapping) else None


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


__all__ = [
    "DEFAULT_CCAS",
    "METRICS",
    "SuiteError",
    "SuiteScenario",
    "UnknownCcaError",
    "check_ccas",
    "load_suite",
    "plan_suite",
    "rank_table",
    "results_table",
    "run_metrics",
    "run_suite",
    "scores_table",
    "suite_dir",
    "summary_markdown",
]
