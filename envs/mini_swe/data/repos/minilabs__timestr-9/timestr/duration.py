"""Parsing and formatting of durations like "1h30m"."""

import re

_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+)([dhms])")


def parse_duration(text):
    """Seconds in a duration such as "1h30m" or "2d 4h"."""
    compact = text.strip().lower()
    total, position = 0, 0
    for match in _PART.finditer(compact):
        if match.start() != position:
            break
        total += int(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not compact or position != len(compact):
        raise ValueError(f"not a duration: {text!r}")
    return total


def format_duration(seconds):
    """The shortest "XdYhZmWs" string for a whole number of seconds."""
    if seconds < 0:
        raise ValueError("negative duration")
    parts = []
    for unit, size in _UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
