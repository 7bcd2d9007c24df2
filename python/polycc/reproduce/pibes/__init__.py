"""PIBES (Heimbach, Guo, Ngan & Lee, "PIBES – A Competing-Flow-Aware Protocol for Real-Time Video
Applications", IEEE OJ-COMS, seed text 002) reproduced in the simulator, with our GCC as the
paper's "WebRTC" row. Salsify, the paper's third protocol, is out of scope (codec-coupled).

One module per experiment, each with a `run(ctx) -> Section` (scenario files in
scenarios/papers/pibes/): `estimation` (with `estimation_runs` and `detection`), `fixed`,
`cellular`, `ramp`, `competing`, `varying`; `model` holds the paper's constants and the protocols
as run, `measures` and `plots` what several experiments read and draw. The pass criteria are the
paper's claims with margins, fixed beside each claim before and independently of the results.
`ctx.quick` selects shortened versions used by the tests.

GCC is run as WebRTC runs it: paced at 2.5× its target (WebRTC's `kDefaultPaceMultiplier`),
starting at WebRTC's 300 kbit/s with its start-up probes (see `model.GCC`), and with the encoder's
minimum bitrate as its only floor, WebRTC's 30 kbit/s (`kMinVideoBitrateBps`,
media/engine/constants.cc). The realtime_video intent's `min_rate` floors GCC's rate (WebRTC's
bitrate allocator never asks an encoder for less than its minimum), so a 0.5 Mbit/s encoder
floor would hide GCC's starvation behind competing TCP (12.5 % of 4 Mbit/s); the GCC rows
therefore use a 30 kbit/s encoder floor. PIBES keeps the scenarios' R_min = 0.5 Mbit/s (eq. 5;
the paper sets it only for Fig. 17), which is below every share it reaches here.
"""

from __future__ import annotations

from collections.abc import Callable

from polycc.reproduce.common import Context, Section
from polycc.reproduce.pibes import cellular, competing, estimation, fixed, ramp, varying

__all__ = ["TITLE", "experiments"]

TITLE = "PIBES: competing-flow-aware real-time video transport (IEEE OJ-COMS), with WebRTC's GCC"


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        estimation.run,
        fixed.run,
        cellular.run,
        ramp.run,
        competing.run,
        varying.run,
    ]
    return [step(ctx) for step in steps]
