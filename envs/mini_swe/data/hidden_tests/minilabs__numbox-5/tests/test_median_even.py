from numbox import median, summary


def test_median_even():
    assert median([1, 2, 3, 4]) == 2.5


def test_median_even_unsorted():
    assert median([10, 2, 8, 4]) == 6


def test_summary_even():
    assert summary([4, 1, 3, 2])["median"] == 2.5


def test_median_single():
    assert median([7]) == 7


def test_summary_odd():
    assert summary([3, 1, 2]) == {"count": 3, "min": 1, "max": 3, "mean": 2, "median": 2}
