"""PIBES Fig. 9: the competing flag against the truth (a forward CUBIC flow present), and the
diagnostics of experiment 1 that explain where it flickers: what the CUBIC flows suffered, the
burst inter-arrival jump at an arrival, d~/d while the flag is weak, how many paced gaps the
competitors stretch and by how much, and the flag beside paced CUBIC and at other CUBIC RTTs."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from polycc.reproduce.common import (
    AtLeast,
    AtMost,
    Reproduction,
    Table,
    fmt,
    num,
    pct,
    prose,
    ratio,
    safe_div,
    seconds,
)
from polycc.reproduce.pibes.estimation_runs import (
    COMPETITOR_EVERY_S,
    DEFAULT_ALPHA,
    DEFAULT_BURST,
    DETECT_RUN_S,
    NO_NOISE,
    PACED_STACK,
    SCENARIO,
    Plan,
    Runs,
    cca,
    competitors,
)
from polycc.reproduce.pibes.model import BETA, DELTA, S_SHARE, STRETCHED
from polycc.reproduce.timeseries import window

if TYPE_CHECKING:
    import pandas as pd

#: The flag counts as holding from this long after an arrival (its transient left out).
GRACE_S = 1.0


def detection_accuracy(
    frames: pd.DataFrame, arrivals: Sequence[float], grace_s: float = GRACE_S
) -> dict[str, float]:
    """Fig. 9: per frame, the competing flag against the truth (a competitor present), leaving out
    the `grace_s` after each arrival. Returns the accuracy while competitors are present, the
    false-alarm rate before the first, and the time to the first detection after the first."""
    f = frames[(frames["flow"] == "video") & (frames["settled"] == 1)]
    t = f["generated_s"].to_numpy(dtype=float)
    c = f["competing"].to_numpy(dtype=float) == 1.0
    first = min(arrivals) if arrivals else math.inf
    transition = np.zeros(t.shape, dtype=bool)
    for a in arrivals:
        transition |= (t >= a) & (t < a + grace_s)
    present = (t >= first) & ~transition
    alone = t < first
    hits = t[(t >= first) & c]
    return {
        "accuracy": float(c[present].mean()) if present.any() else math.nan,
        "false_alarm": float(c[alone].mean()) if alone.any() else math.nan,
        "detect_s": float(hits[0] - first) if hits.size else math.nan,
    }


def flag_rate(frames: pd.DataFrame, t0: float = 0.0, t1: float = math.inf) -> float:
    """Fraction of the video flow's settled frames produced in [t0, t1) with the flag up."""
    f = frames[(frames["flow"] == "video") & (frames["settled"] == 1)]
    f = f[(f["generated_s"] >= t0) & (f["generated_s"] < t1)]
    return float((f["competing"] == 1).mean()) if len(f) else math.nan


def fwd_timeouts(run_dir: Path, n: int) -> list[tuple[int, int, float]]:
    """(probe timeouts, persistent congestions, loss rate) of the forward CUBIC flows fwd1..n."""
    flows = {f["id"]: f for f in json.loads((run_dir / "summary.json").read_text())["flows"]}
    return [
        (
            int(flows[f"fwd{k}"]["probe_timeouts"]),
            int(flows[f"fwd{k}"]["persistent_congestions"]),
            float(flows[f"fwd{k}"]["loss_rate"]),
        )
        for k in range(1, n + 1)
    ]


def first_drop(frames: pd.DataFrame, t0: float) -> float:
    """When the video's competing flag is first down in a settled frame produced from `t0` on."""
    f = frames[(frames["flow"] == "video") & (frames["settled"] == 1) & (frames["generated_s"] >= t0)]
    down = f[f["competing"] != 1]["generated_s"].to_numpy(dtype=float)
    return float(down.min()) if down.size else math.nan


def d_jump(ts: pd.DataFrame, arrival: float) -> float:
    """The video's largest burst inter-arrival d in the second after `arrival` over its median
    in the second before."""
    before = window(ts, "flow", "video", arrival - 1.0, arrival)["cc_d_ms"].to_numpy(dtype=float)
    after = window(ts, "flow", "video", arrival, arrival + 1.0)["cc_d_ms"].to_numpy(dtype=float)
    before, after = before[np.isfinite(before)], after[np.isfinite(after)]
    if not (before.size and after.size):
        return math.nan
    return safe_div(float(after.max()), float(np.median(before)))


