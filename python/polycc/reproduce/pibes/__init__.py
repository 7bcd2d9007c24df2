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

from polycc.reproduce.common import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    MODE_COVERAGE,
    MODE_GAP_MIN_SHARE,
    MODE_GAP_OVER_SPREAD,
    MODE_MIN_RUNS,
    Context,
    Section,
    num,
    pct,
    prose,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL
from polycc.reproduce.pibes import cellular, competing, estimation, fixed, ramp, varying
from polycc.reproduce.pibes.model import SEEDS

__all__ = ["PREAMBLE", "TITLE", "closing", "experiments"]

TITLE = "PIBES: competing-flow-aware real-time video transport (IEEE OJ-COMS), with WebRTC's GCC"


PREAMBLE = [
    prose(
        f"""
        **How the claims are judged (issue 19).** Each criterion is the paper's number with a
        tolerance stated in the criterion column (± points of a share, × a factor of a ratio, the
        same side of 1 or 0 for "better / lower than"); where the paper prints no number the
        column says so and the experiment's notes justify the tolerance. The criteria were fixed
        in the code before the runs. Every claim is measured over {SEEDS} scenario seeds (1g over
        10) and "ours" is the **median** over seeds with its {pct(CONFIDENCE, 0)} interval in
        brackets (bootstrap percentile interval of the median, {BOOTSTRAP_RESAMPLES} resamples);
        the verdict is taken on the median. An outcome of {MODE_MIN_RUNS} or more runs is **bimodal**
        when the largest gap between the sorted per-seed values is more than
        {num(MODE_GAP_OVER_SPREAD)}× the range of each side and more than
        {pct(MODE_GAP_MIN_SHARE, 0)} of the largest value
        (`polycc.reproduce.common.split_modes`); "ours" then lists each mode's median with its
        frequency, and the claim holds only if the modes whose median meets the criterion cover at
        least {pct(MODE_COVERAGE, 0)} of the runs. Rows marked *with ... (ours, not the paper's
        setup)* and ids ending in "-noise" repeat a claim with a knob we added; they are not
        counted in the summary.
        """
    ),
    prose(
        f"""
        **Which stack carries which flow.** The competing TCP flows (every CUBIC flow: the
        forward and reverse competitors of section 1, the TCP flows beside the video of the
        cellular, ramp and competing-traffic sections) were the Linux kernel's CUBIC on the
        paper's Ubuntu 18.04 testbed; they run on {LINUX_MODEL}. PIBES and our GCC ("WebRTC")
        are application-level protocols over UDP and run on polycc's transport, the default stack.
        """
    ),
]

