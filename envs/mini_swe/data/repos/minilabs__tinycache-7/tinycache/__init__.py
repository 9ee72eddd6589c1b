"""A small LRU cache."""

from tinycache.lru import LRUCache

__all__ = ["LRUCache"]
