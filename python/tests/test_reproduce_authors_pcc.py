"""The authors'-code section (VALIDATION.md): which runs it asks for and how it shows them (the
runs themselves need root, the testbed and the authors' binaries: they are the section's
command, not a test)."""

from __future__ import annotations

from polycc.reproduce import authors_pcc as ap
from polycc.scenario import Scenario

BUILD_OUTPUT = """\
some build noise
ALLEGRO_SENDER=/c/allegro/sender/app/appclient
ALLEGRO_SENDER_LIB=/c/allegro/sender/src
ALLEGRO_RECEIVER=/c/allegro/receiver/app/appserver
ALLEGRO_RECEIVER_LIB=/c/allegro/receiver/src
VIVACE_SENDER=/c/vivace/src/app/pccclient
VIVACE_RECEIVER=/c/vivace/src/app/pccserver
ALLEGRO_LR_SENDER=/c/allegro-lr/sender/app/appclient
ALLEGRO_LR_SENDER_LIB=/c/allegro-lr/sender/src
ALLEGRO_LR_RECEIVER=/c/allegro-lr/receiver/app/appserver
ALLEGRO_LR_RECEIVER_LIB=/c/allegro-lr/receiver/src
"""


def test_theirs_run_as_outside_programs_and_ours_on_polyccs_udp_sender_on_the_same_link() -> None:
    bins = ap.binaries_of(BUILD_OUTPUT)
    theirs = ap.scenario_doc("allegro", True, "8pkt", 0.01, 2, bins)
    ours = ap.scenario_doc("allegro", False, "8pkt", 0.01, 2, bins)
    assert (
        theirs["links"]
        == ours["links"]
        == [{"id": "b", "rate": "20Mbps", "loss": 0.01, "queue": {"size": "8pkt"}}]
    )
    assert theirs["seed"] == ours["seed"] == 2
    f = theirs["flows"][0]
    assert f["stack"] == "external"
    assert f["sender"] == (
        "LD_LIBRARY_PATH=/c/allegro/sender/src exec /c/allegro/sender/app/appclient {receiver_ip} {port}"
    )
    assert f["receiver"].endswith("appserver {port}")
    assert ours["flows"][0] == {"id": "ours", "rtt": "30ms", "stack": "udp", "cca": "pcc-allegro"}
    v = ap.scenario_doc("vivace", True, "1bdp", 0.0, 1, bins)["flows"][0]
    assert v["sender"] == "exec /c/vivace/src/app/pccclient send {receiver_ip} {port} Vivace"
    # Both are valid scenarios (the external one for the emulator only).
    for doc in (theirs, ours):
        Scenario.from_dict(doc).validate()


def test_the_grid_puts_theirs_next_to_ours_and_the_table_shows_the_ratio() -> None:
    g = ap.grid(["allegro"])
    assert len(g) == len(ap.BUFFERS) * len(ap.LOSSES) * len(ap.SEEDS) * 3
    # Theirs and ours in the testbed one after the other, then ours in the simulator.
    for i in range(0, len(g), 3):
        assert [(x[1], x[5]) for x in g[i : i + 3]] == [(True, "emu"), (False, "emu"), (False, "sim")]
        assert g[i][2:5] == g[i + 1][2:5] == g[i + 2][2:5]

    def point(theirs: bool, seed: int, thr: float) -> ap.Point:
        return ap.Point("allegro", theirs, "8pkt", 0.03, seed, thr, thr * 0.97, thr, 4.0, 0.05, 1.0)

    pts = {
        p.key(): p
        for p in [point(True, 1, 10.0), point(True, 2, 14.0), point(False, 1, 18.0), point(False, 2, 18.0)]
    }
    text = ap.render(pts)
    row = next(line for line in text.splitlines() if line.startswith("| 8 pkt | 3 %"))
    assert "12.0 (10.0–14.0)" in row and "18.0 (18.0–18.0)" in row and "| 0.67 |" in row
    assert "Vivace" not in text


def test_the_loss_resilient_build_runs_beside_ours_with_that_utility() -> None:
    bins = ap.binaries_of(BUILD_OUTPUT)
    theirs = ap.scenario_doc("allegro-lr", True, "1bdp", 0.5, 3, bins)["flows"][0]
    assert theirs["sender"].startswith("LD_LIBRARY_PATH=/c/allegro-lr/sender/src exec /c/allegro-lr/")
    ours = ap.scenario_doc("allegro-lr", False, "1bdp", 0.5, 3, bins)
    assert ours["flows"][0]["cca"] == {"name": "pcc-allegro", "utility": "loss-resilient"}
    Scenario.from_dict(ours).validate()
    # Only the heavy-loss points, 1 BDP, with their own seeds.
    g = ap.grid(["allegro-lr"])
    assert {(k[2], k[3]) for k in g} == {("1bdp", x) for x in ap.LR_LOSSES}
    assert len(g) == len(ap.LR_LOSSES) * len(ap.LR_SEEDS) * 3
    # An older saved build output without the loss-resilient build is refused by name.
    old = ap.binaries_of("\n".join(BUILD_OUTPUT.splitlines()[:7]))
    try:
        old.commands("allegro-lr")
    except SystemExit as e:
        assert "allegro-lr" in str(e)
    else:
        raise AssertionError("no binary, no command")


def test_the_loss_resilient_table_counts_the_seeds_that_stopped_low() -> None:
    def point(theirs: bool, backend: str, seed: int, thr: float) -> ap.Point:
        return ap.Point("allegro-lr", theirs, "1bdp", 0.5, seed, thr, thr, thr, 20.0, 0.5, 1.0, backend)

    runs = [
        point(True, "emu", 1, 19.0),
        point(True, "emu", 2, 3.0),
        point(False, "emu", 1, 19.5),
        point(False, "emu", 2, 19.5),
        point(False, "sim", 1, 2.0),
        point(False, "sim", 2, 19.8),
    ]
    text = ap.render({p.key(): p for p in runs})
    row = next(line for line in text.splitlines() if line.startswith("| 50 %"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["11.0 (3.0–19.0)", "19.5 (19.5–19.5)", "10.9 (2.0–19.8)"]
    assert cells[4:] == ["1 of 2 (seed 2)", "0 of 2", "1 of 2 (seed 1)"]
