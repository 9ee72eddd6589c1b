"""mean, median and a summary of a sample."""


def _sample(values):
    values = list(values)
    if not values:
        raise ValueError("statistics of an empty sample")
    return values


def mean(values):
    values = _sample(values)
    return sum(values) / len(values)


def median(values):
    ordered = sorted(_sample(values))
    return ordered[len(ordered) // 2]


def summary(values):
    """count, min, max, mean and median of the sample."""
    values = _sample(values)
    return {
        "count": len(values),
        "min": min(values),
        "max": max(values),
        "mean": mean(values),
        "median": median(values),
    }
