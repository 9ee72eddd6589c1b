"""Records to files in batches: Arrow (a ``datasets`` cache file), parquet and JSONL.

Records go out ``batch_size`` at a time, so memory stays flat whatever the number of rollouts.
Parquet and JSONL files are written beside the target and renamed into place when complete.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from gym_llm import fastjson
from gym_llm.export.formats import ExportError, Plan
from gym_llm.export.source import Row


class Sink(Protocol):
    """Where batches of records go."""

    needs_arrow: bool

    def write(self, records: Sequence[Row], batch: pa.RecordBatch | None) -> None: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


def write(plan: Plan, sinks: Sequence[Sink], batch_size: int = 1000) -> None:
    """Send the plan's records to every sink, ``batch_size`` records at a time.

    Raises:
        ExportError: Records that do not fit the format's Arrow schema (naming the rollouts).
    """
    needs_arrow = any(sink.needs_arrow for sink in sinks)
    try:
        written = 0
        for records in _chunks(plan.records, batch_size):
            batch = _record_batch(records, plan.schema, written) if needs_arrow else None
            for sink in sinks:
                sink.write(records, batch)
            written += len(records)
    except BaseException:
        for sink in sinks:
            sink.abort()
        raise
    for sink in sinks:
        sink.close()


class ArrowStreamSink:
    """An Arrow IPC stream file: the on-disk form of a ``datasets.Dataset``."""

    needs_arrow = True

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self._writer = pa.ipc.new_stream(str(path), schema)

    def write(self, records: Sequence[Row], batch: pa.RecordBatch | None) -> None:
        assert batch is not None
        self._writer.write_batch(batch)

    def close(self) -> None:
        self._writer.close()

    def abort(self) -> None:
        self._writer.close()
        self.path.unlink(missing_ok=True)


class ParquetSink:
    """A parquet file, one row group per batch."""

    needs_arrow = True

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self._partial = _partial_path(path)
        self._writer = pq.ParquetWriter(str(self._partial), schema)

    def write(self, records: Sequence[Row], batch: pa.RecordBatch | None) -> None:
        assert batch is not None
        self._writer.write_batch(batch)

    def close(self) -> None:
        self._writer.close()
        os.replace(self._partial, self.path)

    def abort(self) -> None:
        self._writer.close()
        self._partial.unlink(missing_ok=True)


class JsonlSink:
    """A JSONL file of the records as they are (the same values the Arrow formats hold)."""

    needs_arrow = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self._partial = _partial_path(path)
        self._file = open(self._partial, "wb")

    def write(self, records: Sequence[Row], batch: pa.RecordBatch | None) -> None:
        self._file.writelines(fastjson.dumps_line(record) for record in records)

    def close(self) -> None:
        self._file.close()
        os.replace(self._partial, self.path)

    def abort(self) -> None:
        self._file.close()
        self._partial.unlink(missing_ok=True)


def _partial_path(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f".{path.name}.partial")


def _chunks(records: Iterator[Row], size: int) -> Iterator[list[Row]]:
    chunk: list[Row] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _record_batch(records: list[Row], schema: pa.Schema, first: int) -> pa.RecordBatch:
    try:
        return pa.RecordBatch.from_pylist(records, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise ExportError(
            f"output rows {first + 1}-{first + len(records)} do not fit the format's columns: "
            f"{_first_line(exc)}"
        ) from None


def _first_line(exc: Any) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
