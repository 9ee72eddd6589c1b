"""The ``raw`` format: every field of every rollout, the nested ``response`` kept as Arrow structs.

Arrow needs one type per column across all rows, and rollout rows are free-form JSON: a verifier
field may be a string in one env's rows and a list in another's. So the export reads the rows
twice. The first pass infers each top-level field's Arrow type and merges it across rows (objects
merge their keys, a key a row lacks reads back as ``None``, integers widen to floats, ``null``
fits anything). A field whose values cannot share one type, or that holds an object with no keys
at all, is written as a JSON string instead; :func:`json_columns` names them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from gym_llm import fastjson
from gym_llm.export.source import Row

SCHEMA_KEY = b"gym_llm"


@dataclass(frozen=True)
class RawSchema:
    """The Arrow schema for a set of rows and the columns written as JSON strings."""

    schema: pa.Schema
    json_columns: tuple[str, ...]


def infer_schema(rows: Iterator[Row], batch_size: int = 1000) -> RawSchema:
    """One pass over ``rows``: the Arrow type of each top-level field, merged over all rows.

    Args:
        rows: The rollout rows (read once).
        batch_size: Rows whose values Arrow types at once.

    Returns:
        The schema (columns in the order first seen) and the columns to write as JSON strings.
    """
    types: dict[str, pa.DataType] = {}
    as_json: set[str] = set()
    for batch in _batches(rows, batch_size):
        for key in dict.fromkeys(key for row in batch for key in row):
            if key in as_json:
                continue
            # a row without the key holds None there, as Arrow will read it back
            merged = _merge(types.get(key), _arrow_type([row.get(key) for row in batch]))
            if merged is None or _has_empty_struct(merged):
                as_json.add(key)
                types[key] = pa.string()
            else:
                types[key] = merged
    schema = pa.schema([pa.field(key, value) for key, value in types.items()])
    json_list = tuple(key for key in types if key in as_json)
    schema = schema.with_metadata({SCHEMA_KEY: fastjson.dumps({"format": "raw", "json_columns": json_list})})
    return RawSchema(schema, json_list)


def encode_rows(rows: Iterator[Row], raw_schema: RawSchema) -> Iterator[Row]:
    """``rows`` with their JSON-string columns encoded (``None`` stays ``None``)."""
    json_columns = raw_schema.json_columns
    for row in rows:
        if json_columns:
            row = dict(row)
            for key in json_columns:
                value = row.get(key)
                if value is not None:
                    row[key] = fastjson.dumps(value).decode()
        yield row


def json_columns(schema: pa.Schema) -> list[str]:
    """The columns of a ``raw`` export written as JSON strings (``[]`` for other schemas).

    Example:
        >>> raw = infer_schema(iter([{"a": "x", "b": 1}, {"a": ["y"], "b": 2.5}]))
        >>> json_columns(raw.schema), raw.schema.field("b").type
        (['a'], DataType(double))
    """
    meta = (schema.metadata or {}).get(SCHEMA_KEY)
    return list(fastjson.loads(meta).get("json_columns", [])) if meta else []


def _batches(rows: Iterator[Row], size: int) -> Iterator[list[Row]]:
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _arrow_type(values: Sequence[object]) -> pa.DataType | None:
    """The type Arrow infers for ``values``, or ``None`` when they cannot share one."""
    try:
        return pa.array(values).type
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None


def _merge(seen: pa.DataType | None, new: pa.DataType | None) -> pa.DataType | None:
    """One type for both (``None``: they conflict)."""
    if new is None:
        return None
    if seen is None or seen == new:
        return new
    try:
        merged = pa.unify_schemas(
            [pa.schema([pa.field("x", seen)]), pa.schema([pa.field("x", new)])],
            promote_options="permissive",
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    merged_type: pa.DataType = merged.field("x").type
    # "permissive" would turn mixed numbers and strings into strings: that is a conflict here
    return merged_type if _same_kinds(seen, new, merged_type) else None


def _same_kinds(a: pa.DataType, b: pa.DataType, merged: pa.DataType) -> bool:
    """Whether ``merged`` only widened ``a`` and ``b`` (null, integer to float, struct keys)."""
    for side in (a, b):
        if pa.types.is_null(side):
            continue
        if pa.types.is_struct(merged):
            if not pa.types.is_struct(side):
                return False
            for field in side:
                if not _same_kinds(field.type, field.type, merged.field(field.name).type):
                    return False
        elif pa.types.is_list(merged) or pa.types.is_large_list(merged):
            if not (pa.types.is_list(side) or pa.types.is_large_list(side)):
                return False
            if not _same_kinds(side.value_type, side.value_type, merged.value_type):
                return False
        elif pa.types.is_floating(merged):
            if not (pa.types.is_floating(side) or pa.types.is_integer(side)):
                return False
        elif side != merged:
            return False
    return True


def _has_empty_struct(data_type: pa.DataType) -> bool:
    """Parquet cannot store a struct without fields (rows whose objects are all ``{}``)."""
    if pa.types.is_struct(data_type):
        return data_type.num_fields == 0 or any(_has_empty_struct(field.type) for field in data_type)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return _has_empty_struct(data_type.value_type)
    return False
