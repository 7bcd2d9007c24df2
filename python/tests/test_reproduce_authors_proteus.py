"""The Proteus-S authors'-code section (VALIDATION.md): the runs it asks for, how it reads them,
and ours in the simulator (the testbed runs need root and the authors' binaries: they are the
section's command, not a test)."""

from __future__ import annotations

import math

import pandas as pd
from test_reproduce_authors_pcc import BUILD_OUTPUT

from polycc.reproduce import authors_pcc
from polycc.reproduce import authors_proteus as ap
from polycc.scenario import Scenario

BINS = authors_pcc.binaries_of(BUILD_OUTPUT)


def test_the_scavengers_share_one_link_with_the_kernels_cubic_joining_later() -> None:
    theirs = ap.scenario_doc(ap.THEIRS, "web", 3, BINS)
    ours = ap.scenario_doc(ap.OURS, "web", 3, BINS)
    none = ap.scenario_doc(ap.NONE, "bulk", 3, BINS)
    assert theirs["links"] == ours["links"] == none["links"]
    assert theirs["flows"][0]["sender"] == (
        "exec /c/vivace/src/app/pccclient send {receiver_ip} {port} Vivace Scavenger 0.0015"
    )
    assert ours["flows"][0] == {"id": "background", "rtt": "30ms", "stack": "udp", "cca": "proteus-s"}
    assert [f["id"] for f in none["flows"]] == ["web"] and "traffic" not in none["flows"][0]
    web = theirs["flows"][1]
    assert (web["stack"], web["cca"], web["start"]) == ("linux", "cubic", "5s")
    assert web["traffic"]["connection"] == "per_request" and web["traffic"]["size"] == ap.WEB_SIZE
    for doc in (theirs, ours, none):
        Scenario.from_dict(doc).validate()
    # Per primary and seed: the three sides in the testbed, then ours and none in the simulator.
    g = ap.grid()
    assert len(g) == len(ap.PRIMARIES) * len(ap.SEEDS) * 5
    assert [(k[0], k[3]) for k in g[:5]] == [
        (ap.THEIRS, "emu"),
        (ap.OURS, "emu"),
        (ap.NONE, "emu"),
        (ap.OURS, "sim"),
        (ap.NONE, "sim"),
    ]


def test_the_yield_is_the_first_second_after_which_the_scavenger_stays_low() -> None:
    # The scavenger sends 15 Mbit/s to 12 s, 1 Mbit/s after, but 3 Mbit/s (above 10 % of 20) in
    # second 14: it has yielded from 15 s, 10 s after the primary joined at 5 s.
    rates = {s: (15.0 if s < 12 else 1.0) for s in range(ap.RUN_SECONDS)} | {14: 3.0}
    ts = pd.DataFrame(
        [
            {"t_s": s + 0.1 * k, "flow": "background", "throughput_mbps": r}
            for s, r in rates.items()
            for k in range(10)
        ]
    )
    assert ap.yield_time(ts) == 10.0
    # Still above at the run's last second: never.
    ts.loc[ts["t_s"] >= ap.RUN_SECONDS - 1, "throughput_mbps"] = 5.0
    assert math.isnan(ap.yield_time(ts))


def test_ours_yields_to_a_bulk_primary_and_slows_short_transfers_in_the_simulator() -> None:
    # What the section's simulator rows show, seed 1: polycc's Proteus-S gives a bulk kernel CUBIC
    # flow over 90 % of the link and sends under 10 % of it within 10 s of its join, yet a 500 KB
    # transfer beside it takes several times as long as alone (0.30 s).
    bulk = ap.run_point(ap.OURS, "bulk", 1, "sim", BINS)
    assert bulk.primary_mbps > 0.9 * ap.RATE_MBPS and bulk.yield_s <= 10
    web = ap.run_point(ap.OURS, "web", 1, "sim", BINS)
    alone = ap.run_point(ap.NONE, "web", 1, "sim", BINS)
    assert 0.25 < alone.fct_p50_s < 0.35
    assert web.fct_p50_s > 3 * alone.fct_p50_s
    text = ap.render({p.key(): p for p in (bulk, web, alone)})
    assert "| kernel CUBIC, 500 KB every 2 s | polycc's `proteus-s` | simulator |" in text
