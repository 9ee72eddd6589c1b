from tinycache import LRUCache


def test_get_marks_key_as_used():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert cache.get("a") == 1
    assert "b" not in cache


def test_keys_order_after_get():
    cache = LRUCache(3)
    for key in "xyz":
        cache.put(key, 0)
    cache.get("x")
    assert cache.keys() == ["y", "z", "x"]


def test_contains_keeps_order():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert "a" in cache
    cache.put("c", 3)
    assert cache.keys() == ["b", "c"]


def test_missing_get_changes_nothing():
    cache = LRUCache(2)
    cache.put("a", 1)
    assert cache.get("b") is None
    assert cache.keys() == ["a"]
