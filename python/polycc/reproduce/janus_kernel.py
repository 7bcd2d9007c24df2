"""Janus on the real kernel's TCP, beside the simulator (REPRODUCTION.md, after Janus's section).

The paper built Janus into Linux TCP. Here its headline behaviours, two-stage switching
(Fig. 6, `switching.toml`), max-min fair targets (Figs. 11–12, `mmf-25.toml`), web flows'
delay beside a long flow (Fig. 13, `web-delay.toml`) and two video players' rebuffering
(Table 3, `youtube.toml`), the last two with the paper's CUBIC baseline on the kernel's own TCP,
run with the Janus flows on kernel TCP sockets steered by polycc's `janus` policy through the
eBPF shim (`stack = "tcp"`, `crates/polycc-tcp`) in the emulated testbed, and the same files in
the simulator. Needs root, the testbed and the extension built with the shim (`./dev.sh
setup` builds it where clang and bpftool are); the emulated runs take about 34 minutes of real
time.

    sudo .venv/bin/python -m polycc.reproduce.janus_kernel [--doc]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from polycc.reproduce.common import Table, fmt, mbps, median, ms, num, pct, prose, ratio, safe_div, seconds
from polycc.reproduce.janus import mmf_shares, path_rtt_ms, switching_outcome
from polycc.reproduce.janus_criteria import TABLE_3
from polycc.reproduce.janus_video import P1080, P1440, player
from polycc.reproduce.kernel_tcp import SHIM_STACK, kernel_tcp_flows
from polycc.reproduce.real_stacks import section_main, sim_and_testbed
from polycc.reproduce.scenario_file import ScenarioFile, rate_mbps
from polycc.reproduce.timeseries import flow_mean

if TYPE_CHECKING:
    from polycc.api import RunResult

#: The section's name in REPRODUCTION.md (`<!-- reproduce:janus-kernel-tcp:begin -->`).
SECTION = "janus-kernel-tcp"
#: Every flow Janus on the kernel's TCP through the shim: in the testbed the kernel itself, in the
#: simulator its model of the kernel's TCP around the same controller, counting the same bytes
#: (TCP payload).
ON_THE_SHIM = {"flows.*.stack": SHIM_STACK}
#: Figs. 11–12 are judged over the last 20 s, when all four flows have been running 30 s.
MMF_WINDOW = (40.0, 60.0)


def switching_table(scenarios: Path) -> str:
    file = ScenarioFile.read(scenarios / "switching.toml")
    sim, emu = sim_and_testbed(scenarios / "switching.toml", {"flows.0.stack": SHIM_STACK})
    s, k = switching_outcome(sim), switching_outcome(emu)
    path = path_rtt_ms(file)
    table = Table(["quantity (Fig. 6)", "paper", "simulator", "kernel TCP (shim)"])
    table.add(
        "first conservative stage at", "0.7 s", seconds(s.first_conservative), seconds(k.first_conservative)
    )
    table.add(
        "aggressive during the cross traffic (6–8 s)",
        "yes",
        fmt(s.aggressive_in_burst),
        fmt(k.aggressive_in_burst),
    )
    table.add(
        "back to conservative at (and stays)",
        "≈ 10 s",
        seconds(s.back if s.stays else math.nan),
        seconds(k.back if k.stays else math.nan),
    )
    table.add("R' lowest during the burst", "–", mbps(s.lowest_target), mbps(k.lowest_target))
    target = rate_mbps(file.flow("janus")["intent"]["target_rate"])
    table.add(
        f"goodput 11–15 s (target {target:g} Mbit/s)",
        "≈ target",
        mbps(s.goodput_after),
        mbps(k.goodput_after),
    )
    table.add(
        f"RTT 11–15 s above the {path:.1f} ms path",
        "no standing queue",
        ms(s.rtt_after - path),
        ms(k.rtt_after - path),
    )
    return table.markdown()


def mmf_table(scenarios: Path) -> str:
    file = ScenarioFile.read(scenarios / "mmf-25.toml")
    targets = {str(f["id"]): rate_mbps(f["intent"]["target_rate"]) for f in file.doc["flows"]}
    shares = mmf_shares(file.rate_mbps(), targets)
    sim, emu = sim_and_testbed(scenarios / "mmf-25.toml", ON_THE_SHIM)
    table = Table(["flow (target)", "max-min share", "simulator", "kernel TCP (shim)"])
    dev = {"sim": 0.0, "emu": 0.0}
    for f, target in targets.items():
        got = {
            side: flow_mean(r, f, "throughput_mbps", *MMF_WINDOW) for side, r in (("sim", sim), ("emu", emu))
        }
        for side, v in got.items():
            dev[side] = max(dev[side], abs(v - shares[f]) / shares[f])
        table.add(f"{f} ({target:g} Mbit/s)", mbps(shares[f]), mbps(got["sim"]), mbps(got["emu"]))
    table.add("largest deviation", "paper: close match", pct(dev["sim"]), pct(dev["emu"]))
    return table.markdown()


def web_delay_table(scenarios: Path) -> str:
    """Fig. 13: the web flows' p95 queueing delay beside a long flow, with every flow Janus (the
    long one targeting 12 Mbit/s: Janus-12) or the kernel's CUBIC, as the Janus section's 3a."""
    import numpy as np

    path = scenarios / "web-delay.toml"
    file = ScenarioFile.read(path)
    link = file.rate_mbps()
    cubic = kernel_tcp_flows(file.doc["flows"], "cubic")
    runs = {
        "Janus-12": sim_and_testbed(path, ON_THE_SHIM),
        "CUBIC": sim_and_testbed(path, cubic, {}),
    }

    def measures(r: RunResult) -> tuple[float, float, float, float]:
        flows = {f["id"]: f for f in r.summary["flows"]}
        q = r.links["queue_delay_ms"].to_numpy(dtype=float)
        q = q[np.isfinite(q)]
        return (
            float(flows["web"]["queue_delay_ms"]["p95"]),
            float(flows["long"]["goodput_mbps"]) / link,
            float(np.median(q)) if q.size else math.nan,
            float(flows["web"]["transfers_completed"]),
        )

    got = {label: tuple(measures(r) for r in pair) for label, pair in runs.items()}
    table = Table(["quantity (Fig. 13)", "paper", "simulator", "kernel TCP (shim for Janus)"])
    for label in runs:
        (sim_p95, sim_util, sim_q, sim_n), (emu_p95, emu_util, emu_q, emu_n) = got[label]
        table.add(f"{label}: web flows' p95 queueing delay", "–", ms(sim_p95), ms(emu_p95))
        table.add(f"{label}: long flow's share of {link:g} Mbit/s", "–", pct(sim_util), pct(emu_util))
        table.add(f"{label}: bottleneck queue (median)", "–", ms(sim_q), ms(emu_q))
        table.add(f"{label}: web transfers completed", "–", fmt(sim_n, 0), fmt(emu_n, 0))
    table.add(
        "web p95: CUBIC / Janus-12 (claim 3a)",
        "almost an order of magnitude",
        ratio(safe_div(got["CUBIC"][0][0], got["Janus-12"][0][0])),
        ratio(safe_div(got["CUBIC"][1][0], got["Janus-12"][1][0])),
    )
    return table.markdown()


#: Table 3's runs per side: the kernel's runs part in which player's first chunk wins the
#: link at the start, so one run is not enough to tell the two sides apart.
VIDEO_SEEDS = (1, 2, 3)


def video_table(scenarios: Path) -> str:
    """Table 3: the 1440P player's rebuffering beside a 1080P player, with both flows Janus (each
    targeting its video's bitrate) or both the kernel's CUBIC, as the Janus section's 8a–8c;
    medians over `VIDEO_SEEDS`, the runs' range in brackets."""
    path = scenarios / "youtube.toml"
    file = ScenarioFile.read(path)
    cubic = kernel_tcp_flows(file.doc["flows"], "cubic")
    runs = {
        k: [sim_and_testbed(path, {**over, "seed": seed}) for seed in VIDEO_SEEDS]
        for k, over in (("janus", ON_THE_SHIM), ("cubic", cubic))
    }

    def spread(rs: list[RunResult], flow: str, key: str, show: Callable[[float], str]) -> str:
        xs = [player(r, flow)[key] for r in rs]
        return f"{show(median(xs))} [{show(min(xs))}, {show(max(xs))}]"

    table = Table(["quantity (Table 3)", "paper", "simulator", "kernel TCP (shim for Janus)"])
    for k, label in (("janus", "Janus"), ("cubic", "CUBIC")):
        events, stalled, startup = TABLE_3[k]
        sims, emus = [s for s, _ in runs[k]], [e for _, e in runs[k]]
        rows = (
            ("1440P rebuffering events", str(events), P1440, "rebuffers", num),
            ("1440P time stalled", seconds(stalled), P1440, "rebuffer_s", seconds),
            ("1440P start-up", seconds(startup), P1440, "startup_s", seconds),
            ("1440P goodput (Mbit/s)", "–", P1440, "goodput", lambda v: f"{v:.2f}"),
            ("1080P goodput (Mbit/s)", "–", P1080, "goodput", lambda v: f"{v:.2f}"),
        )
        for what, paper, flow, key, show in rows:
            table.add(f"{label}: {what}", paper, spread(sims, flow, key, show), spread(emus, flow, key, show))
    return table.markdown() + "\n\n" + video_findings(file, runs)