def paced_ratio(ts: pd.DataFrame, windows: Sequence[tuple[float, float]]) -> float:
    """Mean d~/d of the video flow over the bins of `windows`."""
    import pandas as pd

    parts = [window(ts, "flow", "video", t0, t1) for t0, t1 in windows]
    if not parts:
        return math.nan
    v = pd.concat(parts)
    r = (v["cc_d_tilde_ms"] / v["cc_d_ms"]).to_numpy(dtype=float)
    r = r[np.isfinite(r)]
    return float(r.mean()) if r.size else math.nan


def stretched(ts: pd.DataFrame, t0: float, t1: float) -> tuple[float, float]:
    """The share of the video's paced inter-arrival samples in [t0, t1) that a competitor
    stretched (at least receiver::STRETCHED·d: another packet's service time between the two
    paced packets), and their mean length in d; NaN without samples. From the receiver's
    cumulative counts (telemetry `paced_samples`, `paced_stretched`, `paced_stretch_sum`)."""
    cols = ["cc_paced_samples", "cc_paced_stretched", "cc_paced_stretch_sum"]
    v = ts[ts["flow"] == "video"]
    if not set(cols) <= set(v.columns):
        return math.nan, math.nan
    v = v[np.isfinite(v["cc_paced_samples"].to_numpy(dtype=float))]
    before, upto = v[v["t_s"] < t0], v[v["t_s"] < t1]
    if upto.empty:
        return math.nan, math.nan
    end = upto.iloc[-1][cols].to_numpy(dtype=float)
    start = before.iloc[-1][cols].to_numpy(dtype=float) if len(before) else np.zeros(3)
    samples, hits, total = end - start
    return safe_div(hits, samples), safe_div(total, hits)


#: 1f: the flag holds in a phase when it is up in this share of its frames (also the claim's margin;
#: the paper: "reasonably consistent ... a few isolated instances of incorrect detection", no number).
FLAG_HOLDS = 0.9
#: 1g: "shortly after its introduction" (no number): the first detection within this long of the
#: arrival.
DETECT_WITHIN_S = 1.0


@dataclass(frozen=True)
class Fig9:
    """The flag in the forward-competition run (`det`, by phase, with the joins shifted), the
    diagnostics of the phases where it is weak, and the detection times across seeds."""

    det: dict[str, float]
    #: The flag's accuracy while competitors are present, per seed (1f).
    accuracy: list[float]
    by_phase: dict[int, float]
    cubic_share: dict[int, float]
    shifted: dict[float, dict[int, float]]
    reverse_false_alarm: float
    timeouts: list[tuple[int, int, float]]
    d_jump: list[float]
    drop: float
    paced_ratio: float
    times: list[float]
    #: By phase: d~/d averaged over its bins, and (share of the paced gaps stretched, their mean
    #: length in d), first seed.
    ratio_by_phase: dict[int, float]
    stretch: dict[int, tuple[float, float]]
    #: The forward CUBIC flows' median RTT over the phases with 3 or more of them (ms), first seed.
    cubic_rtt_ms: float
    #: 1f diagnostics, runs without the timestamp noise only (empty otherwise): the same runs with
    #: the CUBIC flows paced on the default stack (the flag's accuracy per seed, the stretch by
    #: phase of the first seed), and the accuracy (median over seeds) by the CUBIC flows' RTT (ms),
    #: the scenario's own included.
    paced_accuracy: list[float]
    paced_stretch: dict[int, tuple[float, float]]
    by_cubic_rtt: dict[float, float]
    #: The video's frame interval and RTT (ms), from the scenario.
    frame_ms: float
    video_rtt_ms: float

    @property
    def weak(self) -> list[int]:
        return [n for n in self.by_phase if self.by_phase[n] < FLAG_HOLDS]


