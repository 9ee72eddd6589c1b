"""JSON for the hot paths (HTTP bodies, rollout lines): orjson, several times faster than ``json``.

Text the model reads (tool outputs, call arguments) keeps the standard library's formatting.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> bytes:
    """UTF-8 JSON bytes."""
    return orjson.dumps(value, option=_OPTIONS)


def dumps_line(value: Any) -> bytes:
    """UTF-8 JSON bytes ending in a newline (one JSONL record)."""
    return orjson.dumps(value, option=_OPTIONS | orjson.OPT_APPEND_NEWLINE)


loads = orjson.loads
JSONDecodeError = orjson.JSONDecodeError
