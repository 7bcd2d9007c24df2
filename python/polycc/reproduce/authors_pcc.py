"""The PCC authors' own code beside polycc's controllers in the emulated testbed (VALIDATION.md,
"Against the authors' code").

The NSDI'15 Allegro (`modong/pcc`, a UDT fork) and PCC-Uspace's Vivace, built by
`scripts/build-authors-pcc.sh` outside the repository, run as outside programs
(`stack = "external"`) on the same emulated link as polycc's `pcc-allegro` and `pcc-vivace` on
polycc's own UDP sender (`stack = "udp"`), one flow alone per run: 20 Mbit/s, 30 ms, a 1-BDP and
an 8-packet drop-tail buffer, random loss 0, 1 and 3 % on the data direction, `RUN_SECONDS` per
run and `SEEDS` seeds (the link's loss draws; the authors' programs draw their own). Allegro is
also run with the paper's loss-resilient utility (§4.4.2, T·(1 − L); `allegro-lr`) under heavy
forward loss, 30 and 50 %, on the 1-BDP buffer with `LR_SEEDS` seeds, whose start-ups either
fill the link or stop at a few Mbit/s (REPRODUCTION.md, PCC claim 1h). Both sides
are measured the same way, by the emulator on the link: throughput (wire bytes of the flow's
data delivered) and the mean queueing delay of its packets. About 30 minutes of real time.
Needs root, the testbed and the built binaries.

    sudo nice -n -15 .venv/bin/python -m polycc.reproduce.authors_pcc [--doc] [--reuse]

`--reuse` renders from the runs cached in `--cache` (one JSON line per run) without running
again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import mean
from typing import Any, TypeVar

from polycc.reproduce.common import Table, update_document

T = TypeVar("T")

#: The section's markers in VALIDATION.md (`<!-- reproduce:authors-pcc:begin -->`).
SECTION = "authors-pcc"
#: Length of every run: Allegro's and Vivace's monitor intervals are 1.5 to 2.2 RTTs (45 to
#: 66 ms here), so 20 s is some 300 decisions, past the start-up of both.
RUN_SECONDS = 20
#: The link's loss draws (seed of the scenario); the programs' own randomness is their own.
SEEDS = (1, 2, 3, 4)
RATE = "20Mbps"
RATE_MBPS = 20.0
RTT = "30ms"
#: 1 BDP (75 packets of 1500 bytes at 20 Mbit/s and 30 ms) and a shallow buffer of 8 packets.
BUFFERS = ("1bdp", "8pkt")
#: Random loss on the data direction (Allegro's Fig. 7 runs to 5 %; 1 and 3 % are in between).
LOSSES = (0.0, 0.01, 0.03)
#: Skipped at each run's start when averaging the time series (the starts differ by design).
WARMUP_S = 2.0
#: The loss-resilient runs: heavy forward loss (Allegro §4.4.2 runs 10–50 %; at 10 % neither
#: start-up stops low in the simulator) on the 1-BDP buffer. What differs between seeds is
#: whether the start-up stops low, one or two in ten in the simulator: hence twenty seeds.
LR_LOSSES = (0.3, 0.5)
LR_SEEDS = tuple(range(1, 21))
#: A run "stopped low" when it delivered less than this share of the link (the bimodal 1h
#: outcome: full runs deliver > 90 %, stopped ones < 30 %).
LOW_SHARE = 0.5
#: polycc's controller for each of the authors' programs, as the tables name it and as the
#: scenario's `cca`.
OURS: dict[str, str] = {
    "allegro": "pcc-allegro",
    "allegro-lr": "pcc-allegro, utility = loss-resilient",
    "vivace": "pcc-vivace",
}
OURS_CCA: dict[str, Any] = {
    "allegro": "pcc-allegro",
    "allegro-lr": {"name": "pcc-allegro", "utility": "loss-resilient"},
    "vivace": "pcc-vivace",
}


@dataclass(frozen=True)
class Binaries:
    """The authors' programs as `scripts/build-authors-pcc.sh` prints them."""

    allegro_sender: str
    allegro_sender_lib: str
    allegro_receiver: str
    allegro_receiver_lib: str
    vivace_sender: str
    vivace_receiver: str
    #: The loss-resilient build (empty from a build script's output saved before it had one).
    allegro_lr_sender: str = ""
    allegro_lr_sender_lib: str = ""
    allegro_lr_receiver: str = ""
    allegro_lr_receiver_lib: str = ""

    def commands(self, algo: str) -> tuple[str, str]:
        """(sender, receiver) command templates. Allegro's `appclient SERVER PORT` sends without
        end with its `cc.h` (the NSDI'15 utility, or the loss-resilient one in `allegro-lr`'s
        build); Vivace's `pccclient send SERVER PORT Vivace` uses Vivace's rate control and
        default utility; each runs until the emulator kills it."""
        if algo in ("allegro", "allegro-lr"):
            # The two builds' fields differ only in their prefix (`allegro_`, `allegro_lr_`).
            sender, sender_lib, receiver, receiver_lib = (
                getattr(self, f"{algo.replace('-', '_')}_{part}")
                for part in ("sender", "sender_lib", "receiver", "receiver_lib")
            )
            if not sender:
                raise SystemExit(f"{algo}: the build script's output names no binary for it; rebuild")
            return (
                f"LD_LIBRARY_PATH={sender_lib} exec {sender} {{receiver_ip}} {{port}}",
                f"LD_LIBRARY_PATH={receiver_lib} exec {receiver} {{port}}",
            )
        return (
            f"exec {self.vivace_sender} send {{receiver_ip}} {{port}} Vivace",
            f"exec {self.vivace_receiver} recv {{port}}",
        )


