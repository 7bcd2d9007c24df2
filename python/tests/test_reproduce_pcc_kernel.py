"""The kernel-baseline section of the PCC reproduction: which runs it asks for and how it shows
them (the kernel runs themselves need the testbed: they are the section's command, not a
test)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from polycc.reproduce import pcc_kernel


def test_each_row_runs_cubic_on_the_default_stack_the_linux_model_and_the_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, dict[str, Any], str, bool]] = []

    def fake_run(path: Path, overrides: dict[str, Any], backend: str, *, host_noise: bool = True) -> Any:
        calls.append((path.name, dict(overrides), backend, host_noise))
        # Goodput tells the three columns apart: 90 (default stack), 60 (model), 30 (kernel).
        stack = overrides.get("flows.0.stack")
        goodput = 90.0 if stack is None else 60.0 if backend == "sim" else 30.0
        return SimpleNamespace(summary={"flows": [{"goodput_mbps": goodput}]})

    monkeypatch.setattr(pcc_kernel, "run_file", fake_run)
    text = pcc_kernel.render(Path("scenarios/papers/pcc"))

    assert len(calls) == 3 * (len(pcc_kernel.LOSSES) + len(pcc_kernel.BUFFERS))
    for _name, overrides, backend, noise in calls:
        assert overrides["flows.0.cca"] == "cubic"
        assert overrides["duration"] == f"{pcc_kernel.RUN_SECONDS}s"
        on_linux = overrides.get("flows.0.stack") == "linux"
        # The kernel and its model run without the simulator's host noise; the default stack
        # keeps the file's, as the PCC section's baseline does.
        assert noise == (not on_linux)
        assert backend == "sim" or on_linux
    lossy = [o for n, o, b, _ in calls if n == "random-loss.toml" and b == "emu"]
    assert [(o["links.0.loss"], o["links.0.ack_loss"]) for o in lossy] == [(x, x) for x in pcc_kernel.LOSSES]
    shallow = [o["links.0.queue.size"] for n, o, b, _ in calls if n == "shallow-buffer.toml" and b == "emu"]
    assert shallow == [f"{p}pkt" for p in pcc_kernel.BUFFERS]

    assert "| 0.1 % | 90.0 | 60.0 | 30.0 |" in text
    assert "| 6 pkt | 90.0 % | 60.0 % | 30.0 % |" in text
