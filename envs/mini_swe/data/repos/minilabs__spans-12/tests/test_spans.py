import pytest
from spans import merge


def test_merge_sorted():
    assert merge([(1, 3), (2, 4), (6, 8)]) == [(1, 4), (6, 8)]


def test_merge_touching():
    assert merge([(1, 2), (2, 3)]) == [(1, 3)]


def test_merge_empty():
    assert merge([]) == []


def test_invalid_interval():
    with pytest.raises(ValueError):
        merge([(3, 1)])