def fig9(runs: Runs, plan: Plan, capacity: float, noise: bool) -> Fig9:
    """Fig. 9 from experiment 1's runs (`noise`: with the receive-timestamp noise); the
    diagnostics from the first seed, the accuracy per seed, the detection times over plan.seeds."""
    n_comp, arrivals = plan.n_comp, plan.arrivals
    fwd = ("fwd", n_comp)
    fwd_frames, fwd_ts = runs.frames(fwd), runs.ts(fwd)

    def flag_by_phase(fr: pd.DataFrame) -> dict[int, float]:
        return {n: flag_rate(fr, *plan.phase(n)) for n in range(1, n_comp + 1)}

    def cubic_share(n: int) -> float:
        flows = (window(fwd_ts, "flow", f"fwd{k}", *plan.phase(n)) for k in range(1, n + 1))
        return float(sum(f["throughput_mbps"].mean() for f in flows)) / capacity

    by_phase = flag_by_phase(fwd_frames)
    weak = [n for n in by_phase if by_phase[n] < FLAG_HOLDS]
    name = "detection-seeds" if noise else "detection-seeds-plain"
    seeded = runs.ctx.sweep_labeled(name, SCENARIO, {"detect": detect_point(noise)}, seeds=plan.seeds)
    seed_runs = Runs(runs.ctx, name, seeded)

    def accuracy(key: tuple[str, Any]) -> list[float]:
        if key not in runs.res:
            return []
        return [detection_accuracy(runs.frames(key, s), arrivals)["accuracy"] for s in range(runs.seeds)]

    file = runs.ctx.scenario_file(SCENARIO)
    by_rtt = {k[1]: float(np.median(accuracy(k))) for k in runs.res if k[0] == "fwd-rtt"}
    if by_rtt:
        by_rtt[file.rtt_ms("fwd1")] = float(np.median(accuracy(fwd)))
    return Fig9(
        det=detection_accuracy(fwd_frames, arrivals),
        accuracy=accuracy(fwd),
        by_phase=by_phase,
        cubic_share={n: cubic_share(n) for n in range(1, n_comp + 1)},
        shifted={k[1]: flag_by_phase(runs.frames(k)) for k in runs.res if k[0] == "fwd-shift"},
        reverse_false_alarm=flag_rate(runs.frames(("rev", n_comp))),
        timeouts=fwd_timeouts(runs.run_dir(fwd), n_comp),
        d_jump=[d_jump(fwd_ts, a) for a in arrivals],
        drop=first_drop(fwd_frames, arrivals[0] + 1.0),
        paced_ratio=paced_ratio(fwd_ts, [plan.phase(n) for n in weak]),
        times=[
            detection_accuracy(seed_runs.frames("detect", s), [COMPETITOR_EVERY_S])["detect_s"]
            for s in range(plan.seeds)
        ],
        ratio_by_phase={n: paced_ratio(fwd_ts, [plan.phase(n)]) for n in range(1, n_comp + 1)},
        stretch={n: stretched(fwd_ts, *plan.phase(n)) for n in range(1, n_comp + 1)},
        cubic_rtt_ms=_cubic_rtt(fwd_ts, plan),
        paced_accuracy=accuracy(("fwd-paced", n_comp)),
        paced_stretch=(
            {n: stretched(runs.ts(("fwd-paced", n_comp)), *plan.phase(n)) for n in range(1, n_comp + 1)}
            if ("fwd-paced", n_comp) in runs.res
            else {}
        ),
        by_cubic_rtt=dict(sorted(by_rtt.items())),
        frame_ms=1e3 / float(file.flow("video")["traffic"]["fps"]),
        video_rtt_ms=file.rtt_ms("video"),
    )


def _cubic_rtt(ts: pd.DataFrame, plan: Plan) -> float:
    """The median RTT (ms) of the forward CUBIC flows present over the phases with 3 or more."""
    import pandas as pd

    parts = [
        window(ts, "flow", f"fwd{k}", *plan.phase(n))
        for n in range(min(3, plan.n_comp), plan.n_comp + 1)
        for k in range(1, n + 1)
    ]
    rtt = pd.concat(parts)["rtt_ms"].to_numpy(dtype=float)
    rtt = rtt[np.isfinite(rtt)]
    return float(np.median(rtt)) if rtt.size else math.nan


