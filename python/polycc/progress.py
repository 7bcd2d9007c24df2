"""A single run's progress on stderr: simulated time reached against the run's, and wall time.

Shown only on a terminal (a log file or a pipe gets no carriage-return lines), and only once
the run has taken `after_s` of wall time: a run of a second or two needs none.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO

#: A run longer than this (wall-clock seconds) shows its progress.
PROGRESS_AFTER_S = 3.0


def progress_text(what: str, sim_s: float, total_s: float, wall_s: float, kind: str = "simulated") -> str:
    """E.g. "running x: 12.5 / 600 s simulated (2 %), 4 s wall"; `kind` "emulated" for a run in
    the emulated testbed, whose time is the wall clock's."""
    share = 100.0 * sim_s / total_s if total_s > 0 else 100.0
    return f"{what}: {sim_s:.1f} / {total_s:g} s {kind} ({share:.0f} %), {wall_s:.0f} s wall"


class ProgressLine:
    """One line on `stream`, redrawn by `update` and ended by `close`."""

    def __init__(
        self,
        what: str,
        *,
        stream: IO[str] | None = None,
        after_s: float = PROGRESS_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
        kind: str = "simulated",
    ) -> None:
        self.what = what
        self.kind = kind
        self.stream = stream if stream is not None else sys.stderr
        self.after_s = after_s
        self.clock = clock
        self.enabled = self.stream.isatty()
        self.t0 = clock()
        self.shown = False
        self._width = 0

    def update(self, sim_s: float, total_s: float) -> None:
        """Shows `sim_s` of `total_s` simulated seconds reached."""
        if not self.enabled:
            return
        wall = self.clock() - self.t0
        if wall < self.after_s:
            return
        text = progress_text(self.what, sim_s, total_s, wall, self.kind)
        # Pad over a longer line drawn before.
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = max(self._width, len(text))
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False
