"""`polycc reproduce janus --quick`: Janus' key claims in shortened runs (about 30 s without plots)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polycc.reproduce import ReportResult, reproduce
from polycc.reproduce.janus import GAMMA, mmf_shares


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> ReportResult:
    root: Path = tmp_path_factory.mktemp("reproduce-janus")
    return reproduce("janus", quick=True, out=root / "out", plots=False)


def test_max_min_shares_by_progressive_filling() -> None:
    assert mmf_shares(25.0, {"a": 10, "b": 8, "c": 6, "d": 4}) == {"d": 4, "c": 6, "a": 7.5, "b": 7.5}
    shares = mmf_shares(20.0, {"a": 10, "b": 8, "c": 6, "d": 4})
    assert shares["d"] == 4 and all(abs(shares[k] - 16 / 3) < 1e-9 for k in "abc")


def test_switching_follows_the_target(quick: ReportResult) -> None:
    # Fig. 6: conservative soon, aggressive during the burst, back after it, no queue after.
    assert not quick.failing("1a", "1b", "1c", "1d")


def test_web_flows_see_far_less_queueing_than_beside_cubic(quick: ReportResult) -> None:
    # Fig. 13: the web flows queue far less beside Janus than beside CUBIC; the background keeps
    # the link.
    assert not quick.failing("3a", "3c", "3d")


def test_janus_survives_a_longer_path_where_vegas_starves(quick: ReportResult) -> None:
    # Figs. 17-18: Janus keeps its target, Vegas starves, D_p close to the truth.
    assert not quick.failing("5a", "5b", "5c")


def test_max_min_shares_and_a_bulk_flow_giving_way(quick: ReportResult) -> None:
    # Figs. 11-12: every flow close to its max-min fair share on 25 Mbit/s. Fig. 15: each
    # 5 Mbit/s flow gets its share beside a bulk flow, which takes the link back after.
    assert not quick.failing("2a", "4a", "4b")


def test_r_min_against_cubic_and_variants(quick: ReportResult) -> None:
    # Fig. 20: against CUBIC the slower Janus flow keeps >= 70 % of R_min = 5 Mbit/s (the claim's
    # 80 % does not hold: REPRODUCTION.md says why) and returns to its target afterwards.
    assert quick.get("6a").value >= 0.7 * 5.0, quick.get("6a")
    assert not quick.failing("6b")
    # §7.3: both variants keep the two flows within the paper's (1 ± gamma) range of the fair
    # share (7a's tighter criterion is missed with Janus-reno), and the remaining flow takes its
    # target back.
    assert quick.get("7a").value <= GAMMA, quick.get("7a")
    assert not quick.failing("7b", "7c", "7d")


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
