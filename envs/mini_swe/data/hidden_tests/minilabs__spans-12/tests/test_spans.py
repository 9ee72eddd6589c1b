import pytest
from spans import merge, total_length


def test_merge_sorted():
    assert merge([(1, 3), (2, 4), (6, 8)]) == [(1, 4), (6, 8)]


def test_merge_touching():
    assert merge([(1, 2), (2, 3)]) == [(1, 3)]


def test_merge_empty():
    assert merge([]) == []


def test_invalid_interval():
    with pytest.raises(ValueError):
        merge([(3, 1)])


def test_merge_unsorted():
    assert merge([(5, 7), (1, 6)]) == [(1, 7)]


def test_merge_unsorted_disjoint():
    assert merge([(8, 9), (1, 2), (4, 5)]) == [(1, 2), (4, 5), (8, 9)]


def test_total_length_unsorted():
    assert total_length([(5, 7), (1, 6)]) == 6


def test_total_length_sorted():
    assert total_length([(0, 1), (2, 4)]) == 3
