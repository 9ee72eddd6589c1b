"""Request bodies in, JSON out: every client error becomes a 4xx JSON body that names its field.

Handlers read a body with :func:`read_object` and check fields with :func:`field`; both raise
:class:`RequestError`, which the app's error middleware turns into
``{"error": "<what is wrong>", "field": "<where>"}`` with the error's status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
_MISSING = object()


class RequestError(Exception):
    """A request the server refuses: its status, a message and the offending field (if one).

    Args:
        status: The HTTP status (4xx for the client's mistakes, 503 when the server is full).
        message: What is wrong, in words a client can act on.
        field: The body field at fault, as a dotted path (``"options.task_index"``).
    """

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    def response(self) -> web.Response:
        """The error as a JSON response."""
        return error_response(self.status, self.message, self.field)


def _fallback(value: Any) -> Any:
    """What orjson cannot write natively: pydantic models, sets, anything else as its ``str``."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def dumps(value: Any) -> bytes:
    """UTF-8 JSON bytes of ``value``; values JSON has no form for are written as their ``str``.

    Example:
        >>> dumps({"reward": 1.0, "ids": (1, 2)})
        b'{"reward":1.0,"ids":[1,2]}'
    """
    return orjson.dumps(value, default=_fallback, option=_OPTIONS)


def json_response(value: Any, status: int = 200) -> web.Response:
    """``value`` as a JSON response."""
    return web.Response(body=dumps(value), status=status, content_type="application/json")


def raw_json_response(body: bytes, status: int = 200) -> web.Response:
    """Bytes that already are JSON, as a JSON response."""
    return web.Response(body=body, status=status, content_type="application/json")


def error_response(status: int, message: str, field: str | None = None) -> web.Response:
    """``{"error": message, "field": field}`` (``field`` left out when ``None``)."""
    body: dict[str, Any] = {"error": message}
    if field is not None:
        body["field"] = field
    return json_response(body, status)


async def read_object(request: web.Request, what: str = "request body") -> dict[str, Any]:
    """The request's body, which must be one JSON object.

    Args:
        request: The request (its size is capped by the app's ``client_max_size``).
        what: How error messages name the body.

    Returns:
        The decoded object.

    Raises:
        RequestError: 400 when the body is empty, not JSON, or not an object; 413 when it is
            larger than the server accepts.
    """
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        limit = request.client_max_size
        raise RequestError(413, f"{what} is larger than the {limit} bytes this server accepts") from None
    if not raw.strip():
        raise RequestError(400, f"{what} is empty: expected a JSON object")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RequestError(400, f"{what} is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise RequestError(400, f"{what} must be a JSON object, got {_json_type(body)}")
    return body


def field(
    body: Mapping[str, Any],
    name: str,
    types: type | tuple[type, ...],
    *,
    default: Any = _MISSING,
    prefix: str = "",
) -> Any:
    """``body[name]``, checked to be one of ``types`` (``bool`` is not accepted as an ``int``).

    Args:
        body: A decoded JSON object.
        name: The field.
        types: The accepted Python types (``type(None)`` to accept ``null``).
        default: Returned when the field is absent; without it the field is required.
        prefix: The path of ``body`` itself inside the request, for error messages.

    Returns:
        The field's value.

    Raises:
        RequestError: 422 naming the field when it is missing (and required) or of the wrong type.

    Example:
        >>> field({"seed": 3}, "seed", (int, type(None)))
        3
    """
    path = f"{prefix}{name}"
    if name not in body:
        if default is _MISSING:
            raise RequestError(422, f"field '{path}' is required", path)
        return default
    value = body[name]
    accepted = types if isinstance(types, tuple) else (types,)
    if not _matches(value, accepted):
        expected = " or ".join(_type_name(t) for t in accepted)
        raise RequestError(422, f"field '{path}' must be {expected}, got {_json_type(value)}", path)
    return value


def _matches(value: Any, accepted: tuple[type, ...]) -> bool:
    """JSON's view of types: a boolean is no number, and an integer is a number."""
    if isinstance(value, bool):
        return bool in accepted
    if isinstance(value, int) and float in accepted:
        return True
    return isinstance(value, accepted)


def _type_name(kind: type) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        dict: "an object",
        list: "an array",
        type(None): "null",
    }.get(kind, kind.__name__)


def _json_type(value: Any) -> str:
    """The JSON type of a decoded value, as error messages name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
