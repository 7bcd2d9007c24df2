"""`polycc reproduce janus --quick`: Janus' key claims in shortened runs (about 30 s without plots)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polycc.reproduce import ReportResult, reproduce
from polycc.reproduce.janus import mmf_shares


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root: Path = tmp_path_factory.mktemp("reproduce-janus")
    return reproduce("janus", quick=True, out=root / "out", plots=False)


def test_max_min_shares_by_progressive_filling() -> None:
    assert mmf_shares(25.0, {"a": 10, "b": 8, "c": 6, "d": 4}) == {"d": 4, "c": 6, "a": 7.5, "b": 7.5}
    shares = mmf_shares(20.0, {"a": 10, "b": 8, "c": 6, "d": 4})
    assert shares["d"] == 4 and all(abs(shares[k] - 16 / 3) < 1e-9 for k in "abc")


def test_switching_follows_the_target(quick: ReportResult) -> None:
    # Fig. 6: conservative within 1.5 s, aggressive during the burst, back by 12 s, no queue after.
    for rid in ["1a", "1b", "1c", "1d"]:
        assert quick.get(rid).holds, quick.get(rid)


def test_web_flows_see_far_less_queueing_than_beside_cubic(quick: ReportResult) -> None:
    # Fig. 13: CUBIC / Janus p95 queueing delay of the web flows >= 5x; the background keeps the link.
    assert quick.get("3a").value >= 5.0
    assert quick.get("3c").value >= 0.85
    assert quick.get("3d").value >= 0.95


def test_janus_survives_a_longer_path_where_vegas_starves(quick: ReportResult) -> None:
    # Figs. 17-18: Janus >= 8 Mbit/s, Vegas <= 2 Mbit/s, D_p within 10 % of the truth.
    assert quick.get("5a").value >= 8.0
    assert quick.get("5b").value <= 2.0
    assert quick.get("5c").value <= 0.10


def test_max_min_shares_and_a_bulk_flow_giving_way(quick: ReportResult) -> None:
    # Figs. 11-12: every flow within 10 % of its max-min fair share on 25 Mbit/s. Fig. 15: each
    # 5 Mbit/s flow gets >= 90 % of its share beside a bulk flow, which takes the link back after.
    assert quick.get("2a").value <= 0.10, quick.get("2a")
    assert quick.get("4a").value >= 0.90, quick.get("4a")
    assert quick.get("4b").value >= 0.90, quick.get("4b")


def test_r_min_against_cubic_and_variants(quick: ReportResult) -> None:
    # Fig. 20: against CUBIC the slower Janus flow keeps >= 70 % of R_min = 5 Mbit/s (the claim's
    # 80 % does not hold: REPRODUCTION.md says why) and returns to its target afterwards.
    assert quick.get("6a").value >= 0.7 * 5.0, quick.get("6a")
    assert quick.get("6b").holds, quick.get("6b")
    # §7.3: both variants keep the two flows within the paper's (1 ± gamma) range of the fair
    # share (7a's 10 % is missed with Janus-reno), and the remaining flow takes its target back.
    for rid in ["7a", "7c"]:
        assert quick.get(rid).value <= 0.2, quick.get(rid)
    for rid in ["7b", "7c", "7d"]:
        assert quick.get(rid).holds, quick.get(rid)


def test_the_report_records_what_does_not_hold(quick: ReportResult) -> None:
    # Fig. 16's deviation ratio is not reproduced (REPRODUCTION.md says why); the report must
    # carry the measured number and an explanation rather than drop it.
    dev = quick.get("4c")
    assert dev.why and dev.ours
    assert (quick.out / "REPRODUCTION-janus.md").is_file()
    text = (quick.out / "REPRODUCTION-janus.md").read_text(encoding="utf-8")
    assert "| 4c |" in text and "QUICK" in text


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
