"""The registered congestion controllers and policies: names, summaries and parameters.

Each controller declares its parameters once, beside the Rust struct that parses them (name,
type, range or allowed values, description, source of the default; Rust `ParamTable::PARAMS`);
the defaults are that struct's own. Validation checks the same declaration, so what is shown
here is what a scenario is held to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from polycc import _native


class UnknownCcaError(ValueError):
    """No controller is registered under the name; the message lists the known ones."""


#: One end of a range: a number, or the name of the parameter whose value bounds it.
Bound = float | str


def _number(x: float) -> str:
    """A bound as a scenario would write it: 100000000, 0.05."""
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


@dataclass(frozen=True)
class Parameter:
    """One key of a controller's `cca` table."""

    name: str
    #: What it takes, in words: "number", "integer", "boolean", "one of cwnd, rate", ...
    type: str
    #: The value an absent key takes (JSON-decoded); None when absence has its own meaning.
    default: Any
    #: What leaving the key out means, for a parameter without a default value of its own.
    absent: str | None
    #: The closed range a number must lie in, when there is one.
    range: tuple[Bound, Bound] | None
    #: The allowed strings, for a parameter that takes one of a few.
    choices: tuple[str, ...] | None
    description: str
    #: Where the default comes from (RFC / paper section, implementation).
    source: str

    @property
    def default_text(self) -> str:
        """The default as written in a scenario (`0.7`, `true`, `"bbr"`), or what absence means."""
        if self.default is None:
            return self.absent or "none"
        if isinstance(self.default, float):
            return _number(self.default)
        return json.dumps(self.default, ensure_ascii=False)

    @property
    def range_text(self) -> str | None:
        """`[lo, hi]`, a bound given by another parameter named."""
        if self.range is None:
            return None
        lo, hi = (b if isinstance(b, str) else _number(b) for b in self.range)
        return f"[{lo}, {hi}]"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "absent": self.absent,
            "range": list(self.range) if self.range is not None else None,
            "choices": list(self.choices) if self.choices is not None else None,
            "description": self.description,
            "source": self.source,
        }


def _unknown(name: str) -> UnknownCcaError:
    return UnknownCcaError(f"unknown congestion control {name!r}; known: {', '.join(_native.cca_names())}")


def cca_summary(name: str) -> str:
    """The one-line description of a registered controller; UnknownCcaError (a ValueError)
    naming the known ones for any other name."""
    summary = _native.cca_summary(name)
    if summary is None:
        raise _unknown(name)
    return summary


def _bound(b: float | str) -> Bound:
    return b if isinstance(b, str) else float(b)


def cca_parameters(name: str) -> list[Parameter]:
    """The declared parameters of a registered controller (see `Parameter`), in declaration
    order; UnknownCcaError otherwise."""
    params = _native.cca_parameters(name)
    if params is None:
        raise _unknown(name)
    return [
        Parameter(
            name=p["name"],
            type=p["type"],
            default=json.loads(p["default_json"]),
            absent=p["absent"],
            range=(_bound(p["range"][0]), _bound(p["range"][1])) if p["range"] is not None else None,
            choices=tuple(p["choices"]) if p["choices"] is not None else None,
            description=p["description"],
            source=p["source"],
        )
        for p in params
    ]


def cca_needs_video(name: str) -> bool:
    """Whether the controller (with its default parameters) needs the frames of a video source:
    a flow running it must have `traffic = { kind = "video" }` (PIBES). UnknownCcaError for an
    unknown name."""
    needs = _native.cca_needs_media_frames(name)
    if needs is None:
        raise _unknown(name)
    return needs
