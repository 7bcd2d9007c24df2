"""The PCC family's published results: PCC Allegro (Dong et al., NSDI'15, seed text 001) and PCC
Proteus (Meng et al., SIGCOMM'20, seed text 000, with its BBR-S), reproduced in the simulator.
PCC Vivace (NSDI'18) runs as one of Proteus's primaries.

One module per experiment, each with a `run(ctx) -> Section` (scenario files in
scenarios/papers/pcc/): `allegro_*` for Allegro's figures, `proteus_*` for Proteus's; `shared`
holds what several of them use (with the tolerances of issue 19). The pass criteria are the
papers' numbers with a stated tolerance, fixed beside each claim before and independently of the
results; every claim is measured over `shared.SEEDS` scenario seeds. `ctx.quick` selects
shortened versions (shorter runs, fewer points and seeds) used by the tests.
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
    changed_verdicts,
    jain,
    num,
    pct,
    prose,
)
from polycc.reproduce.kernel_tcp import LINUX_MODEL
from polycc.reproduce.pcc import (
    allegro_changing_network,
    allegro_convergence,
    allegro_fq_power,
    allegro_incast,
    allegro_random_loss,
    allegro_rtt_fairness,
    allegro_satellite,
    allegro_shallow_buffer,
    allegro_short_flows,
    allegro_tcp_friendliness,
    proteus_applications,
    proteus_bbr_s,
    proteus_scavenger,
    proteus_video,
)
from polycc.reproduce.pcc.allegro_changing_network import changing_network_schedule, changing_network_toml
from polycc.reproduce.pcc.allegro_two_flow import convergence_time
from polycc.reproduce.pcc.shared import (
    BOUND_POINTS,
    FAIR_JAIN,
    RATIO_FACTOR,
    SEEDS,
    SEND_JITTER_KNOB,
    SHARE_POINTS,
)

__all__ = [
    "OLD_CRITERIA",
    "PREAMBLE",
    "TITLE",
    "changing_network_schedule",
    "changing_network_toml",
    "closing",
    "convergence_time",
    "experiments",
    "jain",
]

TITLE = "PCC family: Allegro (NSDI'15) and Proteus (SIGCOMM'20)"

PREAMBLE = [
    prose(
        f"""
        **How the claims are judged (issue 19).** Each criterion is the paper's number with a
        tolerance stated in the criterion column, fixed in the code before the runs: a ratio the
        paper prints ("10×") within ×{num(RATIO_FACTOR)} of it either way; a share it prints as a
        measured value ("74 %") within ± {num(SHARE_POINTS)} points; a share it prints as a bound
        ("> 95 %", "within 97 %") at most {num(BOUND_POINTS)} points below it, because our goodput
        counts application payload only, at most 96.2 % of the link rate here; "better than"
        strictly on the paper's side; "fair" where no index is printed as Jain's index >=
        {num(FAIR_JAIN)}. Where the paper prints no number the column says so and the criterion's
        comment in the code justifies the tolerance. Every claim is measured over {SEEDS}
        scenario seeds and "ours" is the **median** over seeds with its {pct(CONFIDENCE, 0)}
        interval in brackets (bootstrap percentile interval of the median, {BOOTSTRAP_RESAMPLES}
        resamples); the verdict is taken on the median. An outcome of {MODE_MIN_RUNS} or more runs
        is **bimodal** when the largest gap between the sorted per-seed values is more than
        {num(MODE_GAP_OVER_SPREAD)}× the range of each side and more than
        {pct(MODE_GAP_MIN_SHARE, 0)} of the largest value (`polycc.reproduce.common.split_modes`;
        PCC near its 5 % loss knee is bistable); "ours" then lists each mode's median with its
        frequency, and the claim holds only if the modes whose median meets the criterion cover at
        least {pct(MODE_COVERAGE, 0)} of the runs. The Allegro scenario files give every sender
        {SEND_JITTER_KNOB}, a knob added to the simulator's exact pacing (section 1's after 1e/1f failed
        without it); the rows judged first
        override it to exact pacing, and rows marked *with ... (ours, not the paper's setup)*,
        ids ending in "-jitter", repeat a claim with it; they are not counted in the summary.
        """
    ),
    prose(
        f"""
        **Which stack carries which flow.** The papers' TCP baselines were their testbeds' Linux
        kernel TCP; where the controller has a model they run on {LINUX_MODEL}: Allegro's CUBIC
        (sections 1–4 and 6) and New Reno (section 5, the kernel's `reno`), and Proteus' CUBIC
        and BBR (v1), as primaries (section 7) and as BBR-S's competitors (section 8). On the
        default stack stay the PCC family, Copa and the scavengers (the papers' own user-space
        protocols), Allegro's paced New Reno (section 2: the paper's own implementation, with a
        pacing the kernel of 2015 lacked), Illinois and Hybla (kernel controllers the Linux model
        lacks), and BBR-S (the paper's modified kernel BBR, which the model lacks). The table
        rows keep polycc's names (`cubic`, `newreno`, `bbr`).
        """
    ),
]

#: The criteria and verdicts before issue 19 (25 of 29 held; one seed except section 1's five,
#: whose means were judged; the Allegro rows with the send-time noise), for the closing list.
OLD_CRITERIA: dict[str, tuple[str, bool]] = {
    "1a": (">= 90.0 %", True),
    "1b": (">= 50.0 %", True),
    "1c": (">= 3.0×", True),
    "1d": (">= 10.0×", True),
    "1e": (">= 5.0×", True),
    "1f": (">= 5.0×", True),
    "1g": ("<= 20.0 %", True),
    "1h": (">= 90.0 %", False),
    "2a": (">= 85.0 %", True),
    "2b": (">= 4×", True),
    "2c": (">= 2×", True),
    "2d": (">= 20.0 %", True),
    "3a": (">= 80.0 %", True),
    "3b": (">= 5.0×", True),
    "3c": (">= 10.0×", True),
    "4a": (">= 70.0 %", True),
    "4b": (">= 5.0×", True),
    "4c": (">= 2.5×", True),
    "5a": (">= 80.0 % of RTTs, within 0.05 in log of the best", True),
    "5b": ("lowest ratio >= 0.50", True),
    "6a": (">= 100.0 % of time scales, within 0.01 of CUBIC", True),
    "6b": (">= 2.0×", False),
    "6c": ("<= 2.0×", True),
    "7a": (">= 50.0 % of BBR and CUBIC cases together", True),
    "7b": (">= 80.0 % of primaries, median within 0.02", True),
    "7c": (">= 0.900", True),
    "8a": ("<= 25.0 %", False),
    "8b": ("<= 25.0 %", False),
    "8c": (">= 0.900", True),
}
#: Why a claim's verdict changed under issue 19's criteria, where found (kept by hand, written
#: after the runs; a claim missing here reads "cause not investigated").
CHANGE_WHY: dict[str, str] = {
    "1b": "The criterion is now the paper's 74 % ± 10 points, two-sided: PCC keeps 95 % of the "
    "link at 2 % loss in every seed, above the paper's value (whose Fig. 7 point may mix runs whose "
    "start-up stopped low; see 1b's note). Before `pcc-allegro` weighed its first start-up MI as "
    "the authors' code does (`first_mi_weight`, VALIDATION.md), one seed in 5 stopped low (20 %).",
    "1c": "Now 10× within ×1.5 (>= 6.7×): our CUBIC, on the Linux model, keeps 15.5 Mbit/s at 0.1 % "
    "loss (17.4 on the default stack), about the Mathis bound for Reno (15 Mbit/s), where the paper's "
    "ratio puts its 2015 Linux CUBIC near 10 Mbit/s. "
    "Today's kernel CUBIC keeps as much on this path (16.3 Mbit/s in a 30-s run, the next section, "
    "against 16.9 for both simulated stacks): the paper's 10× was its kernel's, not CUBIC's today.",
    "1e": "The rows judged now run Illinois as polycc's port of tcp_illinois over the simulator's "
    "model of the kernel's TCP (`stack = \"tcp\"`, issue 19's Linux baselines), where it gets 27.7 "
    "Mbit/s at 0.7 % (median), 3.3–4.9× below PCC: under the paper's 10×. Exactly paced on the "
    "default stack, as before, it got 38 Mbit/s (2.5×); with the send jitter there it passed "
    "(about 12×), but the Linux model takes no send-time noise, so 1e-jitter now sets jittered PCC "
    "against the same Illinois runs and fails with 1e.",
    "1f": "As 1e: Illinois on the Linux model keeps 10.4 Mbit/s at 2 %, 9.2×, just under the band's "
    "10.7×. Exactly paced on the default stack it kept 21.5 (4.4×), with the send jitter there 3.3 "
    "(about 29×, above the band).",
    "2b": "The criterion is now 13× within ×1.5: PCC reaches 90 % of the link with a single packet of "
    "buffer (2d), so the ratio of buffers is CUBIC's 40 packets over 1, far above 13×.",
    "2c": "As 2b: paced NewReno reaches 90 % at 150 packets, 150× PCC's one packet, against the paper's 25×.",
    "2d": "The criterion is now the paper's 25 % ± 10 points: PCC keeps 95 % of the link with a "
    "one-packet buffer because the simulator paces exactly, without the bursts of the paper's "
    "user-space sender (2d's note).",
    "3b": "Now 17× within ×1.5 (>= 11.3×): our Hybla, over the simulator's model of the kernel's "
    'TCP (`stack = "tcp"`), gets 5.8 Mbit/s with the 1 MB buffer (4.0 on the default stack), '
    "nearly three times the paper's 2.03. That is about what Hybla aims for: its ρ² growth makes "
    "a flow grow as a Reno flow at the 25-ms reference RTT, whose loss-limited rate at 0.74 % is "
    "1.22·MSS/(RTT0·√p) ≈ 6.6 Mbit/s. No other Hybla here can arbitrate: this kernel has none, and "
    "ns-3's TcpHybla collapses on this path (0.01 Mbit/s; `validation/ns3/compare.py --cca hybla "
    "--rate 42Mbps --rtt 800ms --buffer 667pkt --loss 0.0074 --duration 100s --lossy-seeds 5`). "
    "The paper's 2.03 Mbit/s is not explained. On the Linux model Hybla's unpaced slow-start "
    "bursts make it depend on the buffer as in the paper's figure (0.1 Mbit/s with 5 packets).",
    "3c": "Now 54× within ×1.5 (>= 36×): our Illinois, over the kernel model's TCP, gets 1.1 Mbit/s "
    "with 1 MB (1.3 on the default stack), 35×, just under the band. ns-3's TcpIllinois gets the "
    "same on this path (0.98 against polycc's 0.97 Mbit/s, 5 seeds; `validation/ns3/compare.py "
    "--cca illinois --rate 42Mbps --rtt 800ms --buffer 667pkt --loss 0.0074 --duration 100s "
    "--lossy-seeds 5`), so an independent Illinois agrees with ours; the paper's ratio implies "
    "about 0.7 Mbit/s.",
    "4b": "Now 14× within ×1.5 (>= 9.3×): our CUBIC, on the Linux model, gets 5.2 Mbit/s, 9.3 % of the "
    "optimum (6.3 Mbit/s on the default stack, 8.0×, which failed), against about 6 % in the paper; "
    "as in 1c it keeps more under random loss than the paper's CUBIC.",
    "6a": "Now strictly fairer at every time scale, without the old 0.01 slack, and exactly paced: "
    "PCC's index is above CUBIC's at 1–10 s windows but at 25 s a hair below it in 4 of 5 seeds "
    "(medians 0.962 against 0.963), and in the fifth below at every scale; with the send jitter "
    "(6a-jitter) PCC is fairer at every scale in all 5 seeds. It held at the previous "
    "regeneration, before the default stack counted QUIC's UDP payload instead of the whole "
    "packet: a margin of that size moves with it.",
    "1d": "Now 37× within ×1.5 (before: >= 10×). PCC at 2 % loss is bistable (issue 19): since the "
    "default stack counts QUIC's UDP payload (1472 of each 1500-byte packet) instead of the whole "
    "packet, 2 of 5 seeds settle in the low mode (5.7×), where the previous regeneration had all 5 "
    "in the high one (37.1×).",
    "1h": "Now the paper's 97 % within 4 points (before: >= 90 %), and no seed's start-up stops low "
    "any more at 10–50 % loss (2 of 5 did at the previous regeneration, 1h's note): since the "
    "default stack counts QUIC's UDP payload the start's monitor intervals hold other packet "
    "counts, and which doubling measures the lower utility under a 40–50 % loss (±14 % binomial "
    "noise on a dozen packets) changes with them. Not traced further: the trap's odds, not its "
    "cause, moved.",
    "6b": "Now 4.2× within ×1.5 (before: >= 2×, which 2.6× missed), and CUBIC runs on the Linux "
    "model (issue 19): its joining flow's rate varies with a std. dev. of 6.3 Mbit/s after it "
    "converges (3.7 for the default stack's paced CUBIC), PCC's 1.9, a ratio of 4.5× (median).",
    "6c": "The criterion is now 1× within ×1.5, and CUBIC runs on the Linux model (issue 19): its "
    "joining flow needs 30 s in every seed (the default stack's exactly paced CUBIC 20 s), PCC's "
    "8 s, a ratio of 0.2×. The Linux model takes no send jitter, so 6c-jitter sets jittered PCC "
    "(8.4 s) against the same CUBIC runs (0.2×, no longer holding); the default stack's jittered "
    "CUBIC converged in 6.2 s (0.8×).",
    "7a": "Now the paper's 71.8 % of cases ± 10 points for BBR alone: BBR keeps >= 90 % beside "
    "Proteus-S in every one of our 15 cases (3 jitter levels × 5 seeds), which are milder than the "
    "paper's WiFi paths.",
}

#: The claims new with issue 19: why they were added (kept by hand).
NEW_WHY: dict[str, str] = {
    "9a": "Allegro Fig. 15, a headline result issue 19 names as not reproduced; it needs the "
    "per-transfer table (`transfers.parquet`) to pool completion times over many sources.",
    "9b": "As 9a.",
    "9c": "As 9a.",
    "10a": "Allegro Fig. 17, a headline result issue 19 names as not reproduced.",
    "10b": "As 10a.",
    "10c": "As 10a.",
    "11a": "Allegro Fig. 14, a headline result issue 19 names as not reproduced.",
    "11b": "As 11a.",
    "12a": "Allegro Fig. 10, a headline result issue 19 names as not reproduced.",
    "12b": "As 12a.",
    "13a": "Proteus Figs. 12–13, a headline result issue 19 names as not reproduced; it needs a "
    "video player (`dash` traffic).",
    "13b": "As 13a.",
    "13c": "As 13a.",
    "13d": "As 13a.",
    "13e": "As 13a.",
    "14a": "Proteus Fig. 11, a headline result issue 19 names as not reproduced; it needs video "
    "players with dash.js's BOLA rule and a browser (`dash` and `page` traffic).",
    "14b": "As 14a.",
    "14c": "As 14a.",
    "14d": "As 14a.",
    "14e": "As 14a.",
    "7d": "CUBIC's share of cases (51.3 %), judged apart from BBR's (7a) as the paper gives both.",
    "1i": "Added after the first run under issue 19 (§4.4.2's second number), at the paper's 151× "
    "and the ratio tolerance.",
    "2e": "Added after the first run under issue 19: Fig. 9's baseline at the 6-packet buffer, the "
    "paper's 2 %, which issue 19 names. Today's kernel CUBIC collapses here as the paper's did "
    "(about 13 % of the link in a 30-s run, the next section; over 90 % only at 80 packets), while "
    "our CUBIC, on the Linux model, whose receiver compresses its SACKs as the kernel's does, keeps "
    "48.5 % (85.4 % on the default stack, whose receiver acknowledges every packet). The "
    "rest of the kernel's bursts come from its host's timing (stretch ACKs on the receiving "
    "application's late reads, the emulator's rare stalls), which neither stack models "
    '("Why today\'s kernel CUBIC collapses", after the next section).',
    "2f": "Added after the first run under issue 19: Fig. 9's paced TCP at 6 packets, the paper's 30 %.",
    "2g": "Added after the first run under issue 19: Fig. 9's one-packet ratio, the paper's 35×. "
    "The Linux model's CUBIC keeps 0.8 % of the link with one packet (the default stack's 67.1 %, "
    "1.4×), so the ratio overshoots instead.",
}


def closing(sections: list[Section]) -> list[str]:
    """The section's closing list of changed verdicts (`common.changed_verdicts`), with causes."""
    return changed_verdicts(
        sections,
        OLD_CRITERIA,
        before="one seed except section 1, the old criteria in brackets, the Allegro rows with the "
        "send-time noise",
        change_why=CHANGE_WHY,
        new_why=NEW_WHY,
    )


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        allegro_random_loss.run,
        allegro_shallow_buffer.run,
        allegro_satellite.run,
        allegro_changing_network.run,
        allegro_rtt_fairness.run,
        allegro_convergence.run,
        proteus_scavenger.run,
        proteus_bbr_s.run,
        allegro_short_flows.run,
        allegro_fq_power.run,
        allegro_tcp_friendliness.run,
        allegro_incast.run,
        proteus_video.run,
        proteus_applications.run,
    ]
    return [step(ctx) for step in steps]
