"""Measures of a set of intervals."""

from spans.merge import merge


def total_length(intervals):
    """The length covered by the union of the intervals."""
    return sum(end - start for start, end in merge(intervals))
