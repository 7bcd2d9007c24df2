"""Baselines the papers ran as the Linux kernel's TCP (issue 19, "Fidelity to the papers": every
reproduction whose paper compared against Linux TCP uses that stack for its baselines).

They run on the simulator's model of the kernel's stack (`stack = "linux"`, README "The Linux stack
in the simulator", validated against the kernel in VALIDATION.md) instead of the default QUIC-like
stack: initial window 10, delayed and compressed ACKs, RACK, PRR, no pacing but BBR's. The
kernel controllers the model has (`LINUX_CCA`) run there as the kernel's own; the kernel modules it
lacks but polycc ports from the kernel's source (`KERNEL_PORTS`: Illinois, Hybla) run as polycc's
controller over the same model (`stack = "tcp"`, as the eBPF shim runs them over the real
kernel's TCP). A TCP the paper implemented itself (Allegro's paced NewReno) stays on the default
stack, and each section says which flows run where.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

#: The simulator's value of `flows[].stack` for the Linux kernel's TCP.
LINUX_STACK = "linux"

#: polycc's name of a baseline → the kernel's name of the controller the Linux model simulates
#: (README's table: `cubic`, `bbr` v1, `reno`, which polycc calls `newreno`).
LINUX_CCA: dict[str, str] = {"cubic": "cubic", "newreno": "reno", "bbr": "bbr"}

#: The simulator's value of `flows[].stack` for polycc's controller over the kernel's TCP.
SHIM_STACK = "tcp"
#: Linux kernel modules the Linux model has no controller of its own for, which polycc implements
#: after the kernel's source (`tcp_illinois.c`, `tcp_hybla.c`; their module documentation).
KERNEL_PORTS = ("illinois", "hybla")


def kernel_tcp(cca: str, flows: str = "*") -> dict[str, str]:
    """Scenario overrides that run `flows` ("*", or one index) as the kernel's TCP with the
    kernel's controller for polycc's `cca` (KeyError for one the Linux model lacks)."""
    return {f"flows.{flows}.cca": LINUX_CCA[cca], f"flows.{flows}.stack": LINUX_STACK}


#: How a section's preamble names the stack those baselines run on.
LINUX_MODEL = "the simulator's model of the Linux kernel's TCP (`stack = \"linux\"`)"
#: How a section's preamble names the stack the kernel modules polycc ports run on.
PORTS_ON_MODEL = "polycc's port of the kernel module over that model's TCP (`stack = \"tcp\"`)"


#: Flow keys the kernel's TCP cannot honour, which the simulator rejects on `stack = "linux"`
#: (`resolve/flows.rs`, `check_kernel_tcp`): an intent (the kernel's controllers take none) and
#: settings of polycc's own sender and receiver (host send-time noise, ACK policy, unpaced
#: sending: the Linux model has its own delayed ACKs and pacing rules).
KERNEL_REJECTS = ("intent", "intent_schedule", "send_jitter", "ack", "pacing")


def kernel_flow_keys(cca: str) -> dict[str, Any]:
    """A flow's keys that run it as the kernel's TCP with the kernel's controller for polycc's
    `cca`, polycc's port of a kernel module over that TCP, or polycc's `cca` on the default
    stack."""
    if cca in LINUX_CCA:
        return {"cca": LINUX_CCA[cca], "stack": LINUX_STACK}
    if cca in KERNEL_PORTS:
        return {"cca": cca, "stack": SHIM_STACK}
    return {"cca": cca}


def kernel_tcp_flows(
    flows: Sequence[Mapping[str, Any]], cca: str, which: Collection[int] | None = None
) -> dict[str, Any]:
    """A `flows` override: the scenario file's `flows`, those at `which` (all by default) as the
    kernel's TCP with the kernel's controller for polycc's `cca`, without the keys the kernel's
    TCP cannot honour (their intents, send-time noise)."""
    out = []
    for i, f in enumerate(flows):
        if which is None or i in which:
            kept = {k: v for k, v in f.items() if k not in KERNEL_REJECTS}
            out.append({**kept, **kernel_flow_keys(cca)})
        else:
            out.append(dict(f))
    return {"flows": out}


def kernel_tcp_or_default(cca: str, flows: str = "*") -> dict[str, str]:
    """`kernel_tcp` for a baseline the Linux model has; a kernel module polycc ports
    (`KERNEL_PORTS`) as polycc's controller over that model's TCP; any other controller (the
    paper's own protocol) as polycc's, on the default stack: `kernel_flow_keys` as overrides."""
    return {f"flows.{flows}.{k}": v for k, v in kernel_flow_keys(cca).items()}