def build(repo: Path) -> Binaries:
    """Runs the build script (it rebuilds from the snapshots, about two minutes on 2 cores) and
    reads the paths it prints."""
    out = subprocess.run(
        [str(repo / "scripts" / "build-authors-pcc.sh")], check=True, capture_output=True, text=True
    ).stdout
    return binaries_of(out)


def binaries_of(text: str) -> Binaries:
    """The `NAME=PATH` lines the build script prints."""
    kv = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return Binaries(**{k.lower(): v for k, v in kv.items() if k.lower() in Binaries.__dataclass_fields__})


def scenario_doc(
    algo: str, theirs: bool, buffer: str, loss: float, seed: int, bins: Binaries
) -> dict[str, Any]:
    """One run: the authors' program (`theirs`) or polycc's controller on its UDP sender, alone
    on the link."""
    flow: dict[str, Any] = {"id": "theirs" if theirs else "ours", "rtt": RTT}
    if theirs:
        sender, receiver = bins.commands(algo)
        flow.update(stack="external", sender=sender, receiver=receiver)
    else:
        flow.update(stack="udp", cca=OURS_CCA[algo])
    return {
        "name": f"authors-{algo}-{'theirs' if theirs else 'ours'}",
        "duration": f"{RUN_SECONDS}s",
        "seed": seed,
        "links": [{"id": "b", "rate": RATE, "loss": loss, "queue": {"size": buffer}}],
        "flows": [flow],
    }


#: A run: (algo, theirs, buffer, loss, seed, backend).
Key = tuple[str, bool, str, float, int, str]


@dataclass(frozen=True)
class Point:
    """One run's numbers, as the emulator measured them."""

    algo: str
    theirs: bool
    buffer: str
    loss: float
    seed: int
    throughput_mbps: float
    goodput_mbps: float
    #: Mean of the per-bin throughput after `WARMUP_S`.
    steady_mbps: float
    queue_delay_ms: float
    dropped: float
    load1: float
    #: "emu", or "sim" for ours in the simulator (the same scenario, for reference).
    backend: str = "emu"

    def key(self) -> Key:
        return (self.algo, self.theirs, self.buffer, self.loss, self.seed, self.backend)


def run_point(
    algo: str,
    theirs: bool,
    buffer: str,
    loss: float,
    seed: int,
    backend: str,
    bins: Binaries,
    logs: Path,
) -> Point:
    from polycc.api import run_scenario
    from polycc.scenario import Scenario

    doc = scenario_doc(algo, theirs, buffer, loss, seed, bins)
    log_dir = logs / f"{algo}-{'theirs' if theirs else 'ours'}-{buffer}-{loss}-{seed}"
    r = run_scenario(Scenario.from_dict(doc), backend=backend, log_dir=log_dir if backend == "emu" else None)
    f = r.summary["flows"][0]
    link = r.summary["links"][0]
    t = r.flows
    steady = t[t.t_s >= WARMUP_S].throughput_mbps.mean()
    # What the link dropped (queue and random loss) over what entered it: the same count for
    # both sides, whatever their senders report.
    sent = max(1, int(r.summary["accounting"]["sent_bytes"]))
    return Point(
        algo=algo,
        theirs=theirs,
        buffer=buffer,
        loss=loss,
        seed=seed,
        throughput_mbps=float(f["throughput_mbps"]),
        goodput_mbps=float(f["goodput_mbps"]),
        steady_mbps=float(steady),
        queue_delay_ms=float(link["queue_delay_ms"]["mean"]),
        dropped=float(r.summary["accounting"]["dropped_bytes"]) / sent,
        load1=os.getloadavg()[0],
        backend=backend,
    )


