"""Merging of overlapping intervals."""


def _checked(intervals):
    for start, end in intervals:
        if start > end:
            raise ValueError(f"interval ({start}, {end}) ends before it starts")
        yield start, end


def merge(intervals):
    """The union of the intervals as a sorted list of disjoint intervals."""
    merged = []
    for start, end in _checked(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
