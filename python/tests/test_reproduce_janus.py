"""`polycc reproduce janus --quick`: Janus' key claims in shortened runs over two seeds (a few
seconds without plots), judged by the section's criteria at the paper's numbers (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polycc.reproduce import ReportResult, reproduce
from polycc.reproduce.janus import GAMMA, mmf_shares
from polycc.reproduce.janus_criteria import OLD_CRITERIA


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root: Path = tmp_path_factory.mktemp("reproduce-janus")
    return reproduce("janus", quick=True, out=root / "out", plots=False)


def test_max_min_shares_by_progressive_filling() -> None:
    assert mmf_shares(25.0, {"a": 10, "b": 8, "c": 6, "d": 4}) == {"d": 4, "c": 6, "a": 7.5, "b": 7.5}
    shares = mmf_shares(20.0, {"a": 10, "b": 8, "c": 6, "d": 4})
    assert shares["d"] == 4 and all(abs(shares[k] - 16 / 3) < 1e-9 for k in "abc")


def test_every_claim_is_measured_over_the_seeds(quick: ReportResult) -> None:
    # Quick mode runs two seeds of every claim; the Poisson cross traffic of Fig. 6 (from 6 s)
    # differs between them, so the return after the burst varies and shows an interval (the
    # switch into it, read on 50-ms bins, may fall in the same bin), while the flow's start
    # before it, and every run without a random element, is one sample said to be so.
    for r in quick.reproductions:
        assert len(r.seeds) == 2, r
    burst = quick.get("1c")
    assert burst.seeds[0] != burst.seeds[1] and "[" in burst.ours
    assert quick.get("1a").ours.endswith("(deterministic: all 2 seeds alike)")
    for rid in ("2a", "3a", "4c", "5a", "6a", "7a"):
        assert quick.get(rid).ours.endswith("(deterministic: all 2 seeds alike)"), quick.get(rid)


def test_switching_follows_the_target(quick: ReportResult) -> None:
    # Fig. 6: aggressive within the 2-s burst, no standing queue after the switch back.
    assert not quick.failing("1b", "1d")
    assert quick.get("1b").value <= 2.0
    # The paper's times (0.7 s to the first switch, 2 s after the burst to the switch back) are
    # not reproduced: ours are faster, and the section says why.
    for rid, paper in (("1a", 0.7), ("1c", 2.0)):
        r = quick.get(rid)
        assert not r.holds and r.value < paper / 1.5 and r.why


def test_web_flows_see_far_less_queueing_than_beside_cubic(quick: ReportResult) -> None:
    # Fig. 13: the web flows queue far less beside Janus-12 than beside CUBIC; the background
    # keeps the link and its target. The paper's order of magnitude within x1.5 is missed by a
    # hair since the default stack counts QUIC's UDP payload (6.6x; 7.7x before), and the
    # closing list says so.
    assert not quick.failing("3c", "3d")
    assert 5.0 <= quick.get("3a").value < 10 / 1.5 and not quick.get("3a").holds


def test_janus_survives_a_longer_path_where_vegas_starves(quick: ReportResult) -> None:
    # Figs. 17-18: Vegas starves, D_p within 10 % of the truth; Janus keeps most of its target
    # (>= 90 %) but not the bound's 96 %, which the section lists.
    assert not quick.failing("5b", "5c")
    assert 9.0 <= quick.get("5a").value < 9.6


def test_max_min_shares_and_a_bulk_flow_giving_way(quick: ReportResult) -> None:
    # Figs. 11-12: every flow near its max-min fair share on 25 Mbit/s, though since the default
    # stack counts QUIC's UDP payload the exact run freezes a flow 10.9 % off (Algorithm 1's
    # band, 2a's note), just outside the 10 % criterion. Fig. 15: the bulk flow takes the link
    # back after the others leave.
    assert not quick.failing("4b")
    assert 0.10 < quick.get("2a").value <= 0.12 and quick.get("2a").why


def test_knob_rows_are_labelled_and_vary_with_the_seed(quick: ReportResult) -> None:
    knobbed = [r for r in quick.reproductions if r.knob]
    assert [r.id for r in knobbed] == ["2a-jitter", "4a-jitter", "4c-jitter", "7a-jitter", "7c-jitter"]
    for r in knobbed:
        assert r.seeds[0] != r.seeds[1] and "alike" not in r.ours, r
    text = (quick.out / "REPRODUCTION-janus.md").read_text(encoding="utf-8")
    assert "second rows run with a knob we added (labelled, not counted)" in text


def test_r_min_against_cubic_and_variants(quick: ReportResult) -> None:
    # Fig. 20: against the Linux model's CUBIC (the paper's kernel CUBIC, issue 19) the slower
    # Janus flow holds R_min only about the (1 - gamma) range's lower edge (3.85 Mbit/s, just
    # under it, since the default stack counts QUIC's UDP payload; 4.05 before), and comes back
    # close to its target afterwards.
    assert 0.95 * (1 - GAMMA) * 5.0 <= quick.get("6a").value < 0.9 * 5.0 and quick.get("6a").why
    assert quick.get("6b").value >= 0.93 * 10.0
    # §7.3: both variants keep the two flows within the paper's (1 +- gamma) range of the fair
    # share, the remaining flow takes its target back, Janus-htcp within 2 s, and Janus-reno
    # converges more slowly than Janus-htcp.
    assert not quick.failing("7a", "7b", "7c", "7d", "7e", "7f")


def test_the_report_records_what_does_not_hold(quick: ReportResult) -> None:
    # Fig. 20's return to the target is not reproduced (REPRODUCTION.md says why); the report must
    # carry the measured number and an explanation rather than drop it, and the closing list
    # names the verdicts the criteria at the paper's numbers changed.
    back = quick.get("6b")
    assert back.why and back.ours and not back.holds
    # Fig. 16's deviation ratio is set by where four exact Vegas flows freeze inside Vegas'
    # band, not by Janus: since the default stack counts QUIC's UDP payload they freeze wider
    # apart (1.30; 0.69 before, which held), and the note says the ratio lands through CUBIC's
    # spread and Vegas' band.
    dev = quick.get("4c")
    assert not dev.holds and dev.value > 1.0 and "through CUBIC's spread" in dev.why
    text = (quick.out / "REPRODUCTION-janus.md").read_text(encoding="utf-8")
    assert "| 4c |" in text and "QUICK" in text
    assert "**Verdicts changed by issue 19** (before: 22 of 26 held" in text
    assert "- **1a** held before issue 19 (<= 1.5 s) and does not hold now" in text
    new = {"2e", "3g", "7e", "7f", "8a", "8b", "8c", "8d", "9a", "9b", "9c", "10a", "10b"}
    assert set(OLD_CRITERIA) >= {r.id for r in quick.reproductions if not r.knob} - new


def test_page_loads_wait_behind_cubics_queue(quick: ReportResult) -> None:
    # Fig. 14 (quick: two sites, 2 seeds): a document's response time is a few round trips, so
    # CUBIC's full buffer makes it over twice Janus-12's on every site (9c), and the notes name
    # each site's ratio.
    prt = quick.get("9c")
    assert prt.holds and all(v >= 2.0 for v in prt.seeds), prt
    assert "Google" in quick.get("9b").why and "Facebook" in quick.get("9a").why
    assert all(v > 0 for v in quick.get("9a").seeds)


def test_janus_settles_near_its_minimum_target_beside_cubic(quick: ReportResult) -> None:
    # Fig. 19 (quick: R_min 4 and 10 Mbit/s): against CUBIC Janus settles between its
    # switching bound (1 - gamma)·R_min and R_min (10b), so at the fair share it gets less than
    # CUBIC (10a below 1). At R_min 4 it cycles between its stages; at 10 it is aggressive most
    # of the time, a CUBIC flow, and the why-text sets it beside two kernel CUBIC flows.
    held = quick.get("10b")
    assert all(1 - GAMMA - 0.1 < v < 1.0 for v in held.seeds), held
    a = quick.get("10a")
    assert all(0.3 < v < 1.0 for v in a.seeds), a
    assert "4 (" in a.why.split("it cycles between its stages")[0]
    assert "10 (" in a.why.split("it is aggressive most of the time")[0].split("it cycles")[1]
    assert "two kernel CUBIC flows starting together" in a.why


def test_a_janus_run_plots_its_policy_state(tmp_path: Path) -> None:
    import polycc

    root = Path(__file__).resolve().parents[2]
    scen = root / "scenarios" / "papers" / "janus" / "switching.toml"
    r = polycc.run(scen)
    for col in [
        "cc_stage",
        "cc_target_rate_mbps",
        "cc_dp_ms",
        "cc_p_avg_mbps",
        "target_rate_mbps",
        "satisfaction",
    ]:
        assert col in r.flows.columns, col
    assert r.flow_summary().set_index("id").loc["janus", "target_rate_mbps"] == 8.0
    out = tmp_path / "run"
    r.write(out)
    assert (out / "policy.png").is_file()
    assert "policy.png" in (out / "report.html").read_text(encoding="utf-8")
