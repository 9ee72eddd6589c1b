"""run_sync: the sync facade over the async core, on its fast path and on the run_until_complete fallback."""

from __future__ import annotations

import asyncio
import gc
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from gym_llm import sync
from gym_llm.sync import run_sync

T = TypeVar("T")


def in_fresh_thread(fn: Callable[[], T], timeout: float = 20.0) -> T:
    """Run ``fn`` in a new thread, so that ``run_sync`` makes that thread's loop under the test's settings.

    A daemon thread with a join timeout: a call that never returns fails the test instead of hanging it.
    """
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["error"] = exc
        finally:
            state = getattr(sync._local, "state", None)
            if state is not None:
                state.loop.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"run_sync did not return within {timeout} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def fast_path_on() -> bool:
    loop = asyncio.new_event_loop()
    try:
        return sync._fast_path_supported(loop)
    finally:
        loop.close()


SKIP_FAST = f"the fast path is off on Python {sys.version_info[:2]} (tested: {sync._FAST_PATH_PYTHONS})"


@pytest.fixture(params=["fast", "fallback"])
def path(request, monkeypatch) -> str:
    """Each test runs on both paths: the fast path where this Python has it, and the fallback."""
    if request.param == "fast" and not fast_path_on():
        pytest.skip(SKIP_FAST)
    if request.param == "fallback":
        monkeypatch.setattr(sync, "_fast_path_supported", lambda loop: False)
    return request.param


def test_the_fast_path_is_on_for_asyncio_loops_on_the_tested_pythons(monkeypatch):
    low, high = sync._FAST_PATH_PYTHONS
    assert fast_path_on() == (low <= sys.version_info[:2] <= high)

    class CustomLoop(asyncio.SelectorEventLoop):
        """A subclass may hook the loop's iteration, which the fast path would bypass."""

    loop = CustomLoop()
    try:
        assert not sync._fast_path_supported(loop)
    finally:
        loop.close()
    monkeypatch.setattr(sync, "_FAST_PATH_PYTHONS", ((3, 0), (3, 1)))
    assert not fast_path_on()


def test_returns_the_result_and_raises_the_exception(path):
    async def double(x: int) -> int:
        return 2 * x

    async def fail() -> None:
        raise KeyError("missing")

    assert in_fresh_thread(lambda: [run_sync(double(i)) for i in range(3)]) == [0, 2, 4]
    with pytest.raises(KeyError, match="missing"):
        in_fresh_thread(lambda: run_sync(fail()))


def test_coroutines_run_as_tasks_on_the_running_loop(path):
    async def where() -> tuple[Any, Any, bool]:
        task = asyncio.current_task()
        return task, asyncio.get_running_loop(), task is not None and not task.done()

    def two_calls():
        return run_sync(where()), run_sync(where())

    (task1, loop1, running1), (task2, loop2, running2) = in_fresh_thread(two_calls)
    assert isinstance(task1, asyncio.Task) and running1 and running2
    assert task1 is not task2 and loop1 is loop2  # one loop per thread, a task per call


def test_timeouts_fire_and_the_loop_waits_on_timers_threads_and_io(path):
    async def timed_out() -> float:
        start = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.sleep(10), 0.05)
        if sys.version_info >= (3, 11):
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await asyncio.sleep(10)
        return time.monotonic() - start

    async def waits() -> list[Any]:
        loop = asyncio.get_running_loop()
        reader, writer = socket.socketpair()
        try:
            readable = loop.create_future()
            loop.add_reader(reader, readable.set_result, "readable")
            threading.Timer(0.02, writer.send, (b"x",)).start()
            slept = await asyncio.sleep(0.01, "slept")
            threaded = await loop.run_in_executor(None, lambda: "threaded")
            io = await readable
            loop.remove_reader(reader)
            return [slept, threaded, io]
        finally:
            reader.close()
            writer.close()

    assert in_fresh_thread(lambda: run_sync(timed_out())) < 5
    assert in_fresh_thread(lambda: run_sync(waits())) == ["slept", "threaded", "readable"]


