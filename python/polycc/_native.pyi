"""Type stubs for the Rust extension (crates/polycc-py)."""

from collections.abc import Callable, Mapping, Sequence
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

#: A table's columns (see `polycc.columns`): numbers as bytes of little-endian float64, NaN for
#: null; text as (distinct values, bytes of little-endian int32 codes, -1 for null).
NativeTable = Mapping[str, bytes | tuple[Sequence[str], bytes]]

class NativeTables(TypedDict):
    flows: NativeTable
    links: NativeTable

class NativeOutput(TypedDict):
    summary_json: str
    resolved_toml: str
    flows: NativeTable
    links: NativeTable
    #: One row per video frame (empty columns without video flows).
    frames: NotRequired[NativeTable]
    transfers: NotRequired[NativeTable]

class Simulation:
    """A scenario run in steps: `advance` until it returns True, `drain` the rows recorded so far
    between steps, then `finish`. The steps change nothing that is simulated."""

    def __init__(
        self,
        text: str,
        origin: str,
        base_dir: str | PathLike[str],
        seed: int | None = None,
        fusions: Mapping[str, FusionFn] | None = None,
        format: str = "toml",
    ) -> None: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def bin_s(self) -> float: ...
    @property
    def now_s(self) -> float: ...
    @property
    def pending_rows(self) -> int: ...
    def advance(
        self, until_s: float | None = None, budget_s: float | None = None, max_rows: int | None = None
    ) -> bool: ...
    def drain(self) -> NativeTables: ...
    def finish(self) -> NativeOutput: ...

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
    log_dir: str | PathLike[str] | None = None,
) -> NativeOutput | None: ...
def emulator_refusal(text: str, fmt: str, origin: str, base_dir: str | PathLike[str]) -> str | None: ...
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