def detect_point(noise: bool) -> dict[str, Any]:
    """One CUBIC flow joins at COMPETITOR_EVERY_S of a DETECT_RUN_S run (`noise`: with the
    receive-timestamp noise)."""
    return (
        cca(DEFAULT_BURST, DEFAULT_ALPHA)
        | competitors("fwd", 1)
        | {"duration": f"{DETECT_RUN_S:g}s"}
        | ({} if noise else NO_NOISE)
    )


def add_rows(table: Table, plain: Fig9, noise: Fig9, plan: Plan) -> None:
    """Fig. 9's rows of experiment 1's table: without the timestamp noise in the second column,
    with it in the fourth (first seed, except the per-seed columns named so)."""

    def row(label: str, a: str, b: str) -> None:
        table.add(label, a, "", b, "")

    for n in noise.by_phase:
        row(
            f"Fig. 9: flag up with {n} forward CUBIC flow(s) (CUBIC share of the link "
            f"{pct(plain.cubic_share[n])} / {pct(noise.cubic_share[n])})",
            pct(plain.by_phase[n]),
            pct(noise.by_phase[n]),
        )
    for shift, flags in noise.shifted.items():
        row(
            f"Fig. 9 (1f diagnostic): flag up with 1–{plan.n_comp} forward CUBIC flows, every join "
            f"{shift:g} ms later",
            "",
            " / ".join(pct(flags[n]) for n in flags),
        )
    if plain.paced_accuracy:
        row(
            "Fig. 9 (1f diagnostic): flag up while forward competitors are present, the CUBIC flows "
            f"paced on the default stack ({PACED_STACK}), per seed",
            " / ".join(pct(x) for x in plain.paced_accuracy),
            "",
        )
    if plain.by_cubic_rtt:
        row(
            "Fig. 9 (1f diagnostic): flag up while forward competitors are present, the CUBIC flows' "
            f"RTT {' / '.join(num(r) for r in plain.by_cubic_rtt)} ms (median over seeds)",
            " / ".join(pct(x) for x in plain.by_cubic_rtt.values()),
            "",
        )
    row(
        "Fig. 9: paced gaps stretched by a competitor (at least "
        f"{num(STRETCHED)} d) with 1–{plan.n_comp} forward CUBIC flows, and their mean length",
        _stretch_cell(plain.stretch),
        _stretch_cell(noise.stretch),
    )
    row(
        "Fig. 9: flag up while forward competitors are present "
        f"({num(GRACE_S)} s after each arrival left out), per seed",
        " / ".join(pct(x) for x in plain.accuracy),
        " / ".join(pct(x) for x in noise.accuracy),
    )
    row(
        "Fig. 9: flag up before the first competitor (false alarms)",
        pct(plain.det["false_alarm"]),
        pct(noise.det["false_alarm"]),
    )
    row(
        "flag up with reverse competitors only (false alarms)",
        pct(plain.reverse_false_alarm),
        pct(noise.reverse_false_alarm),
    )
    row(
        f"detection time of one CUBIC flow joining at {num(COMPETITOR_EVERY_S)} s, {plan.seeds} seeds",
        ", ".join(seconds(x, 2) for x in plain.times),
        ", ".join(seconds(x, 2) for x in noise.times),
    )


def _stretch_cell(stretch: dict[int, tuple[float, float]]) -> str:
    """ "11.8 % (3.4 d) / 11.8 % (2.9 d) / ..." by the number of flows present."""
    return " / ".join(f"{pct(a)} ({fmt(b, 1)} d)" for a, b in stretch.values())


def _by_phase(f: Fig9) -> str:
    """The flag's share of frames per number of forward CUBIC flows, and their share of the link."""
    return (
        f"The flag holds with {', '.join(f'{n}: {pct(f.by_phase[n])}' for n in f.by_phase)} "
        "forward CUBIC flows present (CUBIC carries "
        f"{', '.join(pct(f.cubic_share[n]) for n in f.cubic_share)} of the link)."
    )


