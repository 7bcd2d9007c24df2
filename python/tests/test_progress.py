"""The progress line of a single run: what it says, and that it stays quiet off a terminal and
for short runs. A fake clock and stream: nothing here depends on how fast the machine is."""

from __future__ import annotations

import io

import pytest

from polycc.progress import ProgressLine, progress_text


class Terminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_text_gives_simulated_time_of_the_total_and_wall_time() -> None:
    assert progress_text("running x", 12.34, 600, 4.4) == "running x: 12.3 / 600 s simulated (2 %), 4 s wall"
    assert progress_text("running x", 30, 30, 61.6) == "running x: 30.0 / 30 s simulated (100 %), 62 s wall"
    assert progress_text("running x", 0, 0, 0) == "running x: 0.0 / 0 s simulated (100 %), 0 s wall"
    # An emulated run's time is the wall clock's.
    emulated = progress_text("running x", 5, 20, 5.2, "emulated")
    assert emulated == "running x: 5.0 / 20 s emulated (25 %), 5 s wall"


@pytest.mark.parametrize("tty", [True, False])
def test_shown_on_a_terminal_after_a_few_seconds_only(tty: bool) -> None:
    stream, clock = Terminal(tty), Clock()
    line = ProgressLine("running x", stream=stream, after_s=3.0, clock=clock)
    clock.now += 2.9
    line.update(10.0, 600.0)
    assert stream.getvalue() == ""  # a short run shows nothing
    clock.now += 0.1
    line.update(20.0, 600.0)
    clock.now += 1.0
    line.update(150.0, 600.0)
    line.close()
    expected = (
        "\rrunning x: 20.0 / 600 s simulated (3 %), 3 s wall"
        "\rrunning x: 150.0 / 600 s simulated (25 %), 4 s wall\n"
    )
    assert stream.getvalue() == (expected if tty else "")


def test_a_shorter_line_covers_the_one_before() -> None:
    stream, clock = Terminal(True), Clock()
    line = ProgressLine("r", stream=stream, after_s=0.0, clock=clock)
    clock.now += 12
    line.update(100.0, 100.0)
    clock.now -= 11  # a shorter text (a clock that never goes back would need 100 s of test)
    line.update(1.0, 100.0)
    first, second = stream.getvalue().split("\r")[1:]
    assert len(second) == len(first) and second.rstrip() == "r: 1.0 / 100 s simulated (1 %), 1 s wall"


def test_close_without_a_line_writes_nothing() -> None:
    stream = Terminal(True)
    ProgressLine("r", stream=stream, clock=Clock()).close()
    assert stream.getvalue() == ""
