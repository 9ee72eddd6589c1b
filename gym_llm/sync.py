"""Run the async core from synchronous code, also from inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_local = threading.local()
_background: asyncio.AbstractEventLoop | None = None
_background_lock = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result.

    Without a running loop in this thread, a loop kept per thread runs it (so resources that
    belong to a loop, like HTTP sessions, survive between calls). Inside a running loop it is
    handed to one background loop thread, and this call waits for it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        loop = getattr(_local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            _local.loop = loop
        return loop.run_until_complete(coro)
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="gym_llm-sync", daemon=True).start()
            _background = loop
        return _background
