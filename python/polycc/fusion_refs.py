"""Python fusion functions named in the scenario itself, so the CLI and sweeps can use them.

A `poly` flow may name its fusion by reference instead of receiving it through
`polycc.run(..., fusions={...})`:

- `fuse = "py:<module>:<function>"`: `<module>` is imported (it must be on the Python path),
  e.g. `fuse = "py:my_fusions:lowest"`;
- `fuse = "py:<file.py>:<function>"`: the file is loaded, relative to the scenario's directory,
  e.g. `fuse = "py:fusions.py:lowest"`.

`<function>` may be a dotted attribute path. The callable is registered for the run under the
name after `py:`, exactly as a `fusions` entry of that name would be; an entry given to
`polycc.run` under the same name wins. Because the reference is text, it crosses process
boundaries: every run of a sweep (and `polycc run` / `polycc check`) resolves it itself.
A reference that cannot be resolved is a `ScenarioError` naming the scenario, the key and why.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from polycc._native import ScenarioError

if TYPE_CHECKING:
    from polycc._native import FusionFn

#: The prefix of Python fusion names (Rust `policies::poly::PY_PREFIX`).
PY_PREFIX = "py:"

#: Modules loaded from files, by resolved path and modification time (a file is run once).
_FILE_MODULES: dict[tuple[Path, int], ModuleType] = {}


def references(doc: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(key path, reference) of every `fuse = "py:<module-or-file>:<function>"` in `doc`."""
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            key = f"{path}.{k}" if path else str(k)
            if k == "fuse" and isinstance(v, str) and v.startswith(PY_PREFIX) and ":" in v[len(PY_PREFIX) :]:
                yield key, v[len(PY_PREFIX) :]
            else:
                yield from references(v, key)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from references(v, f"{path}.{i}")


def _load_file(path: Path) -> ModuleType:
    stamp = (path, path.stat().st_mtime_ns)
    if stamp in _FILE_MODULES:
        return _FILE_MODULES[stamp]
    name = f"polycc_fusions_{abs(hash(stamp))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    _FILE_MODULES[stamp] = module
    return module


def resolve(reference: str, base_dir: Path) -> FusionFn:
    """The callable `reference` ("<module>:<function>" or "<file.py>:<function>") names.
    Raises ValueError with the reason."""
    source, _, attr = reference.rpartition(":")
    if not source or not attr:
        raise ValueError("expected py:<module>:<function> or py:<file.py>:<function>")
    if source.endswith(".py"):
        file = (base_dir / source).resolve()
        if not file.is_file():
            raise ValueError(f"no file {file}")
        try:
            obj: Any = _load_file(file)
        except Exception as e:
            raise ValueError(f"loading {file} failed: {type(e).__name__}: {e}") from e
    else:
        try:
            obj = importlib.import_module(source)
        except Exception as e:
            raise ValueError(f"cannot import module {source!r}: {type(e).__name__}: {e}") from e
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{source} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{source}:{attr} is a {type(obj).__name__}, not a function")
    return obj  # type: ignore[no-any-return]


def with_referenced(
    text: str,
    fmt: str,
    origin: str,
    base_dir: Path,
    given: Mapping[str, FusionFn] | None,
) -> dict[str, FusionFn]:
    """`given` plus the callables the scenario's `py:<module>:<function>` references name.
    A document that does not parse is left to the Rust validator to report."""
    fusions = dict(given or {})
    if PY_PREFIX not in text:
        return fusions
    try:
        doc = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError):
        return fusions
    for key, ref in references(doc):
        if ref in fusions:
            continue
        try:
            fusions[ref] = resolve(ref, base_dir)
        except ValueError as e:
            raise ScenarioError(f'{origin}: {key} = "{PY_PREFIX}{ref}": {e}') from None
    return fusions