def conditions(algo: str) -> tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]]:
    """The buffers, losses and seeds `algo` runs at."""
    if algo == "allegro-lr":
        return ("1bdp",), LR_LOSSES, LR_SEEDS
    return BUFFERS, LOSSES, SEEDS


def grid(algos: Sequence[str]) -> list[Key]:
    """Every run, theirs and ours in the testbed next to each other so that the host's load
    (other work on this machine) falls on both alike, and ours in the simulator."""
    return [
        (a, theirs, b, loss, s, backend)
        for a in algos
        for buffers, losses, seeds in [conditions(a)]
        for b in buffers
        for loss in losses
        for s in seeds
        for theirs, backend in ((True, "emu"), (False, "emu"), (False, "sim"))
    ]


def load_cache(path: Path) -> dict[Key, Point]:
    return {p.key(): p for p in cached(path, Point)}


def cached(path: Path, make: Callable[..., T]) -> list[T]:
    """The runs recorded in a cache file, one JSON object a line (none when it is absent)."""
    if not path.exists():
        return []
    return [make(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def load_line(loads: Sequence[float]) -> list[str]:
    """The sentence giving the host's load during the testbed runs (none without runs)."""
    if not loads:
        return []
    return [
        f"The host's 1-minute load average during the runs: {min(loads):.1f}–{max(loads):.1f} on 2 cores "
        "(the runs' own processes included)."
    ]


def _cell(values: Iterable[float], digits: int = 1) -> str:
    v = list(values)
    if not v:
        return "–"
    if len(v) == 1:
        return f"{v[0]:.{digits}f}"
    return f"{mean(v):.{digits}f} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def table(points: dict[Key, Point], algo: str) -> str:
    t = Table(
        [
            "buffer",
            "loss",
            "theirs: throughput (Mbit/s)",
            f"ours (`{OURS[algo]}`): throughput",
            "theirs / ours",
            f"after {WARMUP_S:.0f} s: theirs / ours",
            "ours in the simulator",
            "queueing delay (ms): theirs",
            "ours",
            "dropped: theirs",
            "ours",
        ]
    )
    buffers, losses, _ = conditions(algo)
    for b in buffers:
        for loss in losses:

            def runs(theirs: bool, backend: str, b: str = b, loss: float = loss) -> list[Point]:
                return [
                    p
                    for p in points.values()
                    if (p.algo, p.theirs, p.buffer, p.loss, p.backend) == (algo, theirs, b, loss, backend)
                ]

            th, us, sim = runs(True, "emu"), runs(False, "emu"), runs(False, "sim")
            if not th or not us:
                continue
            ratio = mean(p.throughput_mbps for p in th) / max(1e-9, mean(p.throughput_mbps for p in us))
            steady = mean(p.steady_mbps for p in th) / max(1e-9, mean(p.steady_mbps for p in us))
            t.add(
                b.replace("pkt", " pkt").replace("1bdp", "1 BDP"),
                f"{100 * loss:.0f} %",
                _cell(p.throughput_mbps for p in th),
                _cell(p.throughput_mbps for p in us),
                f"{ratio:.2f}",
                f"{steady:.2f}",
                _cell(p.throughput_mbps for p in sim),
                _cell(p.queue_delay_ms for p in th),
                _cell(p.queue_delay_ms for p in us),
                _cell((100 * p.dropped for p in th), 1) + " %",
                _cell((100 * p.dropped for p in us), 1) + " %",
            )
    return t.markdown()


def lr_table(points: dict[Key, Point]) -> str:
    """The loss-resilient runs: throughput per side and how many seeds stopped low."""
    t = Table(
        [
            "forward loss",
            "theirs: throughput (Mbit/s)",
            f"ours (`{OURS['allegro-lr']}`): throughput",
            "ours in the simulator",
            f"seeds below {100 * LOW_SHARE:.0f} % of the link: theirs",
            "ours",
            "ours in the simulator",
        ]
    )
    _, losses, _ = conditions("allegro-lr")
    for loss in losses:
        sides = [
            sorted(
                (
                    p
                    for p in points.values()
                    if (p.algo, p.theirs, p.loss, p.backend) == ("allegro-lr", th, loss, be)
                ),
                key=lambda p: p.seed,
            )
            for th, be in ((True, "emu"), (False, "emu"), (False, "sim"))
        ]
        if not sides[0] or not sides[1]:
            continue

        def low(runs: list[Point]) -> str:
            seeds = [p.seed for p in runs if p.throughput_mbps < LOW_SHARE * RATE_MBPS]
            named = f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})" if seeds else ""
            return f"{len(seeds)} of {len(runs)}{named}"

        t.add(
            f"{100 * loss:.0f} %",
            *[_cell(p.throughput_mbps for p in runs) for runs in sides],
            *[low(runs) for runs in sides],
        )
    return t.markdown()


