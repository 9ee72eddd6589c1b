"""Grading one response: the document (text or a tool call's arguments) against the strict schema.

:func:`grade` is pure and picklable, so the env can run it in the shared CPU process pool for big
documents. Failures are NeMo's ``error_type`` values (this module's constants).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gym_llm import items as it

from .formats import coerce_csv, coerce_xml, parse_document
from .schemas import (
    MESSAGE_CHARS,
    SchemaProblem,
    strict_validator,
    validation_error,
)

# error_type values (NeMo's names), also used as failure_kind; MASKED_ERROR_TYPES are not the model's
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
MASKED_ERROR_TYPES = frozenset({SCHEMA_ERROR, API_ERROR})  # a broken row schema, a failed model call

Grade = tuple[float, str | None, str | None]

_FENCE = re.compile(r"\A\s*```[^\n`]*\n(.*?)\n?```\s*\Z", re.S)


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
        return 0.0, VALIDATION_ERROR, f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"
    error = validation_error(validator, document)
    return (1.0, None, None) if error is None else (0.0, VALIDATION_ERROR, error)


def tool_payload(task: dict[str, Any], response: dict[str, Any]) -> tuple[Any, str | None, str | None]:
    """The document carried by the turn's single function call: ``(payload, error_type, message)``."""
    if response.get("error") is not None:
        return None, API_ERROR, str(response["error"])[:MESSAGE_CHARS]
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
            return None, TOOL_ARGUMENTS_PARSE_ERROR, f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"
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
    """Grade one response: ``(reward, error_type, error_message)``. Pure and picklable.

    Returns:
        The reward (1.0 or 0.0), NeMo's ``error_type`` (None when it validates) and its message.

    Raises:
        Exception: Only a fault of the grader itself; every fault of the answer is an ``error_type``.
    """
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
        return 0.0, PARSE_ERROR, f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}"
    return _check(task["schema_str"], document, schema_type, xml_coerce)


def response_chars(response: dict[str, Any]) -> int:
    """Characters of the answer: assistant text and function-call arguments."""
    total = 0
    for item in response.get("output") or ():
        if item.get("type") == "function_call":
            total += len(str(item.get("arguments") or ""))
        elif item.get("type", "message") == "message":
            total += len(it.content_text(item.get("content")))
    return total
