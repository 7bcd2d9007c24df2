"""Scenario sources: a TOML file or a dict, optionally with overrides, ready for the Rust core.

Validation itself happens in Rust (crates/polycc-sim/src/scenario), in one place, so that the CLI,
the Python API and the Rust tests report the same errors. This module only reads files and edits
documents (sweep overrides, demo trace fallbacks) before handing them over.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from polycc import _native
from polycc._native import ScenarioError

Format = Literal["toml", "json"]
ScenarioSource = str | os.PathLike[str] | Mapping[str, Any]

DICT_ORIGIN = "<dict>"
_JSON_POSITION = re.compile(r" at line \d+ column \d+$")


class OverrideError(ValueError):
    """An override (e.g. a sweep's --grid key) does not fit the scenario."""


@dataclass(frozen=True)
class Scenario:
    """A scenario document with the context the Rust core needs to report errors and find traces."""

    text: str
    format: Format
    #: Names the scenario in error messages (the file path as the user wrote it).
    origin: str
    #: Relative trace paths resolve against this directory (the scenario file's directory).
    base_dir: Path
    #: Remarks to show the user next to the results (e.g. a trace fallback).
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Scenario:
        p = Path(path)
        # Reading a FIFO or a device would block or never end: only a regular file is read.
        if p.exists() and not p.is_dir() and not p.is_file():
            raise ScenarioError(
                f"{p}: cannot read the scenario: not a regular file (a FIFO, socket or device); "
                "give a TOML file"
            )
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ScenarioError(f"{p}: cannot read the scenario: no such file") from None
        except IsADirectoryError:
            raise ScenarioError(f"{p}: cannot read the scenario: it is a directory, not a file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ScenarioError(f"{p}: cannot read the scenario: {e}") from None
        return cls(text=text, format="toml", origin=str(p), base_dir=p.parent.resolve())

    @classmethod
    def from_dict(
        cls,
        doc: Mapping[str, Any],
        *,
        origin: str = DICT_ORIGIN,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> Scenario:
        try:
            text = json.dumps(doc, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"{origin}: the scenario is not JSON-serialisable: {e}") from None
        return cls(
            text=text,
            format="json",
            origin=origin,
            base_dir=Path(base_dir).resolve() if base_dir is not None else Path.cwd(),
        )

    @classmethod
    def load(cls, source: ScenarioSource | Scenario) -> Scenario:
        if isinstance(source, Scenario):
            return source
        if isinstance(source, Mapping):
            return cls.from_dict(source)
        if isinstance(source, str | os.PathLike):
            return cls.from_file(source)
        raise TypeError(f"expected a scenario file path or a dict, got {type(source).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """The document as a dict. A syntax error is reported the way the Rust parser reports it."""
        try:
            if self.format == "toml":
                return tomllib.loads(self.text)
            doc = json.loads(self.text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
            self.validate()  # raises the Rust error, which names the line and the key
            raise ScenarioError(f"{self.origin}: {e}") from None
        if not isinstance(doc, dict):
            raise ScenarioError(f"{self.origin}: a scenario must be a table/object at the top level")
        return doc

    def with_document(self, doc: Mapping[str, Any], *, origin: str | None = None) -> Scenario:
        """The same origin and base directory, with a new document (sent to Rust as JSON)."""
        edited = Scenario.from_dict(doc, origin=origin or self.origin, base_dir=self.base_dir)
        return replace(edited, notes=self.notes)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """Applies `key.path = value` overrides (see `apply_override`); the origin mentions them."""
        if not overrides:
            return self
        doc = copy.deepcopy(self.to_dict())
        for key, value in overrides.items():
            apply_override(doc, key, value)
        shown = ", ".join(f"{k}={format_value(v)}" for k, v in overrides.items())
        return self.with_document(doc, origin=f"{self.origin} (with {shown})")

    def with_note(self, note: str) -> Scenario:
        return replace(self, notes=(*self.notes, note))

    def validate(self, seed: int | None = None, fusions: Mapping[str, _native.FusionFn] | None = None) -> str:
        """Parses and validates without running; returns the scenario name or raises ScenarioError.

        `fusions` are the Python fusion functions the scenario may name (`fuse = "py:<name>"`)."""
        fn = _native.validate_toml if self.format == "toml" else _native.validate_json
        fusions = self.fusions(fusions)
        with self._errors():
            if fusions:
                return fn(self.text, self.origin, str(self.base_dir), seed, dict(fusions))
            return fn(self.text, self.origin, str(self.base_dir), seed)

    def run_native(
        self, seed: int | None = None, fusions: Mapping[str, _native.FusionFn] | None = None
    ) -> _native.NativeOutput:
        fn = _native.run_toml if self.format == "toml" else _native.run_json
        fusions = self.fusions(fusions)
        with self._errors():
            # Without fusions the call is the plain one (a test engine may stand in for it).
            if fusions:
                return fn(self.text, self.origin, str(self.base_dir), seed, dict(fusions))
            return fn(self.text, self.origin, str(self.base_dir), seed)

    def emulate_native(
        self, seed: int | None, cancelled: Callable[[], bool], log_dir: Path | None = None
    ) -> _native.NativeOutput | None:
        """Runs the scenario in the emulated testbed (`polycc-emu`; needs root). Returns None when
        `cancelled()` turned true during the run (everything it made is removed by then). Outside
        programs (`stack = "external"`) write their stdout and stderr into `log_dir` (a fresh
        temporary directory when None)."""
        with self._errors():
            return _native.emulate(
                self.text,
                self.format,
                self.origin,
                str(self.base_dir),
                cancelled,
                seed,
                None if log_dir is None else str(log_dir),
            )

    def simulation(
        self, seed: int | None = None, fusions: Mapping[str, _native.FusionFn] | None = None
    ) -> _native.Simulation:
        """The scenario's run, to be run in steps (`polycc.results.stream_run`)."""
        from polycc.api import check_seed

        check_seed(self, seed)
        named = self.fusions(fusions)
        with self._errors():
            return _native.Simulation(
                self.text, self.origin, str(self.base_dir), seed, dict(named) or None, self.format
            )

    def fusions(self, given: Mapping[str, _native.FusionFn] | None = None) -> dict[str, _native.FusionFn]:
        """`given` plus the Python fusions the scenario names by reference
        (`fuse = "py:<module>:<function>"`, see `polycc.fusion_refs`)."""
        from polycc.fusion_refs import with_referenced

        return with_referenced(self.text, self.format, self.origin, self.base_dir, given)

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except ScenarioError as e:
            if self.format != "json":
                raise
            # The JSON text is generated here, so its line/column mean nothing to the user.
            raise ScenarioError(_JSON_POSITION.sub("", str(e))) from None


def format_value(value: Any) -> str:
    """A compact TOML-like rendering of an override value, for messages and column values."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def _split_key(key: str) -> list[str]:
    parts = key.split(".")
    if not key or any(p == "" for p in parts):
        raise OverrideError(f"{key!r} is not a key path; write keys separated by dots, e.g. links.0.rate")
    return parts


def apply_override(doc: dict[str, Any], key: str, value: Any) -> None:
    """Sets `key` (dot-separated; list indices as numbers; `*` for every element) to `value`.

    Missing tables on the way are created, so `links.0.queue.size` works on a link without a queue
    table; a missing list element is an error because its other keys would be undefined.
    """
    parts = _split_key(key)

    def walk(node: Any, i: int, where: str) -> None:
        part = parts[i]
        last = i == len(parts) - 1
        here = f"{where}.{part}" if where else part
        if isinstance(node, list):
            if part == "*":
                indices = list(range(len(node)))
                if not indices:
                    raise OverrideError(f"{key}: {where} is empty, so `*` matches nothing")
            elif part.isdigit():
                indices = [int(part)]
                if indices[0] >= len(node):
                    raise OverrideError(
                        f"{key}: {where} has {len(node)} entries (indices 0..{len(node) - 1}), "
                        f"there is no index {part}"
                    )
            else:
                raise OverrideError(f"{key}: {where} is a list; index it with a number or `*`, not {part!r}")
            for j in indices:
                if last:
                    node[j] = copy.deepcopy(value)
                else:
                    walk(node[j], i + 1, f"{where}.{j}")
        elif isinstance(node, dict):
            targets = list(node) if part == "*" else [part]
            for k in targets:
                if last:
                    node[k] = copy.deepcopy(value)
                else:
                    child = node.get(k)
                    if child is None:
                        nxt = parts[i + 1]
                        if nxt.isdigit() or nxt == "*":
                            raise OverrideError(f"{key}: {here} does not exist, so it cannot be indexed")
                        child = node[k] = {}
                    walk(child, i + 1, f"{where}.{k}" if where else k)
        else:
            raise OverrideError(f"{key}: {where} is a value ({format_value(node)}), not a table or list")

    walk(doc, 0, "")
