"""The simulator's tables as it hands them over (crates/polycc-py/src/columns.rs), decoded.

A table is {column name: column}. A numeric column is `bytes` of little-endian float64, NaN for
null; a string column is `(levels, codes)`: its distinct values and `bytes` of little-endian
int32 codes into them, -1 for null (an inactive flow's `cc_state`). One copy per column on the
Rust side and none here for numbers (`numpy.frombuffer`), where lists of Python floats took four
times the memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

NativeColumn = bytes | tuple[Sequence[str], bytes]
NativeTable = Mapping[str, NativeColumn]


def numbers(column: bytes) -> np.ndarray:
    """A numeric column as float64 values (read-only, NaN for null)."""
    return np.frombuffer(column, dtype="<f8")


def strings(column: tuple[Sequence[str], bytes]) -> np.ndarray:
    """A string column as an object array of str, None for null."""
    levels, codes = column
    # Code -1 (null) picks the None appended last.
    lookup = np.array([*levels, None], dtype=object)
    values: np.ndarray = lookup[np.frombuffer(codes, dtype="<i4")]
    return values


def to_frame(table: NativeTable, keep: Callable[[str], bool] | None = None) -> pd.DataFrame:
    """A pandas DataFrame: float64 columns with NaN for null, object columns of str with None.
    `keep` chooses the columns (all by default)."""
    import pandas as pd

    data: dict[str, Any] = {}
    for name, column in table.items():
        if keep is not None and not keep(name):
            continue
        if isinstance(column, bytes):
            data[name] = pd.Series(numbers(column), copy=True)
        else:
            data[name] = pd.Series(strings(column), dtype=object)
    return pd.DataFrame(data)


def to_arrow(table: NativeTable) -> pa.RecordBatch:
    """An Arrow record batch: float64 and string columns, null where the simulator recorded none
    (NaN in its numeric columns), as pandas writes a DataFrame of them to Parquet."""
    import pyarrow as pa

    arrays = []
    for column in table.values():
        if isinstance(column, bytes):
            arrays.append(pa.array(numbers(column), type=pa.float64(), from_pandas=True))
        else:
            arrays.append(pa.array(strings(column), type=pa.string()))
    return pa.RecordBatch.from_arrays(arrays, names=list(table))
