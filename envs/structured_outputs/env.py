"""StructuredOutputs: answer with a document that validates against the row's schema.

Port of NeMo Gym's ``structured_outputs`` resources server. One turn, reward 1.0 or 0.0:

- ``response_mode="text"`` (default): the concatenated assistant text is parsed as ``schema_type``
  (``json``, ``yaml``, ``xml``, ``toml`` or ``csv``); XML and CSV leaves, which parse as strings,
  are coerced to the schema's types; the result must validate against ``schema_str`` made strict.
- ``response_mode="tool_call"``: the turn must hold exactly one ``function_call`` (named
  ``tool_name`` when the row sets it); its JSON arguments, unwrapped from ``tool_payload_key`` when
  the row sets it, must validate against the strict schema. The call is the answer: it is never run.

"Strict" means every object schema with ``properties`` gets all of them ``required`` and
``additionalProperties: false``, recursively (into ``oneOf``/``anyOf`` branches and ``$defs``, not
into ``allOf``/``if``/``then``/``else``/``not``, where that would change the meaning).

Failures are reported as NeMo's ``error_type`` (``details["error_type"]`` and ``failure_kind``):
``empty_response``, ``parse_error``, ``schema_error``, ``validation_error``, ``api_error``,
``missing_tool_call``, ``multiple_tool_calls``, ``wrong_tool_name``, ``tool_arguments_parse_error``,
``missing_tool_payload_key``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal

import xmltodict
import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import best_match
from pydantic import ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.cpu_pool import add_preload, run_in_process
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# Workers of the shared CPU pool start with the parsers and the validator already imported.
add_preload("gym_llm.envs.structured_outputs.env")

SchemaType = Literal["json", "yaml", "xml", "toml", "csv"]
ResponseMode = Literal["text", "tool_call"]

# error_type values (NeMo's names), also used as failure_kind
EMPTY_RESPONSE = "empty_response"
PARSE_ERROR = "parse_error"
SCHEMA_ERROR = "schema_error"
VALIDATION_ERROR = "validation_error"
API_ERROR = "api_error"
MISSING_TOOL_CALL = "missing_tool_call"
MULTIPLE_TOOL_CALLS = "multiple_tool_calls"
WRONG_TOOL_NAME = "wrong_tool_name"
TOOL_ARGUMENTS_PARSE_ERROR = "tool_arguments_parse_error"
MISSING_TOOL_PAYLOAD_KEY = "missing_tool_payload_key"

_MESSAGE_CHARS = 200  # NeMo truncates error messages to about this length


class StructuredOutputsTask(TaskRow):
    """NeMo's structured_outputs row fields; its many breakdown fields pass through as extras.

    ``reference_document`` is ours (optional): a document valid against the schema, played by
    :meth:`StructuredOutputsEnv.reference_action`. Without it one is generated from the schema.
    """

    schema_str: str
    schema_type: SchemaType = "json"
    response_mode: ResponseMode | None = "text"
    tool_name: str | None = None
    tool_payload_key: str | None = None
    reference_document: Any = None

    @field_validator("schema_str")
    @classmethod
    def _json_object(cls, value: str) -> str:
        try:
            schema = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
        if not isinstance(schema, dict):
            raise ValueError(f"expected a JSON Schema object, got {type(schema).__name__}")
        return value

    @field_validator("tool_name")
    @classmethod
    def _offered_tool(cls, value: str | None, info: ValidationInfo) -> str | None:
        params = info.data.get("responses_create_params")
        tools = getattr(params, "tools", None)
        if value is not None and tools and value not in {tool.get("name") for tool in tools}:
            raise ValueError(f"{value!r} is not among responses_create_params.tools")
        return value


# ----------------------------------------------------------------------------- schemas
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
        raise SchemaProblem(f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}") from None
    return cls(schema)


def _validation_error(validator: Any, instance: Any) -> str | None:
    """The most relevant validation error message, or ``None`` when ``instance`` is valid."""
    try:
        error = best_match(validator.iter_errors(instance))
    except Exception as exc:  # unresolvable $ref, recursion, ...
        return f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"
    return None if error is None else f"ValidationError: {error.message[:_MESSAGE_CHARS]}"


def _resolve(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """``schema`` with local ``$ref``s followed and ``allOf`` merged (for coercion only)."""
    if not isinstance(schema, dict) or depth > 32:
        return schema
    if isinstance(schema.get("$ref"), str):
        target: Any = root
        for part in schema["$ref"].removeprefix("#").strip("/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return _resolve(target, root, depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {}
        for sub in schema["allOf"]:
            sub = _resolve(sub, root, depth + 1)
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
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return data
    for keyword in ("oneOf", "anyOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            # The first branch that the coerced value validates against wins.
            for branch in branches:
                branch = _resolve(branch, root)
                try:
                    coerced = coerce_xml(data, branch, root)
                    if validators.validator_for(branch, default=Draft202012Validator)(branch).is_valid(
                        coerced
                    ):
                        return coerced
                except Exception:
                    continue
            return coerce_xml(data, _resolve(branches[0], root), root)
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


_FENCE = re.compile(r"\A\s*```[^\n`]*\n(.*?)\n?```\s*\Z", re.S)


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


# ----------------------------------------------------------------------------- grading
Grade = tuple[float, str | None, str | None]


def _check(schema_str: str, document: Any, schema_type: str | None = None, xml_coerce: bool = True) -> Grade:
    try:
        validator = strict_validator(schema_str)
    except SchemaProblem as exc:
        return 0.0, SCHEMA_ERROR, str(exc)
    try:
        if schema_type == "xml" and xml_coerce:
            document = coerce_xml(document, validator.schema, validator.schema)
        elif schema_type == "csv":
            document = coerce_csv(document, validator.schema)
    except Exception as exc:
        return 0.0, VALIDATION_ERROR, f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"
    error = _validation_error(validator, document)
    return (1.0, None, None) if error is None else (0.0, VALIDATION_ERROR, error)


def tool_payload(task: dict[str, Any], response: dict[str, Any]) -> tuple[Any, str | None, str | None]:
    """The document carried by the turn's single function call: ``(payload, error_type, message)``."""
    if response.get("error") is not None:
        return None, API_ERROR, str(response["error"])[:_MESSAGE_CHARS]
    calls = it.function_calls(response["output"])
    if not calls:
        return None, MISSING_TOOL_CALL, "No function_call item found in assistant response"
    names = ", ".join(str(call.get("name")) for call in calls)
    if len(calls) > 1:
        return None, MULTIPLE_TOOL_CALLS, f"Expected exactly one function_call, got: {names}"
    call = calls[0]
    wanted = task.get("tool_name")
    if wanted and call.get("name") != wanted:
        return None, WRONG_TOOL_NAME, f"Expected tool {wanted!r}, got: {names}"
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            return None, TOOL_ARGUMENTS_PARSE_ERROR, f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"
    elif not isinstance(arguments, dict):
        return None, TOOL_ARGUMENTS_PARSE_ERROR, f"Unsupported arguments type: {type(arguments).__name__}"
    key = task.get("tool_payload_key")
    if key:
        if not isinstance(arguments, dict) or key not in arguments:
            return None, MISSING_TOOL_PAYLOAD_KEY, f"Missing tool payload key: {key}"
        return arguments[key], None, None
    return arguments, None, None


