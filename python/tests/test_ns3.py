"""Cross-validation against ns-3 (Debian's libns3-dev 3.37): a few short dumbbell scenarios run in
both simulators through validation/ns3/compare.py must agree within the issue's thresholds (mean
per-flow goodput within 10 %, mean and p95 queueing delay within 25 % or one packet time).

Skips when ns-3 is not installed; `validation/ns3/install.sh` installs it (dev.sh test runs it
before pytest, so CI runs these). VALIDATION.md has the full grid and the explanations.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
NS3_DIR = REPO / "validation" / "ns3"
SKIP_MESSAGE = "ns-3 (libns3-dev) not installed: run validation/ns3/install.sh"


def load_compare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ns3_compare", NS3_DIR / "compare.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


compare = load_compare()


@pytest.fixture(scope="module")
def runner():
    # Build the dumbbell program if ns-3 is present; never install packages from a test.
    subprocess.run(["bash", str(NS3_DIR / "install.sh"), "--build-only"], check=False)
    if not compare.BINARY.exists():
        pytest.skip(SKIP_MESSAGE)
    opts = compare.Ns3Options()
    return compare.Runner(opts, compare.Cache(None, opts), [1], compare.BINARY)


# Short, cheap scenarios (10 Mbit/s, 10 s simulated: about 1-3 s of ns-3 each) from the regimes
# of the grid: a lone flow filling a 1-BDP buffer, four flows sharing a deep buffer, and random
# loss with a shallow buffer.
CASES = [
    ("newreno", 1, "20ms", "1bdp", 0.0),
    ("newreno", 4, "20ms", "4bdp", 0.0),
    ("newreno", 1, "20ms", "0.2bdp", 0.001),
    ("cubic", 1, "20ms", "1bdp", 0.0),
    ("cubic", 4, "20ms", "4bdp", 0.0),
]


@pytest.mark.parametrize(("cca", "flows", "rtt", "buffer", "loss"), CASES)
def test_polycc_agrees_with_ns3(runner, cca, flows, rtt, buffer, loss):
    point = compare.Point(
        cca=cca,
        rate_bps=compare.parse_rate("10Mbps"),
        rtt_s=compare.parse_time(rtt),
        buffer=buffer,
        loss=loss,
        flows=flows,
        duration_s=10.0,
    )
    row = runner.row(point)
    table = compare.text_table([row])
    assert row.goodput_ok, f"goodput ratio {row.goodput_ratio:.3f} beyond 10 %\n{table}"
    assert row.qdelay_ok, f"queueing delay beyond 25 % (and one packet time)\n{table}"
    # Both simulators must also see a busy link and lose no bytes to nowhere.
    assert row.ns3.utilization > 0.5 and row.polycc.utilization > 0.5, table


def test_ns3_scenario_matches_polycc_scenario():
    """The two sides get the same packet count for a BDP-sized buffer and the same settings."""
    p = compare.Point("cubic", 100e6, 0.02, "0.2bdp", 0.001, 4, 30.0)
    assert p.queue_packets == 33  # 0.2 × 250 000 B / 1500 B
    sc = compare.polycc_scenario(p, seed=3)
    assert sc["links"][0]["queue"]["size"] == "33pkt"
    assert sc["flows"][0]["count"] == 4 and sc["flows"][0]["pacing"] is False
    args = compare.ns3_args(p, 3, compare.Ns3Options())
    assert "--queue=33" in args and "--flows=4" in args and "--loss=0.001" in args
    assert "--delack=1" in args and "--min-rto=200" in args
    # polycc-only CCA parameters (an ablation of polycc's side) go into a CCA table.
    sc = compare.polycc_scenario(p, seed=3, cca_params={"reno_friendly": False})
    assert sc["flows"][0]["cca"] == {"name": "cubic", "reno_friendly": False}


def test_cca_model_version_changes_only_that_ccas_cache_key():
    """A per-CCA model version in dumbbell.cc (kCcaModelVersion) re-keys that CCA's cached ns-3
    runs and leaves every other CCA's key as it was without one."""
    opts = compare.Ns3Options()
    versions = compare.cca_model_versions()
    assert versions.get("hybla", 0) >= 1
    assert "newreno" not in versions and "cubic" not in versions
    assert compare.model_hash(opts, "newreno") == compare.model_hash(opts)
    assert compare.model_hash(opts, "cubic") == compare.model_hash(opts)
    assert compare.model_hash(opts, "hybla") != compare.model_hash(opts)
    assert compare.model_hash(compare.Ns3Options(delack=2), "newreno") != compare.model_hash(opts)


def test_ns3_attributes_reach_dumbbell_and_key_their_own_cache_entries():
    """An ns-3 attribute ablation passes --ns3::Class::Attribute=value to dumbbell, is cached apart,
    and leaves the cache key of the runs without attributes as it was before the option existed."""
    plain = compare.Ns3Options()
    assert "attributes" not in plain.key()
    assert plain.key() == {k: v for k, v in compare.asdict(plain).items() if k != "attributes"}
    attr = compare.parse_ns3_attribute("--ns3::TcpCubic::HyStart=false")
    assert attr == "ns3::TcpCubic::HyStart=false"
    opts = compare.Ns3Options(attributes=(attr,))
    p = compare.Point("cubic", 10e6, 0.1, "1bdp", 0.001, 1, 30.0)
    assert compare.ns3_args(p, 1, opts)[-1] == "--ns3::TcpCubic::HyStart=false"
    assert compare.model_hash(opts, "cubic") != compare.model_hash(plain, "cubic")
    for bad in ("TcpCubic::HyStart=false", "ns3::TcpCubic::HyStart", "ns3::TcpCubic::HyStart=a b"):
        with pytest.raises(ValueError, match="ns3::Class::Attribute=value"):
            compare.parse_ns3_attribute(bad)
