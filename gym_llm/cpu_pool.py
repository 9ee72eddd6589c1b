"""One shared process pool for CPU-heavy checks (math-verify, SymPy), awaited without blocking.

``await run_in_process(fn, *args, timeout=10)`` runs ``fn(*args)`` in a worker process. A call
that runs past its timeout raises :class:`TimeoutError`; the pool is then killed and replaced, so a
worker wedged in SymPy never poisons later calls.

Start method: ``forkserver`` (``spawn`` where there is none). ``fork`` would copy a parent that
has threads (the sync facade's loop thread, test servers, aiohttp's resolver) and event loops: a
lock held by another thread at fork time stays locked forever in the child, and the child inherits
every open socket. The fork server is a clean single-threaded process started once; workers fork
from it cheaply, with the modules named by :func:`add_preload` already imported. As with
``spawn``, a script that uses the pool must keep its top-level code under
``if __name__ == "__main__":``, because workers import the main module.

Example:
    >>> import math
    >>> await run_in_process(math.factorial, 20, timeout=5)  # doctest: +SKIP
    2432902008176640000
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")

MAX_WORKERS = min(4, os.cpu_count() or 1)


class WorkerCrashed(RuntimeError):
    """A worker process died (twice) while running the call; the pool has been replaced."""


_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_generation = 0  # bumped each time the pool is replaced, so a broken pool is retired only once
_preload: list[str] = ["gym_llm"]  # workers unpickle functions that live in gym_llm modules
# Calls in flight per event loop, at most one per worker: a call's timeout then measures its own
# run time, not time spent queued behind other calls.
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def add_preload(*modules: str) -> None:
    """Import ``modules`` in the fork server, before workers fork from it (no effect once started).

    Env modules call this at import for their heavy dependencies (``"math_verify"``), so each new
    worker, including those that replace a killed pool, starts with them loaded.
    """
    with _lock:
        for module in modules:
            if module not in _preload:
                _preload.append(module)


def _context() -> multiprocessing.context.BaseContext:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        # Without '__main__' in the list the fork server does not run the user's script itself.
        context.set_forkserver_preload(list(_preload))
    return context


def _current_pool() -> tuple[ProcessPoolExecutor, int]:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(max_workers=MAX_WORKERS, mp_context=_context())
        return _pool, _generation


def _retire(generation: int) -> None:
    """Kill the pool of ``generation`` if it is still the current one; the next call makes a new one."""
    global _pool, _generation
    with _lock:
        if generation != _generation or _pool is None:
            return
        pool, _pool = _pool, None
        _generation += 1
    _kill(pool)


def _kill(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to stop a running task before Python 3.14
    # (terminate_workers): kill its processes, then let it wind down without waiting.
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        try:
            process.kill()
        except (OSError, AttributeError, ValueError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def _slot(loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
    with _lock:
        slot = _slots.get(loop)
        if slot is None:
            slot = _slots[loop] = asyncio.Semaphore(MAX_WORKERS)
        return slot


async def run_in_process(fn: Callable[..., T], *args: Any, timeout: float) -> T:
    """Run ``fn(*args)`` in the shared process pool and return its result.

    ``fn`` and ``args`` must be picklable (``fn`` a module-level function). A call whose pool broke
    under it (another call's worker crashed or timed out) is retried once on a fresh pool.

    Raises:
        TimeoutError: ``fn`` ran for more than ``timeout`` seconds (its worker has been killed).
        WorkerCrashed: The worker died running ``fn``, twice.
        Exception: Whatever ``fn`` raised.
    """
    async with _slot(asyncio.get_running_loop()):
        for _attempt in range(2):
            pool, generation = _current_pool()
            try:
                future: Future[T] = pool.submit(fn, *args)
            except (BrokenProcessPool, RuntimeError):  # shut down by a concurrent _retire
                _retire(generation)
                continue
            waiter = asyncio.wrap_future(future)
            try:
                # asyncio.wait, not wait_for: a TimeoutError raised by fn itself must not look like ours.
                done, _ = await asyncio.wait({waiter}, timeout=timeout)
            except asyncio.CancelledError:
                waiter.cancel()
                raise
            if not done:
                waiter.cancel()
                _retire(generation)
                name = getattr(fn, "__qualname__", repr(fn))
                raise TimeoutError(f"{name} ran for more than {timeout:g} s; its worker was killed")
            try:
                return waiter.result()
            except BrokenProcessPool:
                _retire(generation)
        raise WorkerCrashed(
            "a worker process died running the call (if this is a script, keep its top-level code under "
            "`if __name__ == '__main__':` so that worker processes can import it)"
        )


def shutdown() -> None:
    """Stop the pool's workers now (a later call starts a new pool)."""
    with _lock:
        generation = _generation
    _retire(generation)
