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
    # The hybrid: PCC-Uspace's with its threshold, ours with the same `threshold_mbps`.
    h_theirs = ap.scenario_doc(ap.THEIRS, ap.HYBRID, 1, BINS)["flows"][0]
    h_ours = ap.scenario_doc(ap.OURS, ap.HYBRID, 1, BINS)["flows"][0]
    assert h_theirs["sender"].endswith("{port} Vivace Hybrid 5")
    assert h_ours["cca"] == {"name": "proteus-h", "threshold_mbps": 5.0}
    assert "traffic" not in ap.scenario_doc(ap.OURS, ap.HYBRID, 1, BINS)["flows"][1]
    # Per case and seed: the sides in the testbed, then ours (and none) in the simulator; the
    # hybrid's case has no run without a background flow (the bulk case's is the same).
    g = ap.grid()
    assert len(g) == 2 * len(ap.SEEDS) * 5 + len(ap.SEEDS) * 3
    assert not [k for k in g if k[1] == ap.HYBRID and k[0] == ap.NONE]
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
    assert "Proteus-H (threshold" not in text


def test_ours_hybrid_fills_the_link_alone_and_keeps_about_its_threshold_beside_cubic() -> None:
    # Proteus-H with a 5 Mbit/s threshold on 20 Mbit/s, in the simulator: alone it is a primary
    # above its threshold's rate, beside the bulk kernel CUBIC flow it keeps some of the link but
    # far from its fair half.
    h = ap.run_point(ap.OURS, ap.HYBRID, 1, "sim", BINS)
    assert h.alone_mbps > 0.8 * ap.RATE_MBPS
    assert 0.1 * ap.HYBRID_THRESHOLD_MBPS < h.scavenger_mbps < 0.4 * ap.RATE_MBPS
    text = ap.render({h.key(): h})
    assert "### Proteus-H (threshold 5 Mbit/s)" in text and "| polycc's `proteus-h` | simulator |" in text
