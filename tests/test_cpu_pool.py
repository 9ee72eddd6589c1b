"""The shared process pool: results, errors, timeouts and crashes (and recovery from both)."""

from __future__ import annotations

import asyncio
import math
import os
import time

import pytest

from gym_llm import cpu_pool

# Mostly functions from the standard library: picklable by reference wherever the worker runs.


def raise_timeout_error() -> None:
    raise TimeoutError("x")


def run(coro):
    return asyncio.run(coro)


def test_result_and_arguments_come_back():
    assert run(cpu_pool.run_in_process(math.factorial, 20, timeout=30)) == 2432902008176640000
    assert run(cpu_pool.run_in_process(pow, 3, 4, timeout=30)) == 81


def test_the_call_runs_in_another_process():
    assert run(cpu_pool.run_in_process(os.getpid, timeout=30)) != os.getpid()


def test_exceptions_of_the_function_propagate():
    with pytest.raises(ValueError, match="invalid literal"):
        run(cpu_pool.run_in_process(int, "seven", timeout=30))


def test_a_timeout_error_raised_by_the_function_is_not_a_pool_timeout():
    # TimeoutError("x") raised in the worker: the pool must not be killed for it.
    pool_before = cpu_pool._current_pool()[1]
    with pytest.raises(TimeoutError, match=r"^x$"):
        run(cpu_pool.run_in_process(raise_timeout_error, timeout=30))
    assert cpu_pool._current_pool()[1] == pool_before


def test_a_hung_call_times_out_and_later_calls_still_work():
    run(cpu_pool.run_in_process(abs, -1, timeout=30))  # warm
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"sleep ran for more than 0\.3 s"):
        run(cpu_pool.run_in_process(time.sleep, 60, timeout=0.3))
    assert time.monotonic() - start < 2
    assert run(cpu_pool.run_in_process(abs, -5, timeout=30)) == 5


def test_a_timeout_does_not_fail_the_calls_running_beside_it():
    async def together():
        hung = cpu_pool.run_in_process(time.sleep, 60, timeout=0.3)
        others = [cpu_pool.run_in_process(math.factorial, n, timeout=30) for n in range(6)]
        return await asyncio.gather(hung, *others, return_exceptions=True)

    results = run(together())
    assert isinstance(results[0], TimeoutError)
    assert results[1:] == [math.factorial(n) for n in range(6)]


def test_a_crashing_worker_raises_and_the_pool_recovers():
    with pytest.raises(cpu_pool.WorkerCrashed):
        run(cpu_pool.run_in_process(os._exit, 3, timeout=30))
    assert run(cpu_pool.run_in_process(abs, -2, timeout=30)) == 2


def test_pool_is_shared_across_event_loops_and_shutdown_restarts_it():
    assert run(cpu_pool.run_in_process(abs, -3, timeout=30)) == 3
    assert run(cpu_pool.run_in_process(abs, -4, timeout=30)) == 4
    cpu_pool.shutdown()
    assert run(cpu_pool.run_in_process(abs, -6, timeout=30)) == 6


def test_start_method_avoids_fork():
    context = cpu_pool._context()
    assert context.get_start_method() in ("forkserver", "spawn")
