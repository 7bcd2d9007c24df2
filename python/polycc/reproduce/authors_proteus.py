"""Proteus-S and Proteus-H, the authors' code beside polycc's, in the emulated testbed
(VALIDATION.md, "Proteus-S and Proteus-H: the authors' code in the testbed, beside polycc's").

PCC-Uspace master's scavenger (`pccclient send SERVER PORT Vivace Scavenger 0.0015`, built by
`scripts/build-authors-pcc.sh`; dossier §7.3) runs as an outside program (`stack = "external"`)
on the same emulated link as polycc's `proteus-s` on polycc's UDP sender (`stack = "udp"`), and
as a baseline no scavenger at all. Each starts alone and a primary on the kernel's TCP (CUBIC,
`stack = "linux"`) joins at `JOIN_S`: a bulk flow (Proteus Fig. 10's case), or a sequence of
`WEB_SIZE` transfers every `WEB_INTERVAL`, each on a new connection (Fig. 11(b)'s page loads,
which claim 14c finds slowed 2.4x beside polycc's Proteus-S in the simulator). The hybrid
(`Vivace Hybrid <threshold>` against `proteus-h`) meets the bulk flow the same way. 20 Mbit/s,
30 ms, 1 BDP drop-tail, `RUN_SECONDS` per run, seeds `SEEDS`; both sides measured by the
emulator on the link. About 40 minutes of real time. Needs root, the testbed and the built
binaries.

    sudo nice -n -15 .venv/bin/python -m polycc.reproduce.authors_proteus [--doc] [--reuse]
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING, Any

from polycc.reproduce.authors_pcc import Binaries, binaries_of, build, cached, kept_notes, load_line
from polycc.reproduce.common import Table, update_document
from polycc.reproduce.pcc.proteus_applications import during_loads
from polycc.reproduce.scenario_file import quantity_text

if TYPE_CHECKING:
    import pandas as pd

#: The section's markers in VALIDATION.md.
SECTION = "authors-proteus"
RUN_SECONDS = 30
SEEDS = (1, 2, 3, 4, 5)
RATE_MBPS = 20.0
RTT = "30ms"
#: The primary joins the scavenger here; the averages start at `FROM_S`, past its start-up.
JOIN_S = 5.0
FROM_S = 10.0
#: The scavenger has yielded to a bulk primary from the first second after which its 1-s
#: throughput stays below this share of the link to the end of the run.
YIELDED_SHARE = 0.1
#: The web primary's transfers (ours: a page's bulk at 20 Mbit/s, 0.2 s of the link).
WEB_SIZE = "500KB"
WEB_INTERVAL = "2s"
#: PCC-Uspace's README value of the scavenger's RTT-deviation coefficient (dossier §7.3), which is
#: also polycc's `proteus-s` default `d`.
DEVIATION_COEFFICIENT = "0.0015"
#: The scavenger's side: the authors' program, polycc's controller, or none.
THEIRS, OURS, NONE = "theirs", "ours", "none"
SIDES = (THEIRS, OURS, NONE)
#: The cases: the scavenger beside a bulk or a web primary, and the hybrid (Proteus-H) beside a
#: bulk primary (`Point.primary` names the case).
BULK, WEB, HYBRID = "bulk", "web", "hybrid-bulk"
PRIMARIES = (BULK, WEB, HYBRID)
#: Proteus-H's threshold, Mbit/s (a quarter of the link): below it the hybrid is a primary, above
#: it a scavenger (dossier §7.3; master has no default).
HYBRID_THRESHOLD_MBPS = 5.0
#: The window over which a flow that starts alone is measured before the primary joins, s.
ALONE_S = (2.0, JOIN_S)


def scenario_doc(side: str, primary: str, seed: int, bins: Binaries) -> dict[str, Any]:
    """One run: the scavenger of `side` from 0 s (none: no flow) and the primary from `JOIN_S`."""
    flows: list[dict[str, Any]] = []
    hybrid = primary == HYBRID
    if side == THEIRS:
        utility = f"Hybrid {HYBRID_THRESHOLD_MBPS:g}" if hybrid else f"Scavenger {DEVIATION_COEFFICIENT}"
        flows.append(
            {
                "id": "background",
                "rtt": RTT,
                "stack": "external",
                "sender": f"exec {bins.vivace_sender} send {{receiver_ip}} {{port}} Vivace {utility}",
                "receiver": f"exec {bins.vivace_receiver} recv {{port}}",
            }
        )
    elif side == OURS:
        cca: str | dict[str, Any] = (
            {"name": "proteus-h", "threshold_mbps": HYBRID_THRESHOLD_MBPS} if hybrid else "proteus-s"
        )
        flows.append({"id": "background", "rtt": RTT, "stack": "udp", "cca": cca})
    web: dict[str, Any] = {"id": "web", "cca": "cubic", "stack": "linux", "rtt": RTT, "start": f"{JOIN_S:g}s"}
    if primary == WEB:
        web["traffic"] = {
            "kind": "web",
            "size": WEB_SIZE,
            "interval": WEB_INTERVAL,
            "arrivals": "periodic",
            "connection": "per_request",
        }
    flows.append(web)
    return {
        "name": f"authors-proteus-{side}-{primary}",
        "duration": f"{RUN_SECONDS}s",
        "seed": seed,
        "links": [{"id": "b", "rate": f"{RATE_MBPS:g}Mbps", "queue": {"size": "1bdp"}}],
        "flows": flows,
    }


@dataclass(frozen=True)
class Point:
    """One run's numbers (from `FROM_S` on), as the emulator (or the simulator) measured them."""

    side: str
    primary: str
    seed: int
    backend: str
    primary_mbps: float
    scavenger_mbps: float
    #: Bulk primary only (NaN otherwise, and when it never yields): seconds from the primary's
    #: join to the scavenger's yield (`YIELDED_SHARE`).
    yield_s: float
    #: Web primary only (NaN otherwise): the transfers' median completion time, and the
    #: scavenger's throughput in the 100-ms bins a transfer is in and in the others.
    fct_p50_s: float
    scavenger_in_mbps: float
    scavenger_out_mbps: float
    load1: float
    #: The background flow's throughput alone, over `ALONE_S` (NaN in runs recorded before it
    #: was measured).
    alone_mbps: float = float("nan")

    def key(self) -> tuple[str, str, int, str]:
        return (self.side, self.primary, self.seed, self.backend)


