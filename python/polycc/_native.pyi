"""Type stubs for the Rust extension (crates/polycc-py)."""

from collections.abc import Callable, Mapping
from os import PathLike
from typing import NotRequired, TypedDict

#: A PolyCC fusion function: fn(values, pilot, quantity, target) -> fused value. `values` are the
#: members' own values in pool order (bytes for quantity "cwnd", bit/s for "rate"), `pilot` the
#: pilot's index, `target` the target value or None.
FusionFn = Callable[[list[float], int, str, float | None], float]

__version__: str

class ScenarioError(ValueError):
    """A scenario is invalid; the message is "ORIGIN: key.path: what is wrong and what is allowed"."""

class FusionError(RuntimeError):
    """A Python fusion function failed (wrong signature, an exception, or a result that is not a
    finite positive number); the message names the fusion and the function."""

class NativeParameter(TypedDict):
    name: str
    type: str
    default_json: str
    absent: str | None
    range: tuple[float | str, float | str] | None
    choices: list[str] | None
    description: str
    source: str

class NativeOutput(TypedDict):
    summary_json: str
    resolved_toml: str
    flows: dict[str, list[float | None] | list[str]]
    links: dict[str, list[float | None] | list[str]]
    #: One row per video frame (empty columns without video flows).
    frames: NotRequired[dict[str, list[float | None] | list[str]]]

def run_toml(
    text: str,
    origin: str,
    base_dir: str | PathLike[str],
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
) -> NativeOutput: ...
def run_json(
    text: str,
    origin: str,
    base_dir: str | PathLike[str],
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
) -> NativeOutput: ...
def emulate(
    text: str,
    fmt: str,
    origin: str,
    base_dir: str | PathLike[str],
    cancelled: Callable[[], bool],
    seed: int | None = None,
) -> NativeOutput | None: ...
def validate_toml(
    text: str,
    origin: str,
    base_dir: str | PathLike[str],
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
) -> str: ...
def validate_json(
    text: str,
    origin: str,
    base_dir: str | PathLike[str],
    seed: int | None = None,
    fusions: Mapping[str, FusionFn] | None = None,
) -> str: ...
def cca_names() -> list[str]: ...
def cca_summary(name: str) -> str | None: ...
def cca_parameters(name: str) -> list[NativeParameter] | None: ...
def cca_needs_media_frames(name: str) -> bool | None: ...
