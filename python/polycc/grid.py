"""Sweep grids: `KEY=V1,V2,...` specifications, expanded with seeds into validated run tasks.

A grid maps key paths (`links.0.rate`, `flows.0.cca`, `flows.*.rtt`, `duration`, `seed`) to the
values to try; the runs are the cartesian product of the values × the seeds. Every point is
validated before anything runs, so a typo costs nothing.
"""

from __future__ import annotations

import math
import numbers
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from itertools import product
from typing import Any

from polycc._native import ScenarioError
from polycc.scenario import DICT_ORIGIN, OverrideError, Scenario, ScenarioSource, format_value
from polycc.tasks import RunTask

_KEY = re.compile(r"^[A-Za-z0-9_\-*]+(\.[A-Za-z0-9_\-*]+)*$")
#: Seeds are unsigned 64-bit integers in the simulator.
MAX_SEED = 2**64 - 1
GRID_HELP = "write --grid KEY=V1,V2,... with KEY a dotted path such as links.0.rate, flows.*.cca or duration"


class GridError(ValueError):
    """A --grid specification is malformed or does not fit the scenario."""


#: What a scenario value can be; anything else is refused with its key path.
_ALLOWED = "allowed: strings, integers, finite floats, booleans, lists and tables of them"


def plain(value: Any, where: str) -> Any:
    """`value` as plain JSON-able Python data: numpy scalars and arrays become Python numbers and
    lists, tuples become lists. NaN, infinities and other objects raise GridError naming `where`
    (the key path), since a scenario cannot hold them."""
    if isinstance(value, bool | str) or value is None:
        return value
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        value = item()  # a numpy scalar: its Python value
        if isinstance(value, bool | str):
            return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise GridError(f"{where}: {value} is not a value a scenario can hold; {_ALLOWED}")
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v, f"{where}.{k}") for k, v in value.items()}
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and type(value).__module__ in ("numpy", "pandas.core.series"):
        value = tolist()
    if isinstance(value, list | tuple):
        return [plain(v, f"{where}.{i}") for i, v in enumerate(value)]
    raise GridError(f"{where}: {value!r} ({type(value).__name__}) is not a scenario value; {_ALLOWED}")


def grid_values(key: str, values: Any) -> list[Any]:
    """The values to try for `key`: a list (tuple, range, numpy array, ...) of values, or one
    scalar value (a string is one value, not its characters; a table is one value)."""
    if (
        isinstance(values, str | bytes | Mapping)
        or not isinstance(values, Iterable)
        or getattr(values, "ndim", 1) == 0
    ):
        values = [values]
    return [plain(v, f"--grid {key}") for v in values]


def split_values(text: str) -> list[str]:
    """Splits on commas that are not inside quotes, [] or {} (so inline tables and arrays survive)."""
    out: list[str] = []
    depth = 0
    quote: str | None = None
    cur: list[str] = []
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    return out