def grade(
    task: dict[str, Any], response: dict[str, Any], xml_coerce: bool = True, strip_fences: bool = False
) -> Grade:
    """Grade one response: ``(reward, error_type, error_message)``. Pure, picklable, never raises."""
    try:
        if task.get("response_mode") == "tool_call":
            payload, error_type, message = tool_payload(task, response)
            if error_type is not None:
                return 0.0, error_type, message
            return _check(task["schema_str"], payload)
        text = it.output_text(response["output"])
        if not text.strip():
            return 0.0, EMPTY_RESPONSE, "No assistant response text"
        if strip_fences and (fenced := _FENCE.match(text)) is not None:
            text = fenced.group(1)
        try:
            strict_validator(task["schema_str"])
        except SchemaProblem as exc:
            return 0.0, SCHEMA_ERROR, str(exc)
        schema_type = task.get("schema_type") or "json"
        try:
            document = parse_document(schema_type, text)
        except Exception as exc:
            return 0.0, PARSE_ERROR, f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"
        return _check(task["schema_str"], document, schema_type, xml_coerce)
    except Exception as exc:  # a verifier must not crash on model output
        return 0.0, VALIDATION_ERROR, f"{type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"


def _response_chars(response: dict[str, Any]) -> int:
    total = 0
    for item in response.get("output") or ():
        if item.get("type") == "function_call":
            total += len(str(item.get("arguments") or ""))
        elif item.get("type", "message") == "message":
            total += len(it.content_text(item.get("content")))
    return total


