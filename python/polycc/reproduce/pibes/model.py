"""What every PIBES experiment shares: PIBES's and the paper's constants, the two protocols as run
(PIBES and WebRTC's GCC, see the package notes), and the frame-delay lower bound of a scenario."""

from __future__ import annotations

from typing import Any

from polycc.reproduce.common import QUICK_SEEDS as QUICK_SEEDS
from polycc.reproduce.common import SEEDS as SEEDS
from polycc.reproduce.common import Context, num
from polycc.reproduce.scenario_file import ScenarioFile, rate_mbps, size_text
from polycc.video import frame_delay_lower_bounds

#: §IV: the share FSM's s_max; the frame-delay "lower bound" of Figs. 10 and 12 sends at it.
S_MAX = 0.95
#: §IV: s_min, the share PIBES keeps against competing flows.
S_MIN = 0.5
#: §III: the competing flag rises when d~ >= (1 + β)·d.
BETA = 0.1
#: §IV: Δ, the share's climb per frame while the flag is down (up to s_max).
DELTA = 0.05
#: §IV: s_share, the share on detecting a competing flow (and the ceiling while competing).
S_SHARE = 0.8
#: Ours (1f diagnostic): the receiver counts a paced gap of at least this many d as stretched by
#: a competitor's packet (receiver::STRETCHED in crates/polycc/src/algos/pibes/receiver.rs).
STRETCHED = 1.5
#: §IV-B f): the application's minimum rate of Fig. 17.
FIG17_R_MIN_MBPS = 1.5

#: WebRTC as the paper ran it: GCC paced at 2.5× the target, the encoder's floor 30 kbit/s, and
#: its defaults: the 300 kbit/s start rate and start-up probing (clusters at 3× and 6× it, then
#: at twice each result that keeps up).
GCC: dict[str, Any] = {"name": "gcc", "pacing_factor": 2.5}
GCC_ENCODER_MIN = "30Kbps"
CCAS: dict[str, dict[str, Any]] = {
    "PIBES": {"flows.0.cca": "pibes"},
    "GCC": {"flows.0.cca": GCC, "flows.0.traffic.min_rate": GCC_ENCODER_MIN},
}
#: Trace files, relative to the scenario directory (the shared traces next to the checkout).
TRACES = {"3g": "cellular-3g.toml", "4g": "cellular-4g.toml"}
#: Table 1: the video flow's utilisation with 0, 1 and 2 competing TCP flows, as the paper gives it.
PAPER_TABLE_1 = {"WebRTC": ("73 %", "24 %", "8 %"), "Salsify": ("92 %", "37 %", "35 %")}
#: The knob of experiment 1 that is ours, not the paper's: receive-timestamp noise (estimation.toml).
NOISE_KNOB = "U[0, 1 ms] receive-timestamp noise"
#: A flow moved past the end of a run is absent.
ABSENT = "1000s"
#: Utilisation and frame delays are measured from here on (start-up left out).
SETTLE_S = 2.0


def lower_bound_ms(file: ScenarioFile) -> float:
    """Fig. 10b / 12b lower bound on the video flow's frame delay: a frame of s_max·C·T bytes sent
    at the capacity C takes s_max·T, plus the one-way delay (independent of C)."""
    return frame_delay_lower_bounds(file.doc, S_MAX)["video"]


def gcc_floor() -> str:
    """WebRTC's encoder floor ("30 kbit/s")."""
    return f"{num(rate_mbps(GCC_ENCODER_MIN) * 1e3)} kbit/s"


def gcc_as_run() -> str:
    """ "paced at 2.5×, encoder floor 30 kbit/s"."""
    return f"paced at {num(GCC['pacing_factor'])}×, encoder floor {gcc_floor()}"


def path(file: ScenarioFile) -> str:
    """The path every experiment shares: "one-way delay 20 ms, 50-packet drop-tail queue"."""
    return f"one-way delay {num(file.one_way_ms())} ms, {size_text(file.buffer())} drop-tail queue"


#: Where each run's PIBES state is plotted (results.py writes it).
VIDEO_PNG = "each PIBES run's `video.png` shows the estimate, the share s_k and the competing flag over time"


def seeds(ctx: Context) -> int:
    """How many scenario seeds each claim runs over."""
    return QUICK_SEEDS if ctx.quick else SEEDS
