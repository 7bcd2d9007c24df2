"""The BBR-S-on-kernel-TCP section: which runs it asks for (the testbed's runs themselves need
root and take minutes: they are the section's command, not a test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from polycc.reproduce import bbrs_kernel as bk
from polycc.reproduce.pcc.proteus_bbr_s import ALT_THRESHOLD_MS, SCENARIO

PCC = Path(__file__).resolve().parents[2] / "scenarios" / "papers" / "pcc"


@pytest.mark.parametrize("stack", [bk.DEFAULT_STACK, bk.SHIM_STACK])
@pytest.mark.parametrize("pairing", list(bk.PAIRINGS))
def test_every_pairing_is_a_scenario_the_simulator_runs_with_the_flows_it_names(
    stack: str, pairing: str
) -> None:
    from polycc.api import run_scenario
    from polycc.scenario import Scenario

    overrides = {**bk.overrides(pairing, stack), "duration": "2s", "flows.1.start": "1s"}
    result = run_scenario(Scenario.from_file(PCC / SCENARIO).with_overrides(overrides))
    flows = {f["id"]: f for f in result.summary["flows"]}
    assert set(flows) == {"bbr-s", "other"}
    assert all(f["goodput_mbps"] > 0 for f in flows.values())
    if pairing == bk.CONTROL:
        assert (overrides["flows.*.cca"], overrides["flows.*.stack"]) == ("bbr", "linux")
        return
    first = overrides["flows.0.cca"]
    # BBR-S on the side's stack; BBR and CUBIC as the kernel's; BBR-S against BBR-S on one stack.
    assert overrides["flows.0.stack"] == stack
    rival = bk.competitor(pairing)
    assert overrides["flows.1.stack"] == (stack if rival == "bbr-s" else "linux")
    assert overrides["flows.1.cca"] == (first if rival == "bbr-s" else rival)
    if pairing == bk.NO_RULE:
        assert first == {"name": "bbr-s", "rtt_dev_threshold_ms": bk.NO_RULE_THRESHOLD_MS}
    elif pairing == bk.NO_ALLOWANCE:
        assert (first, rival) == ({"name": "bbr-s", "extra_acked": False}, "bbr")
    elif pairing in bk.LOW.values():
        assert first == {"name": "bbr-s", "rtt_dev_threshold_ms": ALT_THRESHOLD_MS}
    else:
        assert (first, rival) == ("bbr-s", pairing)
    # BBR-S's telemetry reaches the time series the section reads.
    assert "cc_rtt_mdev_ms" in result.flows.columns


def test_bytes_in_flight_are_whole_packets_on_the_kernel_as_in_the_simulator() -> None:
    import pandas as pd

    start, end = bk.WINDOW
    t = [start + 0.1 * i for i in range(int((end - start) * 10))]
    packets = 40 * 1500.0

    def run(kernel: bool) -> pd.DataFrame:
        rows = []
        for flow in ("bbr-s", "other"):
            row = {"t_s": t, "flow": flow, "goodput_mbps": 10.0, "inflight_bytes": packets}
            if kernel:
                # The kernel counts payload; the testbed adds the wire count beside it.
                row |= {"inflight_bytes": 40 * 1448.0, "cc_inflight_wire_bytes": packets}
            rows.append(pd.DataFrame(row))
        return pd.concat(rows)

    kernel, simulated = bk.measure([run(kernel=True)]), bk.measure([run(kernel=False)])
    assert kernel.inflight == simulated.inflight
    assert set(kernel.inflight) == {packets}