def run_point(
    side: str, primary: str, seed: int, backend: str, bins: Binaries, logs: Path | None = None
) -> Point:
    """One run; the testbed's outside programs write their output under `logs` (a fresh
    temporary directory when None)."""
    from polycc.api import run_scenario
    from polycc.scenario import Scenario

    doc = scenario_doc(side, primary, seed, bins)
    log_dir = logs / f"{side}-{primary}-{seed}" if backend == "emu" and logs else None
    r = run_scenario(Scenario.from_dict(doc), backend=backend, log_dir=log_dir)
    ts = r.flows
    late = ts[ts.t_s >= FROM_S]
    mbps = late.groupby("flow").throughput_mbps.mean()
    nan = float("nan")
    fct, inside, outside, yielded = nan, nan, nan, nan
    if primary == BULK and side != NONE:
        yielded = yield_time(ts)
    bg = ts[(ts.flow == "background") & (ts.t_s >= ALONE_S[0]) & (ts.t_s < ALONE_S[1])]
    alone = float(bg.throughput_mbps.mean()) if len(bg) else nan
    if primary == WEB:
        tr = r.transfers
        fct = float(tr[tr.requested_s >= FROM_S].fct_s.median())
        if side != NONE:
            split = during_loads(late, tr[tr.requested_s >= FROM_S])
            inside, outside = split.background_in, split.background_out
    return Point(
        side=side,
        primary=primary,
        seed=seed,
        backend=backend,
        primary_mbps=float(mbps.get("web", nan)),
        scavenger_mbps=float(mbps.get("background", nan)),
        yield_s=yielded,
        fct_p50_s=fct,
        scavenger_in_mbps=inside,
        scavenger_out_mbps=outside,
        load1=os.getloadavg()[0],
        alone_mbps=alone,
    )