def test_child_tasks_run_each_as_its_own_task(path):
    async def child(i: int) -> tuple[int, Any]:
        await asyncio.sleep(0)
        return i, asyncio.current_task()

    async def parent() -> tuple[list[tuple[int, Any]], Any]:
        return list(await asyncio.gather(*(child(i) for i in range(3)))), asyncio.current_task()

    children, parent_task = in_fresh_thread(lambda: run_sync(parent()))
    assert [i for i, _ in children] == [0, 1, 2]
    assert len({id(task) for _, task in children} | {id(parent_task)}) == 4


def test_a_coroutine_that_keeps_yielding_while_it_waits_for_io_finishes(path):
    """Callbacks that keep rescheduling themselves must not keep the loop from polling I/O."""

    async def poll_with_sleep_zero() -> str:
        loop = asyncio.get_running_loop()
        reader, writer = socket.socketpair()
        try:
            writer.send(b"x")  # readable now, but only an I/O poll can tell the loop
            readable = loop.create_future()
            loop.add_reader(reader, readable.set_result, "readable")
            while not readable.done():
                await asyncio.sleep(0)
            loop.remove_reader(reader)
            return readable.result()
        finally:
            reader.close()
            writer.close()

    assert in_fresh_thread(lambda: run_sync(poll_with_sleep_zero()), timeout=10) == "readable"


def test_abandoned_async_generators_are_finalised_by_the_loop(path, monkeypatch):
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    closed: list[bool] = []

    async def numbers():
        try:
            yield 1
            yield 2
        finally:
            await asyncio.sleep(0)  # cleanup that awaits: only the loop's finaliser can run it
            closed.append(True)

    async def first() -> int:
        agen = numbers()
        value = await agen.__anext__()
        del agen
        gc.collect()
        return value

    def run() -> int:
        value = run_sync(first())
        run_sync(asyncio.sleep(0.01))  # the loop runs the aclose() its finaliser scheduled
        return value

    assert in_fresh_thread(run) == 1
    assert closed == [True] and unraisable == []


def test_fast_calls_skip_the_full_loop_until_the_coroutine_waits():
    if not fast_path_on():
        pytest.skip(SKIP_FAST)

    async def quick() -> int:
        await asyncio.sleep(0)
        return 1

    def run() -> tuple[list[str], list[str]]:
        run_sync(quick())  # makes this thread's loop
        loop = sync._local.state.loop
        calls: list[str] = []
        full = loop.run_until_complete
        loop.run_until_complete = lambda fut: calls.append("run_until_complete") or full(fut)
        for _ in range(sync._POLL_EVERY - 2):
            run_sync(quick())
        quick_calls = list(calls)
        run_sync(asyncio.sleep(0.001))
        return quick_calls, calls

    quick_calls, calls = in_fresh_thread(run)
    assert quick_calls == [] and calls == ["run_until_complete"]


def test_io_callbacks_and_cancelled_timers_are_handled_between_fast_calls(path):
    async def cancelled_timer() -> None:
        asyncio.get_running_loop().call_later(3600, print).cancel()

    async def watch(reader: socket.socket, seen: list[bytes]) -> None:
        asyncio.get_running_loop().add_reader(reader, lambda: seen.append(reader.recv(1)))

    def run() -> tuple[list[bytes], int]:
        reader, writer = socket.socketpair()
        seen: list[bytes] = []
        try:
            run_sync(watch(reader, seen))
            writer.send(b"x")
            for _ in range(3 * sync._POLL_EVERY):
                run_sync(cancelled_timer())
            return seen, len(sync._local.state.loop._scheduled)
        finally:
            sync._local.state.loop.remove_reader(reader)
            reader.close()
            writer.close()

    seen, scheduled = in_fresh_thread(run)
    assert seen == [b"x"]
    assert scheduled < 2 * sync._POLL_EVERY  # cancelled timers are dropped, not kept for ever


def test_inside_a_running_loop_the_coroutine_runs_on_a_background_loop():
    async def where() -> tuple[Any, Any]:
        await asyncio.sleep(0.001)
        return asyncio.current_task(), asyncio.get_running_loop()

    async def notebook_cell() -> tuple[Any, Any, Any]:
        task, loop = run_sync(where())  # blocking, as a sync env.step() in a notebook cell is
        return task, loop, asyncio.get_running_loop()

    task, loop, caller_loop = asyncio.run(notebook_cell())
    assert isinstance(task, asyncio.Task) and loop is not caller_loop and loop.is_running()
