"""Helpers shared by the workplace tool families: wire format, ids, dates and pagination."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

# WorkBench's frozen "now": the system prompt tells the model the same date and time.
CURRENT_TIME = datetime(2023, 11, 30, 23, 59, 0)
CURRENT_TIME_TEXT = "2023-11-30 23:59:00"

Row = dict[str, Any]


def wire(result: Any) -> str:
    """A tool result as NeMo Gym's server sends it: ``{"output": result}`` as compact JSON."""
    return json.dumps({"output": result}, ensure_ascii=False, separators=(",", ":"))


def next_id(rows: list[Row], column: str) -> str:
    """The next 8-digit id of a table: one more than the largest numeric id (``"00000001"`` if empty)."""
    largest = 0
    for row in rows:
        value = row.get(column)
        if isinstance(value, str) and value.isdigit():
            largest = max(largest, int(value))
    return str(largest + 1).zfill(8)


def is_eight_digit_id(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 8 and value.isdigit()


def parse_datetime(text: str) -> datetime | None:
    """``YYYY-MM-DD`` or ``YYYY-MM-DD HH:MM[:SS]`` (``T`` also accepted); ``None`` if unparseable."""
    try:
        return datetime.fromisoformat(text.strip())
    except (AttributeError, ValueError):
        return None


def find(rows: list[Row], column: str, value: Any) -> Row | None:
    """The first row whose ``column`` equals ``value``."""
    for row in rows:
        if row.get(column) == value:
            return row
    return None


def contains(haystack: Any, needle: str) -> bool:
    """Case-insensitive substring test; missing values never match."""
    return isinstance(haystack, str) and needle.lower() in haystack.lower()


def paginate(items: list[Row], page: int | None, page_size: int | None, key: str, total_key: str) -> Any:
    """One page of ``items`` in WorkBench's shape: ``{key: [...], "pagination": {...}}``.

    The page number is clamped to the available pages, as WorkBench does.
    """
    page = 1 if page is None else page
    page_size = 5 if page_size is None else page_size
    if page_size < 1:
        raise ValueError("page_size must be a positive integer")
    total = len(items)
    total_pages = (total + page_size - 1) // page_size
    page = max(1, min(page, total_pages)) if total_pages > 0 else 1
    start = (page - 1) * page_size
    return {
        key: [dict(row) for row in items[start : start + page_size]],
        "pagination": {total_key: total, "page": page, "page_size": page_size, "total_pages": total_pages},
    }