def stalls(n: float) -> str:
    """A count of stalls ("1 stall", "39 stalls")."""
    return f"{num(n)} stall" + ("" if n == 1 else "s")


def video_findings(file: ScenarioFile, runs: dict[str, list[tuple[RunResult, RunResult]]]) -> str:
    """What the Table 3 rows show where the kernel and the simulator part (medians of the runs)."""

    def mid(k: str, side: int, flow: str, key: str) -> float:
        return median([player(pair[side], flow)[key] for pair in runs[k]])

    def wire(k: str, side: int, flow: str) -> float:
        return median(
            [
                float(next(f for f in pair[side].summary["flows"] if f["id"] == flow)["throughput_mbps"])
                for pair in runs[k]
            ]
        )

    bitrate = rate_mbps(file.flow(P1440)["traffic"]["bitrates"][0])
    sim, emu = 0, 1
    j_stalls, j_time = mid("janus", emu, P1440, "rebuffers"), mid("janus", emu, P1440, "rebuffer_s")
    hi_s, hi_e = mid("janus", sim, P1440, "goodput"), mid("janus", emu, P1440, "goodput")
    lo_s, lo_e = wire("janus", sim, P1080), wire("janus", emu, P1080)
    janus = f"""With Janus the kernel's 1440P player has {stalls(j_stalls)}, {seconds(j_time)} in
        all, against {stalls(mid("janus", sim, P1440, "rebuffers"))},
        {seconds(mid("janus", sim, P1440, "rebuffer_s"))}, on the simulator's model of the same
        stack (medians). Its flow delivers {hi_e:.2f} Mbit/s of its video's {num(bitrate)} Mbit/s
        ({hi_s:.2f} in the simulator), beside the 1080P flow, whose window Janus clamps at
        (1 + ε)·R·RTT, carrying {lo_e:.2f} Mbit/s on the wire ({lo_s:.2f})."""
    if min(hi_s, hi_e) < bitrate:
        janus += """ A player whose flow delivers less than its video's bitrate runs out of
        buffer: its chunks come a little later than they play."""
    c_stalls, c_time = mid("cubic", emu, P1440, "rebuffers"), mid("cubic", emu, P1440, "rebuffer_s")
    cubic = f"""With CUBIC the kernel's 1440P player has {stalls(c_stalls)}, {seconds(c_time)} in
        all, against {num(mid("cubic", sim, P1440, "rebuffers"))},
        {seconds(mid("cubic", sim, P1440, "rebuffer_s"))}, on the simulator's Linux model; the
        kernel's runs part in which player's first chunk takes the link at the start (the
        1440P start-ups' range)."""
    return prose(janus + " " + cubic)


