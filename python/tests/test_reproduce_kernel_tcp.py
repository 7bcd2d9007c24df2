"""The reproductions' Linux-kernel baselines (issue 19): the overrides that move a paper's TCP
onto the simulator's Linux model make scenarios the simulator accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from polycc import ScenarioError
from polycc.reproduce.kernel_tcp import (
    KERNEL_REJECTS,
    kernel_flow_keys,
    kernel_tcp,
    kernel_tcp_flows,
    kernel_tcp_or_default,
)
from polycc.scenario import Scenario

PAPERS = Path(__file__).resolve().parents[2] / "scenarios" / "papers"


def test_polycc_names_map_to_the_kernels() -> None:
    assert kernel_tcp("newreno", "1") == {"flows.1.cca": "reno", "flows.1.stack": "linux"}
    # A kernel module the Linux model lacks runs as polycc's port over the model's TCP; the
    # paper's own protocol stays on the default stack.
    assert kernel_tcp_or_default("illinois", "0") == {"flows.0.cca": "illinois", "flows.0.stack": "tcp"}
    assert kernel_flow_keys("hybla") == {"cca": "hybla", "stack": "tcp"}
    assert kernel_tcp_or_default("pcc-allegro", "0") == {"flows.0.cca": "pcc-allegro"}
    with pytest.raises(KeyError):
        kernel_tcp("vegas")


@pytest.mark.parametrize(
    ("scenario", "which"),
    [("janus/mmf-25.toml", None), ("janus/web-delay.toml", None), ("pcc/convergence.toml", {0, 2})],
)
def test_kernel_flows_drop_what_the_kernel_rejects(scenario: str, which: set[int] | None) -> None:
    # These files give their flows intents or host send-time noise, which the simulator refuses
    # on stack = "linux"; the plain key overrides leave them there.
    base = Scenario.from_file(PAPERS / scenario)
    with pytest.raises(ScenarioError, match="does not apply to the kernel's TCP"):
        base.with_overrides(kernel_tcp("cubic")).validate()
    moved = base.with_overrides(kernel_tcp_flows(base.to_dict()["flows"], "cubic", which))
    moved.validate()
    for i, f in enumerate(moved.to_dict()["flows"]):
        on_kernel = which is None or i in which
        assert (f.get("stack") == "linux") == on_kernel
        if on_kernel:
            assert f["cca"] == "cubic" and not set(f) & set(KERNEL_REJECTS)
