"""`polycc reproduce pcc --quick`: the PCC papers' qualitative claims in shortened runs, and the
reproduction framework itself (markers, explicit sweep points)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import polycc
from polycc.reproduce import PAPERS, ReportResult, ReproduceError, reproduce
from polycc.reproduce.common import markers, update_document
from polycc.reproduce.pcc import changing_network_toml, convergence_time, jain


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root = tmp_path_factory.mktemp("reproduce")
    doc = root / "REPRODUCTION.md"
    doc.write_text("# Reproductions\n\nhand-written intro\n", encoding="utf-8")
    return reproduce("pcc", quick=True, out=root / "out", doc=doc, plots=False)


def test_random_loss_pcc_keeps_the_link_and_cubic_collapses(quick: ReportResult) -> None:
    # Allegro Fig. 7: PCC > 95 % of capacity up to 1 % loss (1a); the loss-resilient utility at
    # 10-30 % forward loss (1h). CUBIC far below PCC at 0.1 % (quick: 15-s runs, 2 seeds), each
    # seed's ratio kept.
    assert not quick.failing("1a", "1h")
    c = quick.get("1c")
    assert c.value > 3.0 and len(c.seeds) == 2


def test_shallow_buffer_pcc_needs_a_few_packets(quick: ReportResult) -> None:
    # Allegro Fig. 9: 90 % of capacity with a 6-packet buffer. CUBIC needs far more buffer than
    # PCC, here so much more than the paper's 13x (PCC reaches 90 % with one packet, 2d) that 2b
    # fails its band (13x within x1.5).
    assert not quick.failing("2a")
    assert quick.get("2b").value > 13.0 * 1.5 and quick.failing("2b")


def test_satellite_pcc_needs_a_small_buffer_and_beats_hybla(quick: ReportResult) -> None:
    # Allegro Fig. 6: PCC near 90 % of optimal with 7.5 KB; Hybla several times below PCC with 1 MB.
    assert quick.get("3a").value > 0.8
    assert quick.get("3b").value > 5.0


def test_changing_network_pcc_tracks_the_optimum(quick: ReportResult) -> None:
    # Allegro Fig. 11: PCC 83 % of optimal (± 10 points), CUBIC several times worse.
    assert not quick.failing("4a")
    assert quick.get("4b").value > 5.0


def test_scavengers_yield(quick: ReportResult) -> None:
    # Proteus Fig. 10: primaries keep more against Proteus-S than against LEDBAT; BBR keeps >= 90 %
    # of its throughput in every case here, above the paper's 71.8 % of WiFi cases (7a fails its
    # ± 10 points); BBR-S (§7.1) shares fairly with itself.
    assert not quick.failing("7b", "8c")
    assert quick.get("7a").value == 1.0 and quick.failing("7a")


def test_outputs_and_document_section(quick: ReportResult) -> None:
    out = quick.out
    assert (out / "index.html").is_file()
    assert (out / "reproductions.json").is_file()
    assert (out / "random-loss" / "results.parquet").is_file()
    assert quick.doc is not None
    text = quick.doc.read_text(encoding="utf-8")
    begin, end = markers("pcc")
    assert text.startswith("# Reproductions\n\nhand-written intro\n")
    assert text.count(begin) == 1 and text.count(end) == 1
    section = text[text.index(begin) : text.index(end)]
    assert "| 1a |" in section and "QUICK" in section


def test_update_document_replaces_only_its_section(tmp_path: Path) -> None:
    doc = tmp_path / "R.md"
    update_document(doc, "a", "first A\n")
    update_document(doc, "b", "only B\n")
    update_document(doc, "a", "second A\n")
    text = doc.read_text(encoding="utf-8")
    assert "second A" in text and "first A" not in text and "only B" in text
    assert text.index("second A") < text.index("only B")
    doc.write_text(f"{markers('a')[0]}\nno end\n", encoding="utf-8")
    with pytest.raises(ReproduceError, match="unbalanced"):
        update_document(doc, "a", "x")


def test_unknown_paper_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReproduceError, match="unknown paper 'nope'; known: ") as err:
        reproduce("nope", quick=True, out=tmp_path / "o")
    for paper in PAPERS:
        assert paper in str(err.value)


def test_sweep_points_vary_keys_together(tmp_path: Path) -> None:
    scenario = {
        "name": "pts",
        "duration": "2s",
        "links": [{"id": "l", "rate": "10Mbps"}],
        "flows": [{"id": "f", "cca": "cubic", "rtt": "20ms"}],
    }
    points = [
        {"links.0.loss": 0.0, "links.0.ack_loss": 0.0},
        {"links.0.loss": 0.05, "links.0.ack_loss": 0.05},
    ]
    df = polycc.sweep(scenario, points, jobs=1)
    assert list(df["links.0.loss"]) == [0.0, 0.05]
    assert list(df["links.0.ack_loss"]) == [0.0, 0.05]
    assert df["flow.f.goodput_mbps"].iloc[0] > 2 * df["flow.f.goodput_mbps"].iloc[1]


def test_changing_network_scenario_is_the_generators_output() -> None:
    path = Path(__file__).resolve().parents[2] / "scenarios/papers/pcc/changing-network.toml"
    assert path.read_text(encoding="utf-8") == changing_network_toml()


def test_convergence_time_is_forward_looking() -> None:
    # Fair share 50: the band is [37.5, 62.5]. Second 2 is inside but second 4 is not, so the
    # first t with 5 good seconds in a row is 5.
    xs = [90, 80, 40, 60, 30, 45, 55, 50, 52, 48, 70]
    assert convergence_time(xs, 50.0) == 5.0
    assert convergence_time([90.0] * 10, 50.0) != convergence_time([90.0] * 10, 50.0)  # NaN
    assert jain([1.0, 1.0]) == 1.0
    assert abs(jain([3.0, 1.0]) - 0.8) < 1e-12


def test_convergence_at_the_fig16_setting(quick: ReportResult) -> None:
    # Allegro Fig. 16 with T_m = 1 RTT and eps_min = 0.02, exactly paced: flow B's convergence
    # time and rate deviation per seed; the labelled send-jitter rows are the full run's only.
    assert len(quick.get("6c").seeds) == 2 and len(quick.get("6b").seeds) == 2
    assert not any(r.knob for s in quick.sections if s.id == "6" for r in s.reproductions)


def test_short_flows_pcc_starts_slower_than_slow_start(quick: ReportResult) -> None:
    # Allegro Fig. 15, from the pooled per-transfer tables: with the link mostly idle, PCC's
    # starting state (one doubling per 1.7-2.2-RTT monitor interval) takes 100 KB well over TCP's
    # slow start (one doubling per RTT), so "similar" median completion times do not hold; both
    # seeds are measured.
    a = quick.get("9a")
    assert len(a.seeds) == 2 and a.value > 1.25 and quick.failing("9a")
    assert quick.get("9c").value > 0.5


def test_fair_queueing_codel_gives_tcp_far_more_power_than_a_deep_buffer(quick: ReportResult) -> None:
    # Allegro Fig. 17: TCP's interactive flows get about 10x the power behind FQ-CoDel; PCC's
    # latency utility does not get the same power behind both (its start-up fills the deep
    # buffer, which drains slowly), so 10b fails over both seeds.
    assert not quick.failing("10a")
    b = quick.get("10b")
    assert len(b.seeds) == 2 and b.value > 2.0 and quick.failing("10b")


def test_tcp_friendliness_pcc_is_not_friendlier_than_ten_parallel_tcp_flows(quick: ReportResult) -> None:
    # Allegro Fig. 14 (quick: 100 Mbit/s and 10 Mbit/s at 30 ms, N = 1 and 10, 30-s runs, 2 seeds):
    # the normal TCP flow keeps less against N PCC flows than against N bundles of 10 TCP flows
    # on the 10 Mbit/s link at N = 10 (the PCC flows hold losses far above the 5 % knee), so
    # "PCC is more friendly as N grows" fails on both seeds.
    a = quick.get("11a")
    assert len(a.seeds) == 2 and a.value < 1.0 and quick.failing("11a")
    b = quick.get("11b")
    assert len(b.seeds) == 2 and b.value < 1.0 and quick.failing("11b")
    assert "Mathis" in a.why and "drops fall on its bursts" in a.why
    assert "start-up left it far above its share" in b.why
    # The knob rows (send-time noise on the PCC flows) are there, labelled and over both seeds.
    for knob in ("11a-jitter", "11b-jitter"):
        assert quick.get(knob).knob and len(quick.get(knob).seeds) == 2


def _tcp_beside_one_pcc_flow(send_jitter: str, seed: int) -> tuple[float, float, float]:
    """(normal TCP's loss rate, the PCC flow's, TCP's goodput) on 100 Mbit/s, 10 ms, 1 BDP, 20 s."""
    doc = {
        "name": "tcp-beside-pcc",
        "duration": "20s",
        "seed": seed,
        "links": [{"id": "b", "rate": "100Mbps", "queue": {"kind": "droptail", "size": "1bdp"}}],
        "flows": [
            {"id": "tcp", "cca": "cubic", "stack": "linux", "rtt": "10ms"},
            {"id": "pcc", "cca": "pcc-allegro", "rtt": "10ms", "send_jitter": send_jitter},
        ],
    }
    s = polycc.run(doc).flow_summary().set_index("id")
    return (
        float(s.loc["tcp", "loss_rate"]),
        float(s.loc["pcc", "loss_rate"]),
        float(s.loc["tcp", "goodput_mbps"]),
    )


def test_exact_pacing_puts_the_drops_on_the_normal_tcp_flow() -> None:
    # What 11a's text rests on: an exactly paced PCC flow keeps the drop-tail queue full and the
    # kernel TCP flow's window bursts take the drops, several times the PCC flow's loss rate; with
    # U[0, 1 ms] of send-time noise on the PCC flow the two lose alike and TCP gets more.
    exact = [_tcp_beside_one_pcc_flow("0ms", seed) for seed in (1, 2, 3)]
    noisy = [_tcp_beside_one_pcc_flow("1ms", seed) for seed in (1, 2, 3)]
    assert all(tcp > 3 * pcc for tcp, pcc, _ in exact), exact
    assert all(tcp < 1.5 * pcc for tcp, pcc, _ in noisy), noisy
    assert sorted(g for *_, g in noisy)[1] > 1.4 * sorted(g for *_, g in exact)[1]


def test_incast_tcp_collapses_on_the_minimum_rto_and_pcc_does_not(quick: ReportResult) -> None:
    # Allegro Fig. 10 (quick: 10 and 33 senders of 256 KB, 1 Gbit/s, 100 us, 64 KB buffer, 2
    # trials): at 33 senders TCP waits out Linux's 200-ms minimum RTO (its last response after
    # 200 ms, RTOs in every trial) and gets well under half the link, PCC (the authors' incast
    # start, 143 Mbit/s) over half; at 10 senders TCP recovers without timeouts and gets more
    # than PCC, so 7-8x fails.
    section = next(s for s in quick.sections if s.id == "12")
    rows = {r[0]: r for r in section.table.rows}
    cols = section.table.columns
    tcp_share = float(rows["33"][cols.index("TCP goodput (of the link)")].removesuffix(" %"))
    pcc_share = float(rows["33"][cols.index("PCC goodput (of the link)")].removesuffix(" %"))
    rtos = float(rows["33"][cols.index("TCP RTOs per trial")])
    tcp_last_ms = float(rows["33"][cols.index("last response done, PCC / TCP (ms)")].split(" / ")[1])
    assert tcp_share < 40.0 and pcc_share > 50.0 and rtos >= 1 and tcp_last_ms > 200.0
    assert float(rows["10"][cols.index("TCP RTOs per trial")]) == 0.0
    # 12a's farthest point lies above the paper's 60-80 % band widened to 50-90 % (93 %; 90 %
    # before the default stack counted QUIC's UDP payload, in which the incast start's
    # 143 Mbit/s is now counted): PCC keeps far more of the link than TCP, more than the paper.
    assert quick.get("12a").value > 0.5
    b = quick.get("12b")
    assert len(b.seeds) == 2 and b.value < 1.0 and quick.failing("12b")


def test_proteus_video_players_stream_and_stall_only_when_forced(quick: ReportResult) -> None:
    # Proteus Figs. 12-13 (quick: 60-s runs at 110 Mbit/s, 2 seeds): with BOLA the 1080P players
    # fetch the same bitrates under Proteus-H and Proteus-P (13b within 10 %) and nobody stalls
    # (13c has no value); forced to the highest bitrates (45 + 3 x 12 Mbit/s of video on
    # 110 Mbit/s) the 4K player stalls under both, so 13e's ratio has a value for each seed.
    assert not quick.failing("13b")
    assert all(math.isnan(v) for v in quick.get("13c").seeds)
    e = quick.get("13e")
    assert len(e.seeds) == 2 and all(0.2 < v < 3.0 for v in e.seeds)


def test_scavengers_beside_video_players_and_page_loads(quick: ReportResult) -> None:
    # Proteus Fig. 11 (quick: 1 and 8 players, the full 600-s page runs, 2 seeds). (b) LEDBAT's
    # 100 ms target queue slows every round trip of a page load, Proteus-S keeps little queue
    # (14d, 14e: LEDBAT over Proteus-S). (a) With 8 players, each ratio of bitrates has a value
    # per seed, and CUBIC in the background costs the players more than LEDBAT (14b).
    for rid in ("14d", "14e"):
        r = quick.get(rid)
        assert len(r.seeds) == 2 and all(v > 1.1 for v in r.seeds), r
    assert all(v > 0 for v in quick.get("14c").seeds)
    assert "Within a load Proteus-S yields little" in quick.get("14c").why
    assert all(0.5 < v < 2.0 for v in quick.get("14a").seeds), quick.get("14a")
    assert all(v > 1.0 for v in quick.get("14b").seeds), quick.get("14b")


def test_during_loads_splits_the_bins_a_transfer_is_in() -> None:
    # 100-ms bins from 0 to 0.9 s; one transfer from 0.25 s to 0.55 s is in the bins starting at
    # 0.2, 0.3, 0.4 and 0.5 s. The background sends 50 Mbit/s in those and 90 in the rest.
    import pandas as pd

    from polycc.reproduce.pcc.proteus_applications import during_loads

    t = [round(0.1 * i, 1) for i in range(10)]
    busy = [0.2, 0.3, 0.4, 0.5]
    rows = [{"t_s": x, "flow": "web", "goodput_mbps": 0.0, "rtt_ms": 60.0 if x in busy else 20.0} for x in t]
    rows += [
        {"t_s": x, "flow": "background", "goodput_mbps": 50.0 if x in busy else 90.0, "rtt_ms": 40.0}
        for x in t
    ]
    transfers = pd.DataFrame({"requested_s": [0.25], "completed_s": [0.55]})
    d = during_loads(pd.DataFrame(rows), transfers)
    assert (d.background_in, d.background_out, d.web_rtt_in) == (50.0, 90.0, 60.0)
