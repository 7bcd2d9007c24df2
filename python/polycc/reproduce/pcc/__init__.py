"""The PCC family's published results: PCC Allegro (Dong et al., NSDI'15, seed text 001) and PCC
Proteus (Meng et al., SIGCOMM'20, seed text 000, with its BBR-S), reproduced in the simulator.
PCC Vivace (NSDI'18) runs as one of Proteus's primaries.

One module per experiment, each with a `run(ctx) -> Section` (scenario files in
scenarios/papers/pcc/): `allegro_*` for Allegro's figures, `proteus_*` for Proteus's; `shared`
holds what several of them use. The pass criteria are the papers' qualitative claims with a
stated margin; they are fixed beside each claim, before and independently of the results.
`ctx.quick` selects shortened versions (shorter runs, fewer points) used by the tests.
"""

from __future__ import annotations

from collections.abc import Callable

from polycc.reproduce.common import Context, Section, jain
from polycc.reproduce.pcc import (
    allegro_changing_network,
    allegro_convergence,
    allegro_random_loss,
    allegro_rtt_fairness,
    allegro_satellite,
    allegro_shallow_buffer,
    proteus_bbr_s,
    proteus_scavenger,
)
from polycc.reproduce.pcc.allegro_changing_network import changing_network_schedule, changing_network_toml
from polycc.reproduce.pcc.allegro_two_flow import convergence_time

__all__ = [
    "TITLE",
    "changing_network_schedule",
    "changing_network_toml",
    "convergence_time",
    "experiments",
    "jain",
]

TITLE = "PCC family: Allegro (NSDI'15) and Proteus (SIGCOMM'20)"


def experiments(ctx: Context) -> list[Section]:
    steps: list[Callable[[Context], Section]] = [
        allegro_random_loss.run,
        allegro_shallow_buffer.run,
        allegro_satellite.run,
        allegro_changing_network.run,
        allegro_rtt_fairness.run,
        allegro_convergence.run,
        proteus_scavenger.run,
        proteus_bbr_s.run,
    ]
    return [step(ctx) for step in steps]
