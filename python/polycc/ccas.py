"""The registered congestion controllers and policies: names, summaries and parameters.

Parameter names, types and ranges come from the controllers' builders (Rust
`Registry::parameters`); defaults and sources from the controller table of the README of the
checkout, when there is one (an installed package without it shows none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from polycc import _native


class UnknownCcaError(ValueError):
    """No controller is registered under the name; the message lists the known ones."""


@dataclass(frozen=True)
class Parameter:
    name: str
    #: What a non-number must be ("a boolean", "a string"...); None for a number.
    expects: str | None
    #: The closed range a number must lie in, when the controller checks one.
    range: tuple[float, float] | None


def _unknown(name: str) -> UnknownCcaError:
    return UnknownCcaError(f"unknown congestion control {name!r}; known: {', '.join(_native.cca_names())}")


def cca_summary(name: str) -> str:
    """The one-line description of a registered controller; UnknownCcaError (a ValueError)
    naming the known ones for any other name."""
    summary = _native.cca_summary(name)
    if summary is None:
        raise _unknown(name)
    return summary


def cca_parameters(name: str) -> list[Parameter]:
    """The parameters of a registered controller (see `Parameter`); UnknownCcaError otherwise."""
    params = _native.cca_parameters(name)
    if params is None:
        raise _unknown(name)
    return [
        Parameter(
            name=p["name"],
            expects=p["expects"],
            range=(float(p["range"][0]), float(p["range"][1])) if p["range"] is not None else None,
        )
        for p in params
    ]


@dataclass(frozen=True)
class Documented:
    """A controller's row of the README's table: its parameters with defaults, and its source."""

    parameters: str
    source: str


def documented(name: str, readme: Path | None = None) -> Documented | None:
    """The README row for `name` (`| \\`name\\` | parameters (defaults) | source |`), if found."""
    if readme is None:
        readme = Path(__file__).resolve().parents[2] / "README.md"
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return None
    row = re.compile(r"^\|\s*`" + re.escape(name) + r"`(?:\s*\([^)|]*\))?\s*\|(.*)\|(.*)\|\s*$", re.M)
    m = row.search(text)
    if m is None:
        return None
    return Documented(parameters=m.group(1).strip(), source=m.group(2).strip())