#: The criteria before issue 19 (all 33 claims held under them), for the closing list.
OLD_CRITERIA = {
    "1a": "<= 5.00 %",
    "1b": "<= 0.25",
    "1c": ">= 2.0× (std only)",
    "1d": "<= 2.00 %",
    "1e": "<= 2.00 %",
    "1f": ">= 90.0 %",
    "1g": ">= 90 % of seeds within 1 s",
    "2a": ">= 90.0 %",
    "2b": "0.80× .. 1.10×",
    "2c": "PIBES − GCC >= 0 points",
    "3a": ">= 80.0 %",
    "3b": ">= 80.0 %",
    "3c": ">= +0.0 points",
    "3d": "PIBES − GCC >= 0 points",
    "4a": ">= 85.0 %",
    "4b": ">= +0.0 points",
    "4c": "<= 1.50×",
    "5a": ">= 60.0 %",
    "5b": "<= 35.0 %",
    "5c": "<= 15.0 %",
    "5d": "40.0 % .. 65.0 %",
    "5e": "40.0 % .. 65.0 %",
    "5f": "<= 10.0 points",
    "5g": ">= 2.0×",
    "5h": ">= 85.0 %",
    "5i": "<= 0.8×",
    "6a": ">= 40.0 %",
    "6b": "<= 35.0 %",
    "6c": ">= 1.5×",
    "6d": ">= 40.0 %",
    "6e": "<= 35.0 %",
    "6f": ">= 1.42 Mbit/s",
    "6g": ">= 0.900",
}
#: Why a claim's verdict changed under issue 19's criteria, where found (kept by hand, written
#: after the runs; a claim missing here reads "cause not investigated").
CHANGE_WHY: dict[str, str] = {
    "5g": "Now the issue's 6.2× within ×1.5 (before: >= 2×). PIBES and GCC run on the default "
    "stack, which since this criterion was set counts what QUIC counts (the UDP payload, 1472 of "
    "each 1500-byte packet): beside the two Linux-model CUBIC flows PIBES carries 57.9 % of the "
    "link (61.5 % when the stack counted whole packets), and the ratio to GCC fell from 4.4× to "
    "3.8×, under the band's 4.2×.",
    "1b": "The claims 1a–1g now run without our receive-timestamp noise: then every burst size "
    "estimates C exactly (std 0), so there is no precision to gain and the ratio is 0/0; it holds "
    "only in the labelled row 1b-noise, i.e. the burst-size effect appears here only with a timing "
    "noise we model roughly.",
    "1c": "As 1b: without the timestamp noise every α estimates C exactly, so neither accuracy nor "
    "precision can fall with α (0/0); only 1c-noise holds (before, only the std ratio was asked, "
    ">= 2×; now both ratios > 1, the paper's sentence).",
    "2c": "The criterion is now the paper's number for WebRTC alone (Table 1, 73 %), not \"below "
    'PIBES": our GCC has no internal bitrate cap (the cap the authors suspect behind the 73 %) and '
    "fills the link to its delay-based limit.",
    "3d": "The paper says all protocols hit their bitrate cap on 4G, so GCC is now held to it, not "
    'to "below PIBES": see 3d\'s note.',
    "5a": "The criterion is now Table 1's 73 % ± 10 points (before: >= 60 %); our GCC has no "
    "internal bitrate cap (as 2c).",
    "1f": "The forward CUBIC flows now run on the Linux model (issue 19), unpaced and ACK-clocked "
    "(the default stack paced them at 1.2 cwnd/srtt). Their packets reach the queue in clumps whose "
    "place in the 30 fps frame cycle the ACK clock repeats from one RTT to the next, so few of "
    "PIBES's paced gaps hold one: the paper's rule, implemented as written, flickers beside one and "
    "two flows and, as PIBES's share climbs by Δ whenever the flag is down, misses three and four "
    "flows squeezed to about a fifth of the link. Beside the same flows paced the flag holds, and "
    "how often it holds beside the unpaced ones depends on their RTT (worst at 35–40 ms): see 1f's "
    "note for the numbers. Not a deviation of ours (the paper gives no RTT or queue for Fig. 9); "
    "the criterion stays.",
    "5e": "The CUBIC flows now run on the Linux model (issue 19), unpaced and ACK-clocked: beside "
    "them PIBES's flag flickers for 1f's reason, its share s_k climbs by Δ between detections and it "
    "carries just above the band; beside the same two flows paced on the default stack it holds "
    "s_min (see 5e's note for the numbers). Not a deviation of ours; the criterion stays.",
    "6d": "The criterion is now two-sided around s_min as in 5d (before: >= 40 %): PIBES carries "
    "about three quarters of the 3G link beside the Linux model's CUBIC (two thirds beside the "
    "default stack's), for the reasons in 6d's note.",
}


def closing(sections: list[Section]) -> list[str]:
    """Markdown closing the section: the claims whose verdict changed from before issue 19 (one
    seed, the old criteria, 1a-1g with the timestamp noise), each with its old and new criterion
    and why."""
    items = []
    for r in (r for s in sections for r in s.reproductions):
        if r.knob or r.id not in OLD_CRITERIA or r.holds:
            continue
        why = CHANGE_WHY.get(r.id, "Cause not investigated.")
        items.append(
            f"- **{r.id}** held before issue 19 ({OLD_CRITERIA[r.id]}, one seed) and does not now: "
            f"{r.ours} against {r.criterion}. {why}"
        )
    head = (
        f"**Verdicts changed by issue 19** (before: {len(OLD_CRITERIA)} of {len(OLD_CRITERIA)} held, "
        "one seed, the old criteria in brackets; 1a–1g were then run with the timestamp noise, as "
        'the rows ending in "-noise" are now)' + (":" if items else ": none.")
    )
    return [head, "", *items] if items else [head]


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