def parse_value(text: str) -> Any:
    """A TOML literal when it is one (10, 0.5, true, "x", { name = "cubic" }), else the text itself."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_grid(specs: Sequence[str]) -> dict[str, list[Any]]:
    """Parses `KEY=V1,V2,...` options into {key: [values]}."""
    grid: dict[str, list[Any]] = {}
    for spec in specs:
        key, sep, rest = spec.partition("=")
        key = key.strip()
        if not sep:
            raise GridError(f"--grid {spec!r}: no '='; {GRID_HELP}")
        if not _KEY.match(key):
            raise GridError(f"--grid {spec!r}: {key!r} is not a key path; {GRID_HELP}")
        if key in grid:
            raise GridError(f"--grid {spec!r}: {key} is given twice; list all its values in one --grid")
        items = split_values(rest)
        if any(not v for v in items):
            raise GridError(f"--grid {spec!r}: empty value; {GRID_HELP}")
        grid[key] = [parse_value(v) for v in items]
    return grid


def plan(
    source: ScenarioSource | Scenario,
    grid: Mapping[str, Sequence[Any]],
    *,
    seeds: int = 1,
) -> list[RunTask]:
    """Expands grid × seeds into tasks and validates every point. Raises GridError or ScenarioError."""
    base = load_base(source)
    seeds = _check_seeds(base, seeds)
    doc = base.to_dict()
    grid = normalise_grid(base, grid)
    for key, values in grid.items():
        if not values:
            raise GridError(f"{base.origin}: --grid {key}: no values")
    seed_values: list[int]
    if "seed" in grid:
        if seeds != 1:
            raise GridError(
                f"{base.origin}: give the seeds either with --grid seed=... or with --seeds, not both"
            )
        seed_values = []
        for v in grid.pop("seed"):
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SEED:
                raise GridError(
                    f"{base.origin}: --grid seed: {format_value(v)} is not a seed; "
                    f"allowed: integers 0 ..= {MAX_SEED}"
                )
            seed_values.append(v)
    else:
        first = doc.get("seed", 1)
        if not isinstance(first, int) or isinstance(first, bool) or not 0 <= first <= MAX_SEED:
            base.validate()  # reports the bad seed the way the simulator does
            first = 1
        # Wrap around rather than overflow (the seeds stay distinct).
        seed_values = [(first + i) % (MAX_SEED + 1) for i in range(seeds)]

    keys = list(grid)
    combos = list(product(*(grid[k] for k in keys))) if keys else [()]
    return _tasks(base, [dict(zip(keys, values, strict=True)) for values in combos], seed_values)


def plan_points(
    source: ScenarioSource | Scenario,
    points: Sequence[Mapping[str, Any]],
    *,
    seeds: int = 1,
) -> list[RunTask]:
    """Tasks for explicit points, each a {key: value} dict of overrides applied together (for keys
    that vary jointly, e.g. the loss of both directions), × seeds. Raises GridError or ScenarioError."""
    base = load_base(source)
    seeds = _check_seeds(base, seeds)
    if not points:
        raise GridError(f"{base.origin}: no points to run")
    for i, point in enumerate(points):
        for key in point:
            if key == "seed":
                raise GridError(f"{base.origin}: points[{i}]: give seeds with `seeds`, not as a point key")
            if not _KEY.match(key):
                raise GridError(f"{base.origin}: points[{i}]: {key!r} is not a key path; {GRID_HELP}")
    points = normalise_points(base, points)
    first = base.to_dict().get("seed", 1)
    if not isinstance(first, int) or isinstance(first, bool) or not 0 <= first <= MAX_SEED:
        base.validate()
        first = 1
    seed_values = [(first + i) % (MAX_SEED + 1) for i in range(seeds)]
    return _tasks(base, [dict(p) for p in points], seed_values)


def normalise_grid(base: Scenario, grid: Mapping[str, Any]) -> dict[str, list[Any]]:
    """{key: [plain values]} (see `grid_values`); errors name the scenario and the key."""
    try:
        return {k: grid_values(k, v) for k, v in grid.items()}
    except GridError as e:
        raise GridError(f"{base.origin}: {e}") from None


def normalise_points(base: Scenario, points: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Explicit points with plain values (see `plain`); errors name the point and the key."""
    try:
        return [{k: plain(v, f"points[{i}].{k}") for k, v in p.items()} for i, p in enumerate(points)]
    except GridError as e:
        raise GridError(f"{base.origin}: {e}") from None


def load_base(source: ScenarioSource | Scenario) -> Scenario:
    """`Scenario.load`, with a dict's numpy values made plain and NaN / infinities refused with
    their key path (raises ScenarioError, as for any other bad scenario)."""
    if isinstance(source, Mapping):
        source = plain_document(source)
    return Scenario.load(source)


def plain_document(doc: Mapping[str, Any], origin: str = DICT_ORIGIN) -> dict[str, Any]:
    """A scenario dict as plain data (see `plain`); a bad value is a ScenarioError naming its key."""
    try:
        return {str(k): plain(v, str(k)) for k, v in doc.items()}
    except GridError as e:
        raise ScenarioError(f"{origin}: {e}") from None


def _check_seeds(base: Scenario, seeds: Any) -> int:
    """`seeds` as an int (numpy integers included); GridError unless it is at least 1."""
    if isinstance(seeds, bool) or not isinstance(seeds, numbers.Integral) or seeds < 1:
        raise GridError(f"{base.origin}: seeds must be an integer of at least 1, got {seeds!r}")
    return int(seeds)


def _tasks(base: Scenario, combos: list[dict[str, Any]], seed_values: list[int]) -> list[RunTask]:
    """One task per (parameter set, seed), each parameter set validated once."""
    total = len(combos) * len(seed_values)
    width = max(3, len(str(total - 1)))
    tasks: list[RunTask] = []
    for params in combos:
        try:
            scenario = base.with_overrides(params)
        except OverrideError as e:
            raise GridError(f"{base.origin}: --grid {e}") from None
        scenario.validate(seed_values[0])
        for seed in seed_values:
            i = len(tasks)
            tasks.append(
                RunTask(index=i, run_id=f"run-{i:0{width}d}", params=params, seed=seed, scenario=scenario)
            )
    return tasks
