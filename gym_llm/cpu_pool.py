"""One shared process pool for CPU-heavy checks (math-verify, SymPy), awaited without blocking.

``await run_in_process(fn, *args, timeout=10)`` runs ``fn(*args)`` in a worker process. A call
that runs past its timeout raises :class:`TimeoutError`; the pool is then killed and replaced, so a
worker wedged in SymPy never poisons later calls.

Start method: ``forkserver`` (``spawn`` where there is none). ``fork`` would copy a parent that
has threads (the sync facade's loop thread, test servers, aiohttp's resolver) and event loops: a
lock held by another thread at fork time stays locked forever in the child, and the child inherits
every open socket. The fork server is a clean single-threaded process started once; workers fork
from it cheaply, with the modules named by :func:`add_preload` already imported.

Workers do not import the main module (``multiprocessing`` normally re-runs the user's script in
each worker, which is why scripts need ``if __name__ == "__main__":``): a script that verifies
rollouts at its top level gets the right rewards, and its top-level code runs once. In return
``fn`` must live in an importable module, not in the script itself (:class:`TypeError` otherwise).
Only with ``spawn`` (no fork server on the platform) do workers still import the script.

That skip replaces ``multiprocessing.spawn.prepare`` (for this pool's own workers only, told apart
by their process name), a private hook of the standard library. It is installed only on the Python
versions it is tested on (3.10 to 3.13) and only while ``prepare`` is still the standard library's
own function. Elsewhere the usual rule of ``multiprocessing`` holds: a script that verifies at its
top level needs ``if __name__ == "__main__":``, and without it the call fails with a
:class:`WorkerCrashed` that says so.

Example:
    >>> import math
    >>> await run_in_process(math.factorial, 20, timeout=5)  # doctest: +SKIP
    2432902008176640000
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.context
import multiprocessing.spawn
import os
import sys
import threading
import weakref
from collections.abc import Callable, Mapping
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
# Workers unpickle functions that live in gym_llm modules; this module installs the hook below.
_preload: list[str] = ["gym_llm", __name__]
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


class GymLLMPoolWorker(multiprocessing.context.ForkServerProcess):
    """A worker of this pool. Its default name (``GymLLMPoolWorker-<n>``) tells the fork server's
    :func:`_prepare_worker` hook which new processes are ours."""


class _PoolContext(multiprocessing.context.ForkServerContext):
    Process = GymLLMPoolWorker


_MAIN_MODULE_KEYS = ("init_main_from_name", "init_main_from_path")
_spawn_prepare = multiprocessing.spawn.prepare


def _prepare_worker(data: Mapping[str, Any]) -> None:
    """``multiprocessing.spawn.prepare`` that skips importing the main module for our workers.

    It runs in each process the fork server starts, before the process object is unpickled:
    ``prepare`` would otherwise re-run the parent's script (as ``__mp_main__``) in every worker.
    """
    if str(data.get("name", "")).startswith(GymLLMPoolWorker.__name__):
        data = {key: value for key, value in data.items() if key not in _MAIN_MODULE_KEYS}
    _spawn_prepare(data)


# The Python versions whose ``multiprocessing.spawn.prepare`` the hook is tested against.
_HOOK_VERSIONS = ((3, 10), (3, 13))


def _can_hook(prepare: Any) -> bool:
    """Whether ``prepare`` is the standard library's own function on a tested Python version."""
    return (
        _HOOK_VERSIONS[0] <= sys.version_info[:2] <= _HOOK_VERSIONS[1]
        and getattr(prepare, "__module__", None) == "multiprocessing.spawn"
        and getattr(prepare, "__qualname__", None) == "prepare"
    )


# Installed wherever this module is imported; it matters in the fork server (which preloads this
# module), whose children look ``prepare`` up in ``multiprocessing.spawn`` when they start. Where
# it is not installed, workers import the main script as ``multiprocessing`` always does.
HOOK_INSTALLED = _can_hook(_spawn_prepare)
if HOOK_INSTALLED:
    multiprocessing.spawn.prepare = _prepare_worker


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = _PoolContext()
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
    # Python 3.14 stops running tasks with terminate_workers; before it, ProcessPoolExecutor has no
    # public way: kill its processes (a private attribute, read defensively), then let it wind down.
    terminate = getattr(pool, "terminate_workers", None)
    if callable(terminate):
        try:
            terminate()
        except (OSError, ValueError, RuntimeError):
            pass
    else:
        processes = getattr(pool, "_processes", None)
        for process in list(processes.values()) if isinstance(processes, Mapping) else ():
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

    ``fn`` and ``args`` must be picklable, ``fn`` a module-level function of an importable module
    (workers do not import the main script). A call whose pool broke under it (another call's
    worker crashed or timed out) is retried once on a fresh pool.

    Raises:
        TypeError: ``fn`` is defined in the main script, where workers cannot find it.
        TimeoutError: ``fn`` ran for more than ``timeout`` seconds (its worker has been killed).
        WorkerCrashed: The worker died running ``fn``, twice.
        Exception: Whatever ``fn`` raised.
    """
    if getattr(fn, "__module__", None) == "__main__":
        raise TypeError(
            f"run_in_process: {getattr(fn, '__qualname__', fn)!r} is defined in the main script, which "
            "worker processes do not import; move it into a module"
        )
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
        name = getattr(fn, "__qualname__", repr(fn))
        raise WorkerCrashed(crash_message(name))


def crash_message(name: str) -> str:
    """The :class:`WorkerCrashed` message for a call of ``name``, with the ``__main__`` hint where due.

    Example:
        >>> crash_message("f").startswith("a worker process died running f (twice)")
        True
    """
    message = f"a worker process died running {name} (twice); the pool was replaced"
    if not HOOK_INSTALLED or "forkserver" not in multiprocessing.get_all_start_methods():
        message += (
            ". Workers import the main script on this Python: a script that verifies at its top level "
            'must put that code under `if __name__ == "__main__":`'
        )
    return message


def shutdown() -> None:
    """Stop the pool's workers now (a later call starts a new pool)."""
    with _lock:
        generation = _generation
    _retire(generation)
