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
        return _run_in_thread_loop(coro)
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result()


def _run_in_thread_loop(coro: Coroutine[Any, Any, T]) -> T:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
    task = loop.create_task(coro)
    ready = getattr(loop, "_ready", None)  # asyncio's queue of callbacks due now
    if ready is not None:
        # Fast path: most env steps (sync tools, sync verify) finish in the task's first step.
        # Run the callbacks that are due, the task's first step among them, without a full loop
        # iteration (no I/O poll); the task is a real Task, so current_task() and timeouts work.
        asyncio.events._set_running_loop(loop)
        try:
            while ready and not task.done():
                handle = ready.popleft()
                if not handle._cancelled:
                    handle._run()
        finally:
            asyncio.events._set_running_loop(None)
        if task.done():
            return task.result()
    return loop.run_until_complete(task)


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="gym_llm-sync", daemon=True).start()
            _background = loop
        return _background
