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
    # Fast path: most env steps (sync tools, sync verify) finish without ever suspending. Step the
    # coroutine directly, with this thread's loop marked as running for anything that asks for it,
    # and pay for the event loop only when the coroutine really waits on something.
    asyncio.events._set_running_loop(loop)
    try:
        waiting_on = coro.send(None)
    except StopIteration as done:
        return done.value
    except BaseException:
        coro.close()
        raise
    finally:
        asyncio.events._set_running_loop(None)
    return loop.run_until_complete(_resume(coro, waiting_on))


async def _resume(coro: Coroutine[Any, Any, T], waiting_on: Any) -> T:
    """Drive a coroutine that suspended outside the loop, as a Task would have."""
    while True:
        try:
            if waiting_on is None:  # a bare yield: give the loop one turn
                await asyncio.sleep(0)
            else:
                waiting_on._asyncio_future_blocking = False  # what a Task does before waiting on it
                await waiting_on
            resume = coro.send
            value = None
        except BaseException as exc:
            # The future's own outcome reaches the coroutine when it reads the result; anything
            # else (this task being cancelled) is thrown into it.
            if waiting_on is not None and waiting_on.done():
                resume, value = coro.send, None
            else:
                resume, value = coro.throw, exc
        try:
            waiting_on = resume(value)
        except StopIteration as done:
            return done.value


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="gym_llm-sync", daemon=True).start()
            _background = loop
        return _background
