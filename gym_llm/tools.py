"""Typed tools: ``@tool`` methods whose JSON schema comes from type hints and the docstring.

Example:
    >>> from gym_llm.env import LLMEnv
    >>> class WeatherEnv(LLMEnv):
    ...     @tool
    ...     def get_weather(self, city: str) -> dict:
    ...         '''Get the weather in a city.
    ...
    ...         Args:
    ...             city: The city's name.
    ...         '''
    ...         return {"city": city, "weather_description": f"The weather in {city} is cold."}
    >>> spec = collect_tools(WeatherEnv)["get_weather"]
    >>> spec.schema["description"], spec.schema["parameters"]["properties"]
    ('Get the weather in a city.', {'city': {'description': "The city's name.", 'type': 'string'}})
    >>> spec.validate({"city": "Paris"})
    {'city': 'Paris'}
    >>> spec.validate({"town": "Paris"})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 2 validation errors for get_weather_arguments
    ...
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from gym_llm import fastjson

_TOOL_ATTR = "__gym_llm_tool__"
_ARG_LINE = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool's name, its argument model, its schema and how to call it."""

    name: str
    method: Callable[..., Any]
    arguments: type[BaseModel]
    schema: dict[str, Any]
    is_async: bool
    blocking: bool
    timeout: float | None

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """Arguments checked and coerced against the type hints; raises ``ValidationError``."""
        model = self.arguments.model_validate(args)
        return {name: getattr(model, name) for name in self.arguments.model_fields}


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    timeout: float | None = None,
    blocking: bool = False,
) -> Any:
    """Mark an env method as a tool the model can call.

    Args:
        fn: The method. Its parameters (after ``self``) need type hints.
        name: The tool's name, if not the method's.
        timeout: Seconds before the call is abandoned and reported to the model as an error
            (async and blocking tools; default: the env's ``tool_timeout``).
        blocking: The method is synchronous but slow or does I/O: run it in a worker thread so
            the event loop stays free. Plain synchronous tools run inline and must be quick.
    """

    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        setattr(
            method, _TOOL_ATTR, {"name": name or method.__name__, "timeout": timeout, "blocking": blocking}
        )
        return method

    return mark(fn) if fn is not None else mark


def collect_tools(cls: type) -> dict[str, ToolSpec]:
    """Every ``@tool`` method of ``cls`` and its bases, by tool name."""
    tools: dict[str, ToolSpec] = {}
    for klass in reversed(cls.__mro__):
        for attr in vars(klass).values():
            options = getattr(attr, _TOOL_ATTR, None)
            if options is not None:
                spec = _build_spec(attr, **options)
                tools[spec.name] = spec
    return tools


def _build_spec(method: Callable[..., Any], name: str, timeout: float | None, blocking: bool) -> ToolSpec:
    description, arg_docs = _parse_docstring(inspect.getdoc(method) or "")
    hints = get_type_hints(method)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(method).parameters.values())[1:]:
        if param.name not in hints:
            raise TypeError(f"tool {name!r}: parameter {param.name!r} needs a type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=arg_docs.get(param.name)))
    arguments = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": _clean_schema(arguments.model_json_schema()),
        "strict": True,
    }
    return ToolSpec(name, method, arguments, schema, inspect.iscoroutinefunction(method), blocking, timeout)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the ``Args:`` descriptions of a Google-style docstring."""
    summary, _, rest = doc.partition("\n\n")
    arg_docs: dict[str, str] = {}
    in_args = False
    current = None
    for line in rest.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:"):
            in_args = True
            continue
        if in_args:
            if stripped.endswith(":") and not line.startswith(" "):
                break  # the next section
            match = _ARG_LINE.match(line)
            if match and line.startswith(("    ", "\t")) and not line.startswith(("        ", "\t\t")):
                current = match.group(1)
                arg_docs[current] = match.group(2).strip()
            elif current and stripped:
                arg_docs[current] += " " + stripped
    return " ".join(summary.split()), arg_docs


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's titles, forbid extra keys, require every property (as strict mode wants)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    cleaned = strip(schema)
    cleaned.setdefault("properties", {})
    cleaned["additionalProperties"] = False
    cleaned["required"] = list(cleaned["properties"])
    return cleaned


class ToolError(Exception):
    """Raise from a tool to report a failure to the model in your own words.

    The message becomes the ``error`` of the tool output unchanged (other exceptions read
    ``Tool <name> failed: <Type>: <message>``), and the call counts as a tool error.
    """


def format_output(result: Any) -> str:
    """A tool's return value as the ``output`` string the model reads: compact JSON unless it is a
    string, as NeMo Gym's servers send it."""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return fastjson.dumps(result).decode()


def error_output(message: str) -> str:
    """The ``output`` of a failed tool call: a JSON object with an ``error`` message."""
    return fastjson.dumps({"error": message}).decode()


def describe_validation_error(exc: ValidationError) -> str:
    """A one-line summary of what is wrong with the arguments."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
