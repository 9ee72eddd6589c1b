"""The row's JSON Schema made strict, a validator per schema, and example documents for a schema.

"Strict" means every object schema with ``properties`` gets all of them ``required`` and
``additionalProperties: false``, recursively (into ``oneOf``/``anyOf`` branches and ``$defs``, not
into ``allOf``/``if``/``then``/``else``/``not``, where that would change the meaning).

Example:
    >>> schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    >>> strictify(schema)
    >>> schema["required"], schema["additionalProperties"]
    (['a'], False)
    >>> example_document(schema)
    {'a': 0}
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import best_match

MESSAGE_CHARS = 200  # NeMo truncates error messages to about this length

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA = ("items", "additionalItems", "additionalProperties", "contains", "unevaluatedItems")
_SUBSCHEMA_LISTS = ("oneOf", "anyOf", "prefixItems", "items")


def strictify(schema: Any) -> None:
    """Make ``schema`` strict in place: all properties required, no additional properties."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("properties"), dict):
        schema["required"] = list(schema["properties"])
        schema["additionalProperties"] = False
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for sub in schema[key].values():
                strictify(sub)
    for key in _SUBSCHEMA:
        if isinstance(schema.get(key), dict):
            strictify(schema[key])
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                strictify(sub)


class SchemaProblem(ValueError):
    """``schema_str`` is not a usable JSON Schema."""


@lru_cache(maxsize=256)
def strict_validator(schema_str: str) -> Any:
    """A validator for the strict form of ``schema_str``, built once per distinct schema.

    Draft 2020-12 is the dialect of OpenAPI 3.1, which NeMo's ``openapi-schema-validator``
    checks by default; a schema's own ``$schema`` is honoured.

    Raises:
        SchemaProblem: The schema is not JSON or not a valid JSON Schema.
    """
    try:
        schema = json.loads(schema_str)
        strictify(schema)
        cls = validators.validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)
    except Exception as exc:
        raise SchemaProblem(f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}") from None
    return cls(schema)


def validation_error(validator: Any, instance: Any) -> str | None:
    """The most relevant validation error message, or ``None`` when ``instance`` is valid."""
    try:
        error = best_match(validator.iter_errors(instance))
    except Exception as exc:  # unresolvable $ref, recursion, ...
        return f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"
    return None if error is None else f"ValidationError: {error.message[:MESSAGE_CHARS]}"


def resolve(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """``schema`` with local ``$ref``s followed and ``allOf`` merged (for coercion only)."""
    if not isinstance(schema, dict) or depth > 32:
        return schema
    if isinstance(schema.get("$ref"), str):
        target: Any = root
        for part in schema["$ref"].removeprefix("#").strip("/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return resolve(target, root, depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {}
        for sub in schema["allOf"]:
            sub = resolve(sub, root, depth + 1)
            if not isinstance(sub, dict):
                continue
            for key, value in sub.items():
                if key == "properties" and key in merged:
                    merged[key] = {**merged[key], **value}
                elif key == "required" and key in merged:
                    merged[key] = sorted(set(merged[key]) | set(value))
                else:
                    merged[key] = value
        return merged
    return schema


def example_document(schema: Any, root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small document that satisfies ``schema`` in common cases (strict objects: all properties).

    Best effort: ``pattern`` and ``format`` are not honoured, ``oneOf``/``anyOf`` take the first branch.
    """
    root = root if root is not None else schema
    schema = resolve(schema, root)
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for keyword in ("oneOf", "anyOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            rest = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}
            branch = resolve(schema[keyword][0], root)
            return example_document({**rest, **branch} if isinstance(branch, dict) else rest, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: example_document(sub, root, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        prefix = schema.get("prefixItems") or []
        items = schema.get("items", {})
        return [
            example_document(prefix[i] if i < len(prefix) else items, root, depth + 1) for i in range(count)
        ]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        value = 0 if low is None else math.floor(low) + 1 if "exclusiveMinimum" in schema else math.ceil(low)
        if high is not None and value > high:
            value = math.floor(high) - (1 if "exclusiveMaximum" in schema else 0)
        return value if kind == "integer" else float(value)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength", 1))