# ----------------------------------------------------------------------------- reference documents
def example_document(schema: Any, root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small document that satisfies ``schema`` in common cases (strict objects: all properties).

    Best effort: ``pattern`` and ``format`` are not honoured, ``oneOf``/``anyOf`` take the first branch.
    """
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for keyword in ("oneOf", "anyOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            rest = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}
            branch = _resolve(schema[keyword][0], root)
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


# ----------------------------------------------------------------------------- env
class StructuredOutputsEnv(LLMEnv):
    """Schema-following output, as text in five formats or as a tool call; see the module docstring."""

    task_model = StructuredOutputsTask
    max_turns = 1
    execute_tools = False  # one turn is the whole episode; tool calls are graded, never run

    def __init__(
        self,
        tasks: Any = None,
        *,
        xml_coerce_types: bool = True,
        strip_code_fences: bool = False,
        offload_chars: int | None = 100_000,
        verify_timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            xml_coerce_types: Coerce XML string leaves to the schema's types (NeMo's config field).
            strip_code_fences: Read the inside of a text answer wrapped in one ```lang fenced block.
                NeMo does not (a fenced answer is a ``parse_error``), hence off by default.
            offload_chars: Responses longer than this are graded in the shared CPU process pool
                (:mod:`gym_llm.cpu_pool`), so that big documents do not block the event loop;
                ``None`` grades everything inline.
            verify_timeout: Seconds a pooled grading may take before it scores 0 (``verify_error``).
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        self.xml_coerce_types = xml_coerce_types
        self.strip_code_fences = strip_code_fences
        self.offload_chars = offload_chars
        self.verify_timeout = verify_timeout
        super().__init__(tasks, **kwargs)

    def _verdict(self, task: dict[str, Any], result: Grade) -> Verdict:
        reward, error_type, message = result
        details: dict[str, Any] = {
            "error_type": error_type,
            "error_message": message,
            "schema_type": task.get("schema_type") or "json",
            "response_mode": task.get("response_mode") or "text",
        }
        return Verdict(reward, details=details, failure_kind=error_type)

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        return self._verdict(task, grade(task, response, self.xml_coerce_types, self.strip_code_fences))

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        if self.offload_chars is None or _response_chars(response) <= self.offload_chars:
            return await super().averify(task, response)
        # Only the fields grading reads cross the process boundary (rows can be large).
        keys = ("schema_str", "schema_type", "response_mode", "tool_name", "tool_payload_key")
        fields = {key: task.get(key) for key in keys}
        plain = {"output": response.get("output") or [], "error": response.get("error")}
        try:
            result = await run_in_process(
                grade,
                fields,
                plain,
                self.xml_coerce_types,
                self.strip_code_fences,
                timeout=self.verify_timeout,
            )
        except Exception as exc:  # a timed-out or crashed worker must not crash the episode
            return Verdict(
                0.0, failure_kind="verify_error", details={"error": f"{type(exc).__name__}: {exc}"}
            )
        return self._verdict(task, result)

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        if task.get("reference_document") is not None:
            document = task["reference_document"]
        else:
            schema = json.loads(task["schema_str"])
            strictify(schema)
            document = example_document(schema)
        if task.get("response_mode") == "tool_call":
            name = task.get("tool_name")
            if not name:
                tools = observation["tools"] or ({"name": "submit"},)
                name = tools[0].get("name", "submit")
            key = task.get("tool_payload_key")
            return [it.function_call(name, {key: document} if key else document, "call_reference")]
        return [it.message(render_document(document, task.get("schema_type") or "json"))]
