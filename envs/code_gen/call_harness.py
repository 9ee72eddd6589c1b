"""Runs one call-based test inside the sandbox: load ``solution.py``, call the function, report.

Sent as source with ``python -I -c`` (the sandbox may not read the package). Reads
``{"fn_name": str, "arguments": <encoded list>}`` from stdin; the function is a method of a ``Solution``
instance when the solution defines that class with it (LeetCode style), else a top-level function.
The solution runs as a module named ``solution`` (its ``if __name__ == "__main__":`` block does
not run) with fd 1 pointing to /dev/null, so its prints cannot reach the report. The one line of
the report goes to the original stdout: ``{"value": <encoded>}`` or ``{"error": str}``.

Values cross the sandbox boundary with type tags (:func:`encode`: ``{"__tuple__": [...]}``,
``{"__set__": [...]}``, ``{"__dict__": [[key, value], ...]}``, ``{"__repr__": str}`` for other
objects), so that dict keys keep their types and the host compares plain values it rebuilt itself
(:func:`decode`): an object whose ``__eq__`` always says yes never reaches the comparison. The
host imports this module for the two functions.
"""

from __future__ import annotations

import json
import numbers
import os
import sys
from typing import Any

_MAX_DEPTH = 200


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data with type tags for what JSON cannot tell apart."""
    if depth > _MAX_DEPTH:
        raise ValueError("the return value is nested too deeply")
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        value = value.item()  # a numpy scalar: the Python number it stands for
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(item, depth + 1) for item in value]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    return {"__repr__": repr(value)[:200]}


class Opaque:
    """An object the harness could only describe (by its repr): equal to nothing, not JSON."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def decode(data: Any) -> Any:
    """Rebuild a value from :func:`encode`'s tagged form.

    Raises:
        ValueError: ``data`` is not in that form.
    """
    if isinstance(data, list):
        return [decode(item) for item in data]
    if isinstance(data, dict):
        if len(data) != 1:
            raise ValueError("not a tagged value")
        ((tag, body),) = data.items()
        if tag == "__tuple__":
            return tuple(decode(item) for item in body)
        if tag == "__set__":
            return frozenset(decode(item) for item in body)
        if tag == "__dict__":
            return {decode(key): decode(value) for key, value in body}
        if tag == "__repr__":
            return Opaque(str(body))
        raise ValueError(f"unknown tag {tag!r}")
    return data


def _target(namespace: dict[str, Any], name: str) -> Any:
    solution = namespace.get("Solution")
    if isinstance(solution, type) and callable(getattr(solution, name, None)):
        return getattr(solution(), name)
    function = namespace.get(name)
    if callable(function):
        return function
    raise LookupError(f"the code defines no function or Solution method named {name!r}")


def main() -> None:
    request = json.loads(sys.stdin.read())
    report = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        with open("solution.py", encoding="utf-8") as handle:
            source = handle.read()
        namespace: dict[str, Any] = {"__name__": "solution", "__file__": "solution.py"}
        exec(compile(source, "solution.py", "exec"), namespace)
        value = _target(namespace, request["fn_name"])(*decode(request["arguments"]))
        line = json.dumps({"value": encode(value)})
    except BaseException as exc:  # the solution may raise anything, SystemExit included
        line = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:1000]})
    report.write(line + "\n")
    report.flush()
    os._exit(0)  # skip interpreter teardown: atexit handlers of the solution must not run


if __name__ == "__main__":
    main()
