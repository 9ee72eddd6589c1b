"""The raw format: every field kept; fields whose types differ between rows become JSON strings."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from gym_llm.export import export, json_columns, to_dataset


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def drop_none(value):
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


def decoded(record: dict, columns: list[str]) -> dict:
    return {k: json.loads(v) if k in columns and v is not None else v for k, v in record.items()}


def test_raw_keeps_every_field_and_the_nested_response(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    ds = to_dataset(mixed_rollouts, "raw")
    assert set(ds.column_names) == {key for row in rows for key in row}
    # the response stays a nested structure: items are structs with their fields as columns
    output = ds.features["response"]["output"]
    assert {"type", "name", "arguments", "call_id", "output", "summary", "content"} <= set(output.feature)
    columns = json_columns(ds.data.schema) or []
    for record, row in zip(ds, rows, strict=True):
        assert drop_none(decoded(record, columns)) == drop_none(row)


def test_fields_whose_types_differ_become_json_columns(tmp_path):
    rows = [
        {"reward": 1, "free": "text", "meta": {"k": 1}, "tags": [], "empty": {}, "ok": None},
        {"reward": 0.5, "free": ["a", "list"], "meta": {"j": "s"}, "tags": [1, 2], "empty": {}},
        {"reward": 0.0, "free": {"an": "object"}, "meta": None, "tags": None, "ok": True},
    ]
    out = tmp_path / "raw.parquet"
    result = export(rows, out)
    assert result.json_columns == ("free", "empty")
    table = pq.read_table(out)
    assert json_columns(table.schema) == ["free", "empty"]
    assert table.schema.field("reward").type == pa.float64()
    assert table.schema.field("meta").type == pa.struct([("k", pa.int64()), ("j", pa.string())])
    assert table.schema.field("tags").type == pa.list_(pa.int64())
    assert table.schema.field("ok").type == pa.bool_()
    back = [decoded(record, ["free", "empty"]) for record in table.to_pylist()]
    assert [r["free"] for r in back] == ["text", ["a", "list"], {"an": "object"}]
    assert [r["meta"] for r in back] == [{"k": 1, "j": None}, {"k": None, "j": "s"}, None]
    assert [drop_none(r) for r in back] == [drop_none(r) for r in rows]


def test_min_reward_filters_raw_rows(mixed_rollouts):
    ds = to_dataset(mixed_rollouts, "raw", min_reward=0.5)
    assert len(ds) == 12 and set(ds["reward"]) == {1.0}
