"""Typed Python methods for an env's tools, for trainers that read tools off a class (TRL).

TRL turns every public method of an environment class into a tool through
``transformers.utils.get_json_schema``, which reads the method's signature, type hints and
Google-style docstring. :func:`tool_method` builds such a method for a gym_llm
:class:`~gym_llm.tools.ToolSpec` without generating source code: a generic async function with an
explicit ``__signature__``, ``__annotations__`` and ``__doc__``. Calls go to the instance's
``_call_tool(name, arguments)``, which runs the tool in the env (validation, errors, turn budget).

Type hints come from the tool's argument model; types that ``get_json_schema`` cannot express
(nested models) become ``dict``/``list`` from the JSON schema, so that detail is not shown to the
model (the env still validates the full schema).
"""

from __future__ import annotations

import enum
import inspect
import keyword
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from gym_llm.tools import ToolSpec

_BASIC = (str, int, float, bool, type(None))
_JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def tool_method(spec: ToolSpec) -> Callable[..., Any]:
    """An async method named after the tool, typed and documented for ``get_json_schema``.

    Args:
        spec: The tool.

    Returns:
        A function ``async (self, **arguments) -> str`` to set on a class.

    Raises:
        ValueError: The tool's or an argument's name is not a Python identifier.
    """
    name = spec.name
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"tool {name!r}: its name must be a Python identifier to become a method")
    properties = spec.schema.get("parameters", {}).get("properties", {})
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    arg_lines = []
    fields = spec.arguments.model_fields
    # required parameters first: a signature cannot put a default before a non-default
    for arg, field in sorted(fields.items(), key=lambda kv: not kv[1].is_required()):
        if not arg.isidentifier() or keyword.iskeyword(arg) or arg == "self":
            raise ValueError(f"tool {name!r}: argument {arg!r} must be a Python identifier")
        hint = _hint(field.annotation, properties.get(arg, {}))
        default = inspect.Parameter.empty if field.is_required() else field.default
        params.append(
            inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint)
        )
        annotations[arg] = hint
        description = properties.get(arg, {}).get("description") or field.description or arg
        arg_lines.append(f"    {arg}: {_one_line(description)}")
    annotations["return"] = str

    async def method(self: Any, **arguments: Any) -> str:
        return await self._call_tool(name, arguments)

    summary = _one_line(spec.schema.get("description") or name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = summary + ("\n\nArgs:\n" + "\n".join(arg_lines) if arg_lines else "")
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _hint(annotation: Any, schema: dict[str, Any]) -> Any:
    """``annotation`` if ``get_json_schema`` can express it, else a type from the JSON schema."""
    if _expressible(annotation):
        return annotation
    json_type = schema.get("type")
    if isinstance(json_type, str) and json_type in _JSON_TYPES:
        return _JSON_TYPES[json_type]
    return str


def _expressible(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is None:
        if hint in _BASIC or hint in (list, dict, tuple):
            return True
        return isinstance(hint, type) and issubclass(hint, enum.Enum)
    if origin is Literal:
        return all(isinstance(value, _BASIC) for value in typing.get_args(hint))
    if origin in (Union, types.UnionType, list, dict, tuple):
        return all(arg is Ellipsis or _expressible(arg) for arg in typing.get_args(hint))
    return False