def yield_time(ts: pd.DataFrame) -> float:
    """Seconds from `JOIN_S` to the first whole second after which the scavenger's (flow
    `background`) 1-s mean throughput stays below `YIELDED_SHARE` of the link; NaN if never."""
    bg = ts[ts["flow"] == "background"]
    per_s = bg.groupby(bg["t_s"].astype(int))["throughput_mbps"].mean()
    above = per_s[(per_s.index >= JOIN_S) & (per_s >= YIELDED_SHARE * RATE_MBPS)]
    first = float(above.index.max()) + 1 if len(above) else JOIN_S
    return first - JOIN_S if first < RUN_SECONDS else float("nan")


def grid() -> list[tuple[str, str, int, str]]:
    """Every run: the three sides in the testbed one after the other per seed (the host's load
    falls on each alike), ours and none in the simulator too."""
    keys = []
    for primary in PRIMARIES:
        # The hybrid's case without a background flow is the bulk case's.
        sides = (THEIRS, OURS) if primary == HYBRID else SIDES
        for seed in SEEDS:
            keys += [(side, primary, seed, "emu") for side in sides]
            keys += [(side, primary, seed, "sim") for side in sides if side != THEIRS]
    return keys


def _med(points: list[Point], field: str, digits: int = 2) -> str:
    vals = [getattr(p, field) for p in points]
    vals = [v for v in vals if v == v]
    return f"{median(vals):.{digits}f}" if vals else "–"


def _yield_text(s: float) -> str:
    return "never" if s != s else f"{s:.0f}"


def render(points: dict[tuple[str, str, int, str], Point], notes: str = "") -> str:
    rows = Table(
        [
            "primary",
            "scavenger",
            "where",
            "primary (Mbit/s)",
            "scavenger (Mbit/s)",
            f"bulk: s to the scavenger's yield (below {100 * YIELDED_SHARE:.0f} % of the link), per seed",
            "web transfers' median completion (s)",
            "scavenger during transfers / between (Mbit/s)",
        ]
    )
    label = {THEIRS: "PCC-Uspace's Proteus-S", OURS: "polycc's `proteus-s`", NONE: "none"}
    for primary in (BULK, WEB):
        for side in SIDES:
            for backend in ("emu", "sim"):
                ps = [
                    p for p in points.values() if (p.side, p.primary, p.backend) == (side, primary, backend)
                ]
                if not ps:
                    continue
                what = (
                    "bulk"
                    if primary == BULK
                    else f"{quantity_text(WEB_SIZE)} every {quantity_text(WEB_INTERVAL)}"
                )
                rows.add(
                    f"kernel CUBIC, {what}",
                    label[side],
                    "testbed" if backend == "emu" else "simulator",
                    _med(ps, "primary_mbps"),
                    _med(ps, "scavenger_mbps") if side != NONE else "–",
                    ", ".join(_yield_text(p.yield_s) for p in sorted(ps, key=lambda p: p.seed))
                    if primary == BULK and side != NONE
                    else "–",
                    _med(ps, "fct_p50_s") if primary == WEB else "–",
                    f"{_med(ps, 'scavenger_in_mbps', 1)} / {_med(ps, 'scavenger_out_mbps', 1)}"
                    if primary == WEB and side != NONE
                    else "–",
                )
    loads = [p.load1 for p in points.values() if p.backend == "emu"]
    lines = [
        "## Proteus-S and Proteus-H: the authors' code in the testbed, beside polycc's",
        "",
        "Generated by `sudo nice -n -15 .venv/bin/python -m polycc.reproduce.authors_proteus --doc`; do",
        "not edit by hand (the findings below the table are written by hand). The scavenger starts",
        f"alone on {RATE_MBPS:g} Mbit/s, {quantity_text(RTT)} RTT, 1 BDP drop-tail; a primary on the "
        "kernel's TCP",
        f"(CUBIC) joins at {JOIN_S:g} s: one bulk flow, or {quantity_text(WEB_SIZE)} transfers every "
        f"{quantity_text(WEB_INTERVAL)}, each on a new",
        f"connection. {RUN_SECONDS} s per run, numbers from {FROM_S:g} s on, medians over seeds "
        f"{', '.join(map(str, SEEDS))}. The scavenger",
        "is PCC-Uspace master's (`pccclient ... Vivace Scavenger "
        f"{DEVIATION_COEFFICIENT}`, built by `scripts/build-authors-pcc.sh`,",
        "an outside program, `stack = \"external\"`), polycc's `proteus-s` on polycc's UDP sender",
        '(`stack = "udp"`), or absent; all measured by the emulator on the link (throughput: wire bytes',
        "delivered). The simulator's rows run the same scenario file for reference.",
    ]
    lines += load_line(loads)
    lines += ["", rows.markdown()]
    hybrid = hybrid_table(points)
    if hybrid:
        lines += [
            "",
            f"### Proteus-H (threshold {HYBRID_THRESHOLD_MBPS:g} Mbit/s) beside a bulk kernel CUBIC flow",
            "",
            f"The same link and join; PCC-Uspace's `pccclient ... Vivace Hybrid {HYBRID_THRESHOLD_MBPS:g}` "
            f"against polycc's `proteus-h` with `threshold_mbps = {HYBRID_THRESHOLD_MBPS:g}`. Below its",
            "threshold the hybrid utility is the primary's, above it the scavenger's: alone it should",
            "fill the link, beside CUBIC keep about the threshold.",
            "",
            hybrid,
        ]
    if notes:
        lines += ["", notes]
    return "\n".join(lines) + "\n"