#: 1f: how the receiver pairs paced packets, and why that matters at a full queue.
PAIRING = """The receiver pairs the paced packets of a frame as they are received, also
    across a loss: at a full drop-tail queue every admitted packet waits the same, so a competitor's
    packet does not stretch the gap between two adjacent video packets but takes the slot of one,
    which is dropped, and shows only as the longer gap around that loss. Pairing adjacent packets
    only (before issue 19) discarded those gaps: once PIBES, which does not back off on loss, kept
    the queue full, d~ = d, the flag went off and PIBES took about 70 % of the link beside 3 and 4
    CUBIC flows."""


def _holds_note(f: Fig9) -> str:
    """1f's note when the flag holds in every phase."""
    return prose(f"{_by_phase(f)} {PAIRING}")


def _stretch_text(stretch: dict[int, tuple[float, float]]) -> str:
    """ "11.8 %, 4.2 %, ... of the paced gaps are stretched, by 3.4, 2.5, ... d on average" (by
    the number of flows present)."""
    shares = ", ".join(pct(v[0]) for v in stretch.values())
    lengths = ", ".join(fmt(v[1], 1) for v in stretch.values())
    return f"{shares} of the paced gaps are stretched, by {lengths} d on average"


def _ratios(f: Fig9, ns: Sequence[int]) -> str:
    return ", ".join(fmt(f.ratio_by_phase[n], 2) for n in ns)


def _mechanism(f: Fig9, plan: Plan) -> str:
    """1f's cause, from the diagnostics of the runs without the timestamp noise: how rarely and in
    what clumps the Linux model's CUBIC stretches a paced gap against the default stack's paced
    CUBIC, why (the ACK clock against the frame clock), the flag by the CUBIC flows' RTT, and how
    the share FSM turns a flickering flag into a higher share."""
    n_comp = plan.n_comp
    few, many = [n for n in f.by_phase if n <= 2], [n for n in f.by_phase if n > 2]
    frame_ms = f.frame_ms
    d_note = (
        ", and d stays at the capacity's P/C here (no competitor's packet gets inside a burst: "
        f"it peaks at {', '.join(ratio(j) for j in f.d_jump)} its median in the second after each "
        "arrival)"
        if all(j <= 1 + BETA for j in f.d_jump)
        else ""
    )
    rtts = ", ".join(num(r) for r in f.by_cubic_rtt)
    flags = ", ".join(pct(a) for a in f.by_cubic_rtt.values())
    return prose(
        f"""
        The rule is implemented as the paper gives it (d from pairs of burst packets, d~ from
        pairs of paced packets of one frame received in a row, α = {num(DEFAULT_ALPHA)} per
        sample, c = d~ > (1 + β)·d, no hysteresis){d_note}, so the flag falls only with d~:
        when too few paced gaps hold a competitor's packet. A paced gap of at least
        {num(STRETCHED)} d holds at least one other packet's service time: with 1–{n_comp}
        forward CUBIC flows on the Linux model {_stretch_text(f.stretch)}; with the same flows
        paced on the default stack ({PACED_STACK}, 1.2 cwnd/srtt; the runs are otherwise the
        same) {_stretch_text(f.paced_stretch)}, and the flag is up in
        {pct(float(np.median(f.paced_accuracy)))} of the frames (median over
        {len(f.paced_accuracy)} seeds; 1f's measure). Unpaced and ACK-clocked, a CUBIC flow
        sends only when an ACK arrives, so its packets reach the queue in clumps (a delayed ACK
        releases two or more at once) at the times its earlier packets left the bottleneck plus
        its RTT ({fmt(f.cubic_rtt_ms, 0)} ms with the queue full, median of the flows with 3
        and 4 present, {fmt(f.cubic_rtt_ms / frame_ms, 2)} frame intervals of
        {fmt(frame_ms, 1)} ms). Both clocks are periodic, so where the clumps fall in the
        video's frame cycle repeats from one RTT to the next instead of spreading over it, as
        the paper's intuition (Fig. 3) assumes and paced packets do; clumps that reach the queue
        after a frame's last paced packet queue between two frames and stretch no paced gap. How
        the two clocks line up depends on the CUBIC flows' RTT: with it at {rtts} ms (the
        video's stays {num(f.video_rtt_ms)} ms) the flag is up in {flags} of the frames (median
        over seeds). With {" and ".join(str(n) for n in few)} flows the clumps that do land in a
        paced part lift d~ above (1 + β)·d for a few frames until the EWMA decays it again, so
        the flag flickers although d~/d averages {_ratios(f, few)}. Each frame without the flag
        raises s_k by Δ = {num(DELTA)} towards s_max, and the next detection cuts it only to
        s_share = {num(S_SHARE)}: PIBES sends more, its paced parts grow and the CUBIC flows
        keep less of the link, so with {" and ".join(str(n) for n in many)} flows d~/d averages
        only {_ratios(f, many)}, about 1 + β = {num(1 + BETA)}, and the flag is down whenever
        d~ dips below it. The paper gives no RTT or queue for Figs. 6–9 (ours are those of its
        later experiments). This is the paper's rule meeting unpaced, ACK-clocked TCP, as the
        kernel's is, not a deviation of ours; the criterion stays.
        """
    )