def render(points: dict[Key, Point], notes: str = "") -> str:
    loads = [p.load1 for p in points.values() if p.backend == "emu"]
    lines = [
        "## The PCC authors' code in the testbed, beside polycc's",
        "",
        "Generated by `sudo nice -n -15 .venv/bin/python -m polycc.reproduce.authors_pcc --doc`; do",
        "not edit by hand (the findings below the tables are written by hand). One flow alone on",
        f"{RATE_MBPS:.0f} Mbit/s, {RTT} RTT, a drop-tail buffer of 1 BDP or 8 packets, random loss on the",
        f"data direction; {RUN_SECONDS} s per run, seeds {', '.join(map(str, SEEDS))} "
        "(the link's loss draws);",
        "cells are the mean over the seeds (min–max). Theirs: the authors' code built by",
        '`scripts/build-authors-pcc.sh` run as an outside program (`stack = "external"`); ours:',
        "polycc's controller on polycc's UDP sender (`stack = \"udp\"`), on the same emulated link.",
        "Both measured by the emulator on the link: throughput = wire bytes of the flow's data",
        "delivered over the run (both send 1500-byte packets), queueing delay = mean over the",
        "link's packets, dropped = bytes the link dropped (queue and random loss) over bytes sent.",
        '"Ours in the simulator": the same scenario file run by `polycc run` (the simulator\'s',
        "sender model, no host noise), for reference.",
    ]
    lines += load_line(loads)
    lines += [
        "",
        "### PCC Allegro (NSDI'15): `modong/pcc` vs polycc `pcc-allegro`",
        "",
        table(points, "allegro"),
    ]
    if any(p.algo == "allegro-lr" for p in points.values()):
        lines += [
            "",
            "### PCC Allegro with the loss-resilient utility (§4.4.2, T·(1 − L)) under heavy forward loss",
            "",
            f"The 1-BDP buffer; seeds {LR_SEEDS[0]}–{LR_SEEDS[-1]}. The authors' code with that utility in",
            "its NSDI'15 one's place (`scripts/build-authors-pcc.sh allegro-lr`).",
            "",
            lr_table(points),
        ]
    if any(p.algo == "vivace" for p in points.values()):
        lines += ["", "### PCC Vivace: PCC-Uspace vs polycc `pcc-vivace`", "", table(points, "vivace")]
    if notes:
        lines += ["", notes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--doc", action="store_true", help="write the section into VALIDATION.md")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="repository root [default: .]")
    parser.add_argument("--cache", type=Path, default=Path("results/authors-pcc/cache.jsonl"))
    parser.add_argument("--reuse", action="store_true", help="render from the cache without running")
    parser.add_argument(
        "--algos", default=",".join(OURS), help=f"some of {', '.join(OURS)}, comma-separated [default: all]"
    )
    parser.add_argument("--binaries", type=Path, help="the build script's output, saved (skips the build)")
    args = parser.parse_args(argv)
    algos = [a for a in args.algos.split(",") if a]
    for a in algos:
        if a not in OURS:
            parser.error(f"--algos: {a!r}; allowed: {', '.join(OURS)}")
    points = load_cache(args.cache)
    if not args.reuse:
        bins = binaries_of(args.binaries.read_text()) if args.binaries else build(args.repo)
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        logs = args.cache.parent / "logs"
        for key in grid(algos):
            if key in points:
                continue
            p = run_point(*key, bins=bins, logs=logs)
            points[key] = p
            with args.cache.open("a") as f:
                f.write(json.dumps(asdict(p)) + "\n")
            print(
                f"{p.algo} {'theirs' if p.theirs else 'ours  '} {p.buffer:>5} loss {p.loss:.2f} "
                f"seed {p.seed}: {p.throughput_mbps:.2f} Mbit/s, queue {p.queue_delay_ms:.1f} ms, "
                f"dropped {100 * p.dropped:.1f} %",
                flush=True,
            )
    body = render(points)
    print(body)
    if args.doc:
        doc = args.repo / "VALIDATION.md"
        update_document(doc, SECTION, render(points, kept_notes(doc, "<!-- authors-pcc:notes -->")))


def kept_notes(doc: Path, marker: str) -> str:
    """The hand-written findings a generated section of `doc` keeps after its tables: from
    `marker` to the section's end marker, as they are ("" when there are none)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    return text[text.index(marker) :].split("<!-- reproduce:")[0].rstrip() if marker in text else ""


if __name__ == "__main__":
    main()
