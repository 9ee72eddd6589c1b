"""The Python session behind ``execute_python``: one sandboxed process per episode.

The env sends this file's source with ``python -I -c`` (the sandbox may not be able to read the
package directory). Protocol: one JSON object per line. The worker answers ``{"ready": ...}``
once numpy (and scipy/pandas when installed) is loaded, then for each request ``{"code": str}``
one reply with NeMo Gym's fields ``success, stdout, stderr, error_message, result``.

Requests and replies travel on private copies of fds 0 and 1: during a call, fd 0 is /dev/null
and fds 1 and 2 are capture files in the work directory, so output the code writes at the fd
level (``os.system``, C extensions) is captured too and cannot corrupt the protocol.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import sys
import traceback
from typing import Any

OUTPUT_CAP = int(os.environ.get("GYM_LLM_OUTPUT_CAP", "100000"))
_TRUNCATED = "\n... [output truncated]"


def _preload(namespace: dict[str, Any]) -> list[str]:
    """Import numpy (and scipy/pandas when present) under NeMo Gym's names."""
    loaded = []
    for module, aliases in (("numpy", ("np", "numpy")), ("scipy", ("scipy",)), ("pandas", ("pd", "pandas"))):
        try:
            imported = __import__(module)
        except ImportError:
            continue
        for alias in aliases:
            namespace[alias] = imported
        loaded.append(module)
    return loaded


def _read_capped(path: str) -> str:
    with open(path, "rb") as handle:
        data = handle.read(OUTPUT_CAP + 1)
    text = data[:OUTPUT_CAP].decode(errors="replace")
    return text + _TRUNCATED if len(data) > OUTPUT_CAP else text


def _run(code: str, namespace: dict[str, Any]) -> tuple[bool, str | None, str | None]:
    """Execute ``code``; the value of a final bare expression is the result (as in a notebook)."""
    try:
        tree = ast.parse(code, "<execute_python>", "exec")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, "<execute_python>", "exec"), namespace)
        value = None
        if last is not None:
            expression = ast.Expression(last.value)
            value = eval(compile(expression, "<execute_python>", "eval"), namespace)
        result = None if value is None else str(value)
        if result is not None and len(result) > OUTPUT_CAP:
            result = result[:OUTPUT_CAP] + _TRUNCATED
        return True, None, result
    except BaseException as exc:  # the model's code may raise anything, SystemExit included
        # Skip this function's frame: the model needs only its own code's traceback.
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))
        return False, f"{type(exc).__name__}: {exc}", None


def main() -> None:
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    loaded = _preload(namespace)
    out_path, err_path = os.path.abspath(".stdout"), os.path.abspath(".stderr")

    def reply(message: dict[str, Any]) -> None:
        proto_out.write(json.dumps(message).encode() + b"\n")
        proto_out.flush()

    reply({"ready": True, "preloaded": loaded})
    while line := proto_in.readline():
        request = json.loads(line)
        for fd, path in ((1, out_path), (2, err_path)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        success, error, result = _run(request["code"], namespace)
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except Exception:  # the code may have replaced or closed them
                pass
        reply(
            {
                "success": success,
                "stdout": _read_capped(out_path),
                "stderr": _read_capped(err_path),
                "error_message": error,
                "result": result,
            }
        )


if __name__ == "__main__":
    main()