def render(scenarios: Path) -> str:
    switching = switching_table(scenarios)
    mmf = mmf_table(scenarios)
    web = web_delay_table(scenarios)
    video = video_table(scenarios)
    return "\n".join(
        [
            "## Janus on kernel TCP",
            "",
            "Generated by `sudo .venv/bin/python -m polycc.reproduce.janus_kernel --doc`; do not edit by",
            "hand. The Janus flows of four scenario files of the Janus section run on the kernel's TCP,",
            'steered by polycc\'s `janus` policy through the eBPF shim (`stack = "tcp"`) in the emulated',
            "testbed, beside the simulator's runs of the same files on its model of that stack (the",
            "Linux model's hosts around the same controller, counting the kernel's 1448-byte payload as",
            "the shim does; the Janus section itself runs Janus on the default stack). One run each,",
            "three for Table 3; the cross traffic and the link are the testbed's, emulated as the",
            "simulator models them.",
            "",
            "### Two-stage switching (Fig. 6, `scenarios/papers/janus/switching.toml`)",
            "",
            switching,
            "",
            f"### Max-min fair targets (Figs. 11–12, `scenarios/papers/janus/mmf-25.toml`, throughput "
            f"{MMF_WINDOW[0]:g}–{MMF_WINDOW[1]:g} s)",
            "",
            mmf,
            "",
            "### Web flows beside a long flow (Fig. 13, `scenarios/papers/janus/web-delay.toml`)",
            "",
            "Every flow Janus (the long one with its 12 Mbit/s target), or every flow the paper's "
            "baseline, CUBIC: on the Linux model in the simulator and on the kernel's own TCP in the "
            "testbed.",
            "",
            web,
            "",
            "### Video rebuffering with two resolutions (Table 3, `scenarios/papers/janus/youtube.toml`)",
            "",
            "A 1080P and a 1440P DASH player (polycc's player, run at the sending host in the testbed; "
            'README, "DASH players"), both Janus with their videos\' bitrates as targets, or both '
            "the paper's baseline, CUBIC: on the Linux model in the simulator and on the kernel's own "
            f"TCP in the testbed. 300 s; {len(VIDEO_SEEDS)} runs each, medians [range].",
            "",
            video,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    section_main((__doc__ or "").splitlines()[0], SECTION, lambda papers: render(papers / "janus"), argv)


if __name__ == "__main__":
    main()
