import pytest
from tinycache import LRUCache


def test_put_evicts_oldest():
    cache = LRUCache(2)
    for key in "abc":
        cache.put(key, key.upper())
    assert cache.keys() == ["b", "c"]


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        LRUCache(0)


def test_hits_and_misses():
    cache = LRUCache(1)
    cache.put("a", 1)
    assert cache.get("a") == 1
    assert cache.get("z", 0) == 0
    assert (cache.hits, cache.misses) == (1, 1)
