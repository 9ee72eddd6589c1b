"""Durations as text."""

from timestr.duration import format_duration, parse_duration

__all__ = ["format_duration", "parse_duration"]