def hybrid_table(points: dict[tuple[str, str, int, str], Point]) -> str:
    """The hybrid's rows ("" without hybrid runs)."""
    rows = Table(
        [
            "hybrid",
            "where",
            f"alone, {ALONE_S[0]:g}–{ALONE_S[1]:g} s (Mbit/s)",
            f"beside CUBIC, from {FROM_S:g} s (Mbit/s)",
            "CUBIC (Mbit/s)",
        ]
    )
    label = {THEIRS: "PCC-Uspace's Proteus-H", OURS: "polycc's `proteus-h`"}
    for side in (THEIRS, OURS):
        for backend in ("emu", "sim"):
            ps = [p for p in points.values() if (p.side, p.primary, p.backend) == (side, HYBRID, backend)]
            if ps:
                rows.add(
                    label[side],
                    "testbed" if backend == "emu" else "simulator",
                    _med(ps, "alone_mbps"),
                    _med(ps, "scavenger_mbps"),
                    _med(ps, "primary_mbps"),
                )
    return rows.markdown() if rows.rows else ""


def load_cache(path: Path) -> dict[tuple[str, str, int, str], Point]:
    return {p.key(): p for p in cached(path, Point)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--doc", action="store_true", help="write the section into VALIDATION.md")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="repository root [default: .]")
    parser.add_argument("--cache", type=Path, default=Path("results/authors-proteus/cache.jsonl"))
    parser.add_argument("--reuse", action="store_true", help="render from the cache without running")
    parser.add_argument("--binaries", type=Path, help="the build script's output, saved (skips the build)")
    args = parser.parse_args(argv)
    points = load_cache(args.cache)
    if not args.reuse:
        bins = binaries_of(args.binaries.read_text()) if args.binaries else build(args.repo)
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        for key in grid():
            if key in points:
                continue
            p = run_point(*key, bins=bins, logs=args.cache.parent / "logs")
            points[key] = p
            with args.cache.open("a") as f:
                f.write(json.dumps(asdict(p)) + "\n")
            print(
                f"{p.primary} {p.side:6} {p.backend} seed {p.seed}: primary {p.primary_mbps:.2f}, "
                f"scavenger {p.scavenger_mbps:.2f} Mbit/s, fct p50 {p.fct_p50_s:.2f} s",
                flush=True,
            )
    print(render(points))
    if args.doc:
        doc = args.repo / "VALIDATION.md"
        update_document(doc, SECTION, render(points, kept_notes(doc, "<!-- authors-proteus:notes -->")))


if __name__ == "__main__":
    main()
