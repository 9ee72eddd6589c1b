"""Run the async core from synchronous code, also from inside a running event loop (Jupyter).

``reset()``/``step()`` call :func:`run_sync` on ``areset()``/``astep()``. How a call runs:

* Inside a running loop (Jupyter, an async app) the coroutine goes to one background loop thread
  and the caller waits for it: a running loop cannot be re-entered.
* Otherwise a loop kept per thread runs it, so that resources bound to a loop (HTTP sessions)
  survive between calls.

The per-thread loop has a fast path. Most env steps (sync tools, sync verify) finish within the
first step of their task, and ``loop.run_until_complete`` spends more time starting the loop,
polling I/O and stopping it than the step itself takes. So the fast path runs the callbacks that
are due, pass by pass as loop iterations would (a few passes at most), without polling I/O, with
the loop set as the running loop and its async generator hooks installed: the coroutine runs as a
real :class:`asyncio.Task`, so ``asyncio.current_task()``, ``get_running_loop()``, timers and
timeouts work. A task still waiting after that (on I/O, a timer, a thread) is finished by
``run_until_complete``. Every ``_POLL_EVERY`` fast calls one real loop iteration also runs, so that
cancelled timers are dropped and I/O callbacks (connection cleanup) are not starved.

The fast path relies on private parts of asyncio's pure-Python loop (the ``_ready`` queue of due
callbacks, ``Handle._run``, ``asyncio.events._set_running_loop`` and the loop's async generator
hooks) because no public API runs due callbacks without a full loop iteration. Measured on CPython
3.11, a call costs 3.8 µs on the fast path, 5.7 µs with the cheapest public form (one iteration:
``call_soon(loop.stop)`` then ``run_forever()``) and 8.5 µs with ``run_until_complete``; a Weather
episode (three calls) costs 14 µs more through ``reset``/``step`` than through ``areset``/``astep``,
against 30 µs with ``run_until_complete``. The fast path is therefore taken only where the tests
check it: the Python versions in ``_FAST_PATH_PYTHONS``, asyncio's own loop classes (not uvloop,
not subclasses, which may hook the loop's iteration), and only while those attributes exist.
Anywhere else every call takes ``run_until_complete``, with the same results, only slower.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# The versions whose asyncio internals the tests check, on both paths (oldest..newest supported).
_FAST_PATH_PYTHONS = ((3, 10), (3, 13))
# Passes over the due callbacks before handing over to the full loop: a gather of child tasks
# needs four. A coroutine still yielding after that is likely waiting on what only a real
# iteration delivers (I/O readiness, a timer): passes that never poll could spin for ever.
_MAX_PASSES = 16
# Fast calls between two real loop iterations (which clear cancelled timers and run I/O callbacks).
_POLL_EVERY = 64
_STDLIB_LOOPS = tuple(
    cls
    for cls in (getattr(asyncio, "SelectorEventLoop", None), getattr(asyncio, "ProactorEventLoop", None))
    if cls is not None
)

_local = threading.local()
_background: asyncio.AbstractEventLoop | None = None
_background_lock = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result.

    Without a running loop in this thread, a loop kept per thread runs it (so resources that
    belong to a loop, like HTTP sessions, survive between calls). Inside a running loop it is
    handed to one background loop thread, and this call waits for it.

    Args:
        coro: The coroutine to run; it runs as an :class:`asyncio.Task`.

    Returns:
        What the coroutine returns (its exception is raised instead).

    Example:
        >>> async def double(x):
        ...     await asyncio.sleep(0)
        ...     return 2 * x
        >>> run_sync(double(21))
        42
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_in_thread_loop(coro)
    return asyncio.run_coroutine_threadsafe(coro, _background_loop()).result()


def _fast_path_supported(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether :func:`run_sync` may take its fast path on ``loop`` (see the module docstring).

    Args:
        loop: An event loop, not running.

    Returns:
        True on the tested Python versions for asyncio's own loop classes that have the private
        attributes the fast path uses; False elsewhere (uvloop, loop subclasses, newer Pythons).
    """
    return (
        _FAST_PATH_PYTHONS[0] <= sys.version_info[:2] <= _FAST_PATH_PYTHONS[1]
        and type(loop) in _STDLIB_LOOPS
        and isinstance(getattr(loop, "_ready", None), collections.deque)
        and callable(getattr(asyncio.Handle, "_run", None))
        and callable(getattr(asyncio.events, "_set_running_loop", None))
        and callable(getattr(loop, "_asyncgen_firstiter_hook", None))
        and callable(getattr(loop, "_asyncgen_finalizer_hook", None))
    )


class _ThreadLoop:
    """This thread's loop and how :func:`run_sync` runs coroutines on it."""

    __slots__ = ("fast", "fast_calls", "hooks", "loop")

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.fast = _fast_path_supported(self.loop)
        self.fast_calls = 0  # since the last real loop iteration
        if self.fast:  # the hooks run_forever() installs, so that this loop finalises async generators
            private: Any = self.loop  # attributes checked by _fast_path_supported
            self.hooks = (private._asyncgen_firstiter_hook, private._asyncgen_finalizer_hook)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        task = loop.create_task(coro)
        if self.fast and self._run_due_callbacks(task):
            self.fast_calls += 1
            if self.fast_calls >= _POLL_EVERY:
                self.fast_calls = 0
                loop.call_soon(loop.stop)  # documented: run_forever() then makes exactly one iteration
                loop.run_forever()
            return task.result()
        self.fast_calls = 0
        return loop.run_until_complete(task)

    def _run_due_callbacks(self, task: asyncio.Task[Any]) -> bool:
        """The fast path: run due callbacks pass by pass, as loop iterations would, but never poll I/O.

        Returns:
            Whether ``task`` is done.
        """
        loop = self.loop
        ready: collections.deque[asyncio.Handle] = loop._ready  # type: ignore[attr-defined]
        hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(*self.hooks)
        asyncio.events._set_running_loop(loop)
        try:
            passes = _MAX_PASSES
            while passes:
                passes -= 1
                due = len(ready)  # what is due now; what these callbacks schedule waits a pass
                while due:
                    due -= 1
                    handle = ready.popleft()
                    if not handle.cancelled():
                        handle._run()
                if not ready or task.done():
                    break
        finally:
            asyncio.events._set_running_loop(None)
            sys.set_asyncgen_hooks(*hooks)
        return task.done()


def _run_in_thread_loop(coro: Coroutine[Any, Any, T]) -> T:
    state: _ThreadLoop | None = getattr(_local, "state", None)
    if state is None or state.loop.is_closed():
        state = _local.state = _ThreadLoop()
    return state.run(coro)


def _background_loop() -> asyncio.AbstractEventLoop:
    global _background
    with _background_lock:
        if _background is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="gym_llm-sync", daemon=True).start()
            _background = loop
        return _background
