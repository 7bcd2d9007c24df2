"""Output directories: written beside their final place and renamed at the end (all or nothing).

Kept free of heavy imports so that the CLI can check an --out option before loading pandas.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: A directory holding one of these was written by polycc and may be replaced by a new result.
MARKERS = ("summary.json", "results.parquet", "index.html", "compare.json")


class OutputError(ValueError):
    """The output directory cannot be used."""


def check_output_dir(target: Path) -> None:
    """Raises OutputError unless `target` is absent, empty, or an earlier polycc result."""
    if not target.exists():
        return
    if not target.is_dir():
        raise OutputError(f"{target}: exists and is not a directory; choose another --out")
    try:
        entries = list(target.iterdir())
    except OSError as e:
        raise OutputError(f"{target}: cannot read the directory: {e}") from None
    if entries and not any((target / m).exists() for m in MARKERS):
        raise OutputError(
            f"{target}: exists and does not look like a polycc result (no {', '.join(MARKERS)}); "
            "refusing to replace it; choose another --out"
        )


@contextlib.contextmanager
def atomic_dir(target: Path) -> Iterator[Path]:
    """Yields a fresh temporary directory beside `target`; on success it replaces `target`."""
    target = Path(target)
    check_output_dir(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        tmp.chmod(0o755)
        yield tmp
        check_output_dir(target)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            old.rmdir()
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def relative_link(target: Path, start: Path) -> str:
    """A link from a page in `start` to `target`, with forward slashes."""
    return Path(os.path.relpath(target, start)).as_posix()
