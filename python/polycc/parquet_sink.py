"""A long-format table written to Parquet as it is produced, in row groups of at least
`row_group_rows` rows (smaller chunks are gathered first), so that a long run's time series never
sit in memory whole.

The file is written under a temporary name beside its final one and renamed by `close`: a
failure or an interrupt leaves no half-written file under the final name (`discard` removes
what was written). The schema of a Parquet file is fixed when it is opened, but a column can
first appear in a later chunk (telemetry a controller reports only in some states): the chunks
then go to a new part file with the wider schema, and `close` copies the parts into one file row
group by row group, the earlier rows null in the new columns, as the whole table written at once
would be.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


class ParquetSink:
    def __init__(self, path: Path, row_group_rows: int = 8192) -> None:
        self.path = Path(path)
        self.row_group_rows = row_group_rows
        self._parts: list[Path] = []
        self._writer: Any = None
        self._schema: pa.Schema | None = None
        #: Chunks not written yet, in the current schema, and their rows.
        self._pending: list[pa.Table] = []
        self._pending_rows = 0

    def _part(self, k: int) -> Path:
        return self.path.with_name(f".{self.path.name}.part{k}")

    def _flush(self) -> None:
        if self._pending_rows:
            self._writer.write_table(pa.concat_tables(self._pending))
        self._pending = []
        self._pending_rows = 0

    def _open(self, schema: pa.Schema) -> None:
        if self._writer is not None:
            self._flush()
            self._writer.close()
        part = self._part(len(self._parts))
        self._parts.append(part)
        self._writer = pq.ParquetWriter(part, schema)
        self._schema = schema

    def write(self, batch: pa.RecordBatch) -> None:
        """Appends `batch`, written once `row_group_rows` rows are gathered. Its columns are those
        written so far, with new ones last (the simulator's chunks are); one it lacks is null in
        its rows."""
        if self._schema is None:
            self._open(batch.schema)
        else:
            new = [f for f in batch.schema if self._schema.get_field_index(f.name) < 0]
            if new:
                self._open(pa.schema([*self._schema, *new]))
        assert self._schema is not None
        if batch.num_rows:
            self._pending.append(_conform(pa.Table.from_batches([batch]), self._schema))
            self._pending_rows += batch.num_rows
        if self._pending_rows >= self.row_group_rows:
            self._flush()

    def close(self) -> None:
        """Finishes the file under its final name (an empty table without columns when nothing
        was written)."""
        if self._writer is None:
            pq.write_table(pa.table({}), self.path)
            return
        self._flush()
        self._writer.close()
        self._writer = None
        assert self._schema is not None
        if len(self._parts) > 1:
            merged = self._part(len(self._parts))
            with pq.ParquetWriter(merged, self._schema) as out:
                for part in self._parts:
                    f = pq.ParquetFile(part)
                    for i in range(f.num_row_groups):
                        out.write_table(_conform(f.read_row_group(i), self._schema))
            for part in self._parts:
                part.unlink()
            self._parts = [merged]
        self._parts[0].replace(self.path)
        self._parts = []

    def discard(self) -> None:
        """Closes and removes what was written (after a failure)."""
        self._pending = []
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        for part in self._parts:
            part.unlink(missing_ok=True)
        self._parts = []

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with the columns of `schema` in its order, null where it has none."""
    have = set(table.schema.names)
    columns = [table.column(f.name) if f.name in have else pa.nulls(table.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)
