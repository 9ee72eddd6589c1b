"""Interval arithmetic on (start, end) pairs."""

from spans.measure import total_length
from spans.merge import merge

__all__ = ["merge", "total_length"]