def _flicker_why(f: Fig9, plan: Plan, queue: str) -> str:
    """1f's why, when the flag is weak in some phase: what the run shows there."""
    n_comp, arrivals = plan.n_comp, plan.arrivals
    dropped_after = max((k for k, a in enumerate(arrivals, 1) if a <= f.drop), default=0)
    jumps = ", ".join(ratio(j) for j in f.d_jump)
    into_burst = any(j > 1 + BETA for j in f.d_jump)
    d_at_arrivals = (
        f"""in the second after each arrival the burst estimate d peaks at {jumps} its median of
        the second before (above 1 + β = {num(1 + BETA)} when a newcomer's first window landed
        inside a PIBES burst)."""
        if into_burst
        else f"""the burst estimate d does not move at the arrivals (its peak in the second
        after each is {jumps} its median of the second before)."""
    )
    mechanism = bool(f.paced_accuracy and f.by_cubic_rtt)
    cause = (
        _mechanism(f, plan)
        if mechanism
        else prose(
            f"""
            With 1–{n_comp} flows {_stretch_text(f.stretch)} (at least {num(STRETCHED)} d: another
            packet's service time between two paced packets), and d~/d averages
            {_ratios(f, list(f.by_phase))}: the cause is 1f's (the timestamp noise, at most a
            millisecond, does not spread CUBIC's clumps over the frame cycle).
            """
        )
    )
    return prose(
        f"""
        {_by_phase(f)} {cause} The CUBIC flows are not stalled in timeouts: over their lifetimes
        (fwd1–fwd{n_comp}) they fired {", ".join(str(t[0]) for t in f.timeouts)} probe
        timeouts and declared persistent congestion (a window collapse, our counterpart of a
        TCP RTO) {", ".join(str(t[1]) for t in f.timeouts)} times, and lost
        {", ".join(pct(t[2]) for t in f.timeouts)} of their packets in the {queue} drop-tail
        queue. The flag first drops at {seconds(f.drop, 2)}, after flow {dropped_after}
        joined{"." if mechanism and not into_burst else "; " + d_at_arrivals} {PAIRING}
        """
    )


def claims(f: Fig9, plan: Plan, queue: str, knob: str = "") -> list[Reproduction]:
    """1f, 1g: the flag holds while a competitor is present, and rises within a second (`knob`: the
    runs' knob, which labels the rows and their ids)."""
    suffix = "-noise" if knob else ""
    return [
        Reproduction.judge(
            "1f" + suffix,
            "Fig. 9",
            "the competing flow is detected and the detection holds while it is present "
            f"({num(GRACE_S)} s after each arrival left out)",
            "consistent, few isolated errors",
            f.accuracy,
            AtLeast(FLAG_HOLDS, paper_number=False),
            pct,
            _flicker_why(f, plan, queue) if f.weak else (_by_phase(f) if knob else _holds_note(f)),
            knob,
        ),
        Reproduction.judge(
            "1g" + suffix,
            "Fig. 9 (issue)",
            f"a competitor's arrival is detected soon: time to the first flagged frame, {plan.seeds} seeds",
            "shortly after its introduction",
            f.times,
            AtMost(DETECT_WITHIN_S, paper_number=False),
            lambda v: seconds(v, 2),
            knob=knob,
        ),
    ]
