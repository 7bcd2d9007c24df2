"""A small TOML writer for scenario documents (tables, arrays of tables, scalars, inline values).

Only used when a scenario given as a dict must be written as scenario.toml and the engine did not
provide its resolved form; the standard library reads TOML but does not write it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE_KEY.match(k) else json.dumps(k)


def _inline(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, Mapping) for x in v)


def dumps(doc: Mapping[str, Any]) -> str:
    lines: list[str] = []

    def table(t: Mapping[str, Any], prefix: str) -> None:
        for k, v in t.items():
            if not (isinstance(v, Mapping) or _is_table_array(v)):
                lines.append(f"{_key(k)} = {_inline(v)}")
        for k, v in t.items():
            name = f"{prefix}.{_key(k)}" if prefix else _key(k)
            if isinstance(v, Mapping):
                lines.extend(["", f"[{name}]"])
                table(v, name)
            elif _is_table_array(v):
                for item in v:
                    lines.extend(["", f"[[{name}]]"])
                    table(item, name)

    table(doc, "")
    return "\n".join(lines).lstrip("\n") + "\n"
