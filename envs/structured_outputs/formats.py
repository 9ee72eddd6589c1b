"""The five text formats: parse a document (:func:`parse_document`), coerce the string leaves of
XML and CSV to the schema's types, and write a document so that parsing reads it back
(:func:`render_document`).

Example:
    >>> parse_document("toml", 'name = "x"\\nsize = 2\\n')
    {'name': 'x', 'size': 2}
    >>> render_document({"name": "x", "size": 2}, "toml")
    'name = "x"\\nsize = 2\\n'
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any, Literal

import xmltodict
import yaml
from jsonschema import Draft202012Validator, validators

from .schemas import resolve

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SchemaType = Literal["json", "yaml", "xml", "toml", "csv"]


def _scalar(value: str, kind: Any) -> Any:
    """A string leaf converted to ``kind`` (integer, number, boolean) when it reads as one."""
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    if kind == "boolean":
        lowered = value.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
    return value


def coerce_xml(data: Any, schema: Any, root: dict[str, Any]) -> Any:
    """Coerce xmltodict's string leaves to the schema's types, walking both together.

    A value that does not convert is left as it is, for validation to report.
    """
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return data
    for keyword in ("oneOf", "anyOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            # The first branch that the coerced value validates against wins.
            for branch in branches:
                branch = resolve(branch, root)
                try:
                    coerced = coerce_xml(data, branch, root)
                    if validators.validator_for(branch, default=Draft202012Validator)(branch).is_valid(
                        coerced
                    ):
                        return coerced
                except Exception:
                    continue
            return coerce_xml(data, resolve(branches[0], root), root)
    kind = schema.get("type")
    if kind is None:
        return data
    if isinstance(kind, list):
        if data is None:
            return None  # an empty element: fine where the type allows null
        others = [k for k in kind if k != "null"]
        if len(others) != 1:
            return data
        kind = others[0]
    if kind == "object" and isinstance(data, dict):
        properties = schema.get("properties") or {}
        return {
            key: coerce_xml(value, properties[key], root) if key in properties else value
            for key, value in data.items()
        }
    if kind == "array":
        # <tags><item>a</item><item>b</item></tags> parses as {"item": [...]} (or {"item": "a"} for
        # one child): at an array position a one-key dict is that wrapper, not a value.
        if isinstance(data, dict) and len(data) == 1:
            data = next(iter(data.values()))
        if not isinstance(data, list):
            data = [] if data is None else [data]
        return [coerce_xml(item, schema.get("items", {}), root) for item in data]
    if data is None and kind == "string":
        return ""  # <name/> is an empty string; non-string empties stay None and fail validation
    if isinstance(data, str):
        return _scalar(data, kind)
    return data


def _csv_scalar(value: Any, kind: Any) -> Any:
    if isinstance(kind, list):
        if value in (None, "") and "null" in kind:
            return None
        for one in kind:
            if one == "null":
                continue
            converted = _csv_scalar(value, one)
            if one == "string" or not isinstance(converted, str):
                return converted
        return value
    if value is None or value == "":
        return value
    return _scalar(value, kind) if isinstance(value, str) else value


def coerce_csv(rows: list[dict[Any, Any]], schema: dict[str, Any]) -> list[dict[Any, Any]]:
    """Coerce ``csv.DictReader`` rows to the types of the schema's item properties."""
    item_schema = schema.get("items", schema)
    properties = item_schema.get("properties", {}) if isinstance(item_schema, dict) else {}
    coerced = []
    for row in rows:
        coerced.append(
            {
                key: _csv_scalar(
                    value,
                    properties.get(key, {}).get("type", "string") if isinstance(key, str) else "string",
                )
                for key, value in row.items()
            }
        )
    return coerced


def parse_document(schema_type: str, text: str) -> Any:
    """Parse ``text`` as ``schema_type``; raises on malformed input."""
    if schema_type == "json":
        return json.loads(text)
    if schema_type == "yaml":
        return yaml.safe_load(text)
    if schema_type == "xml":
        return xmltodict.parse(text)
    if schema_type == "toml":
        return tomllib.loads(text)
    if schema_type == "csv":
        return list(csv.DictReader(io.StringIO(text)))
    raise ValueError(f"unknown schema_type {schema_type!r}")


def _xml_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return {key: _xml_value(val) for key, val in value.items()}
    if isinstance(value, list):
        # Wrap list items so one-item lists and lists of one-key objects read back unambiguously.
        return {"item": [_xml_value(val) for val in value]}
    return value


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(val) for val in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise ValueError(f"TOML cannot hold {value!r}")


def _csv_lines(rows: list[dict[str, Any]]) -> Iterator[dict[str, str]]:
    for row in rows:
        yield {
            key: ("true" if value else "false")
            if isinstance(value, bool)
            else ""
            if value is None
            else str(value)
            for key, value in row.items()
        }


def render_document(document: Any, schema_type: str) -> str:
    """``document`` written as ``schema_type`` text, such that the verifier reads it back."""
    if schema_type == "yaml":
        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    if schema_type == "xml":
        return xmltodict.unparse(_xml_value(document), pretty=True)
    if schema_type == "toml":
        return "".join(f"{_toml_key(key)} = {_toml_value(value)}\n" for key, value in document.items())
    if schema_type == "csv":
        fields = list(dict.fromkeys(key for row in document for key in row))
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(_csv_lines(document))
        return out.getvalue()
    return json.dumps(document, ensure_ascii=False)
