"""PIBES §IV-B c), Fig. 12: the capacity ramps down, holds and ramps back up; how closely each
protocol tracks it, and PIBES's frame delay in the trough."""

from __future__ import annotations

from dataclasses import dataclass

from polycc.reproduce.common import (
    AtMost,
    Context,
    Reproduction,
    SameSide,
    Section,
    Table,
    WithinPoints,
    ms,
    num,
    pct,
    prose,
    safe_div,
)
from polycc.reproduce.pibes.measures import (
    first,
    frame_delays,
    med,
    points,
    stat,
    times,
    utilisation,
    video_runs,
)
from polycc.reproduce.pibes.model import S_MAX, SETTLE_S, lower_bound_ms
from polycc.reproduce.pibes.plots import comparison_plot
from polycc.reproduce.scenario_file import ScenarioFile, rate_mbps, seconds, size_text

SCENARIO = "ramp.toml"
FIGURE = "Fig. 12"
#: Utilisation in the trough is measured from this long after the ramp down ends.
TROUGH_SETTLE_S = 1.0


@dataclass(frozen=True)
class Ramp:
    """ramp.toml's capacity profile: `high` until `down_from`, ramping to `low` by `down_to`,
    holding until `up_from`, ramping back to `high` by `up_to` (s, Mbit/s)."""

    high: float
    low: float
    down_from: float
    down_to: float
    up_from: float
    up_to: float

    @classmethod
    def of(cls, file: ScenarioFile) -> Ramp:
        steps = [(seconds(p["at"]), rate_mbps(p["rate"])) for p in file.link()["schedule"]]
        high, low = steps[0][1], min(r for _, r in steps)
        at_low = [t for t, r in steps if r == low]
        down_from = max(t for t, r in steps if r == high and t < at_low[0])
        return cls(high, low, down_from, at_low[0], at_low[-1], steps[-1][0])

    def profile(self) -> str:
        """ "the capacity is 4 Mbit/s, ramps down to 2 Mbit/s over 10–15 s, ..." as prose."""
        return (
            f"the capacity is {num(self.high)} Mbit/s, ramps down to {num(self.low)} Mbit/s over "
            f"{num(self.down_from)}–{num(self.down_to)} s, holds until {num(self.up_from)} s "
            "and ramps back to "
            f"{num(self.high)} Mbit/s over {num(self.up_from)}–{num(self.up_to)} s"
        )

    @property
    def trough(self) -> tuple[float, float]:
        """The trough, settled: from shortly after the ramp down until the ramp up."""
        return self.down_to + TROUGH_SETTLE_S, self.up_from


def span_s(t0: float, t1: float) -> str:
    return f"{num(t0)}–{num(t1)} s"


#: 4a: "closely tracked the available bandwidth" at s_max (no number): ± 10 points around it.
TRACKS_POINTS = 10.0
#: 4c: "substantially more consistent frame delay" than Salsify (not modelled; no number): the
#: trough's p95 at most this many times the lower bound.
CONSISTENT = 1.5


def _claims(
    util: dict[str, list[float]], trough_p95: list[float], bound: float, whole: str, trough: str
) -> list[Reproduction]:
    return [
        Reproduction.judge(
            "4a",
            FIGURE,
            f"PIBES closely tracks the ramping capacity: utilisation {whole}",
            "closely tracked (s_max)",
            util["PIBES"],
            WithinPoints(S_MAX, TRACKS_POINTS, paper_number=False),
            pct,
        ),
        Reproduction.judge(
            "4b",
            FIGURE,
            "WebRTC has the lowest throughput: PIBES − GCC utilisation",
            "lowest (bitrate cap)",
            [p - g for p, g in zip(util["PIBES"], util["GCC"], strict=True)],
            SameSide(0.0, above=True),
            points,
        ),
        Reproduction.judge(
            "4c",
            FIGURE,
            f"PIBES's frame delay stays consistent in the trough: p95 frame delay {trough} / lower bound",
            "consistent",
            [safe_div(x, bound) for x in trough_p95],
            AtMost(CONSISTENT, paper_number=False),
            times,
        ),
    ]


def run(ctx: Context) -> Section:
    runs = video_runs(ctx, "ramp", SCENARIO)
    file = ctx.scenario_file(SCENARIO)
    ramp, duration = Ramp.of(file), file.duration_s()
    delay_trough = (ramp.down_to, ramp.up_from)
    util = {k: [utilisation(r, "video", SETTLE_S, duration) for r in rs] for k, rs in runs.items()}
    trough = {k: [utilisation(r, "video", *ramp.trough) for r in rs] for k, rs in runs.items()}
    delays = {k: [frame_delays(r.frames, "video", SETTLE_S) for r in rs] for k, rs in runs.items()}
    trough_p95 = {
        k: [stat(frame_delays(r.frames, "video", *delay_trough), 95) for r in rs] for k, rs in runs.items()
    }
    whole = span_s(SETTLE_S, duration)
    table = Table(
        [
            "protocol",
            f"utilisation {whole}",
            f"utilisation in the trough {span_s(*ramp.trough)}",
            "frame delay mean",
            "p95",
            "p95 in the trough",
        ]
    )
    for k in runs:
        table.add(
            k,
            pct(med(util[k])),
            pct(med(trough[k])),
            ms(med([stat(d) for d in delays[k]])),
            ms(med([stat(d, 95) for d in delays[k]])),
            ms(med(trough_p95[k])),
        )
    bound = lower_bound_ms(file)
    figure = ctx.out / "ramp-pibes" / "ramp-comparison.png"
    title = f"PIBES {FIGURE}: capacity ramps {num(ramp.high)} → {num(ramp.low)} → {num(ramp.high)} Mbit/s"
    comparison_plot(ctx, figure, title, first(runs), bound_ms=bound)
    return Section(
        "4",
        f"Capacity ramps between {num(ramp.low)} and {num(ramp.high)} Mbit/s",
        FIGURE,
        prose(
            f"""
            One video flow; {ramp.profile()} (the paper's figure); one-way delay
            {num(file.one_way_ms())} ms, {size_text(file.buffer())} queue, {num(duration)} s.
            """
        ),
        [ctx.rel(ctx.scenario(SCENARIO))],
        "ramp-pibes",
        table,
        _claims(util, trough_p95["PIBES"], bound, whole, span_s(*delay_trough)),
        notes=[
            f"Figure: `ramp-pibes/{figure.name}` (first seed). Table: medians over the seeds.",
            f"Criteria: 4a — no number; PIBES sends at s_max = {pct(S_MAX, 0)}, ± {num(TRACKS_POINTS)} "
            f"points. 4c — the paper compares with Salsify (not modelled) and prints no number; a p95 "
            f"within {times(CONSISTENT)} the lower bound is read as consistent.",
        ],
    )
