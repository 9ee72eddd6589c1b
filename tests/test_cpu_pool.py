"""The shared process pool: results, errors, timeouts and crashes (and recovery from both)."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

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


def test_a_function_of_the_main_script_is_refused_loudly(tmp_path: Path) -> None:
    script = tmp_path / "uses_pool.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from gym_llm import cpu_pool

            def square(x):
                return x * x

            try:
                asyncio.run(cpu_pool.run_in_process(square, 3, timeout=30))
            except TypeError as exc:
                print(exc)
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'square' is defined in the main script" in done.stdout


def test_a_script_without_a_main_guard_gets_the_right_rewards(tmp_path: Path) -> None:
    # Workers must not re-run the script: its top-level code would verify again in each of them.
    script = tmp_path / "verify_rows.py"
    script.write_text(
        textwrap.dedent(
            r"""
            import gym_llm

            print("top-level code ran", flush=True)
            for answer in ("60", "61", "\\frac{120}{2}"):
                row = {
                    "responses_create_params": {"input": "What is $7 \\times 8 + 4$?"},
                    "question": "What is $7 \\times 8 + 4$?",
                    "expected_answer": "60",
                    "response": {"output": [{
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": f"So \\boxed{{{answer}}}."}],
                    }]},
                }
                verdict = gym_llm.verify("llm/MathWithJudge-v0", row)
                error = verdict.details.get("checker_error")
                print("reward", verdict.reward, verdict.failure_kind, error, flush=True)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "top-level code ran",
        "reward 1.0 None None",
        "reward 0.0 None None",
        "reward 1.0 None None",
    ]


def test_the_prepare_hook_is_installed_only_over_the_stdlib_function() -> None:
    import multiprocessing.spawn

    assert cpu_pool.HOOK_INSTALLED == ((3, 10) <= sys.version_info[:2] <= (3, 13))
    assert cpu_pool._can_hook(cpu_pool._spawn_prepare) == cpu_pool.HOOK_INSTALLED
    assert not cpu_pool._can_hook(cpu_pool._prepare_worker)
    assert not cpu_pool._can_hook(lambda data: None)
    if cpu_pool.HOOK_INSTALLED:
        assert multiprocessing.spawn.prepare is cpu_pool._prepare_worker


def test_without_the_hook_a_script_without_a_main_guard_is_told_to_add_one(tmp_path: Path) -> None:
    # Another wrapper of prepare, installed in every process (the fork server too) before gym_llm:
    # the pool must leave it alone and fall back to multiprocessing's own rule.
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import multiprocessing.spawn

            _stdlib_prepare = multiprocessing.spawn.prepare

            def prepare(data):
                _stdlib_prepare(data)

            multiprocessing.spawn.prepare = prepare
            """
        )
    )
    script = tmp_path / "no_guard.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio, math
            from gym_llm import cpu_pool

            print("hook", cpu_pool.HOOK_INSTALLED, flush=True)
            try:
                asyncio.run(cpu_pool.run_in_process(math.factorial, 5, timeout=60))
            except cpu_pool.WorkerCrashed as exc:
                print("crashed:", exc, flush=True)
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hook False"
    assert lines[-1].startswith("crashed: a worker process died running factorial (twice)")
    assert 'if __name__ == "__main__":' in lines[-1]
