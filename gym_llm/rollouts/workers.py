"""Play pairs of a plan in this process: ``concurrency`` coroutines, one env each, no lockstep.

Each coroutine takes the next pair code from a shared iterator, so a slow episode holds up nobody
and pairs are generated only as they are played. Used by the local engine and by each Ray worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any

from gym_llm.rollouts.episode import run_episode
from gym_llm.rollouts.plan import CollectPlan


async def play_pairs(
    plan: CollectPlan,
    codes: Iterable[int],
    on_record: Callable[[dict[str, Any]], None],
    *,
    concurrency: int | None = None,
    envs: list[Any] | None = None,
) -> None:
    """Play every pair code in ``codes``; ``on_record`` gets each stamped record as it finishes.

    Args:
        plan: The run.
        codes: Pair codes, consumed lazily and shared by the coroutines.
        on_record: Called with each finished record; an exception it raises stops every coroutine.
        concurrency: Coroutines (default: ``plan.concurrency``).
        envs: Envs to play on (one coroutine each; the caller closes them). Default: made here,
            ``concurrency`` of them, and closed at the end.
    """
    queue: Iterator[int] = iter(codes)
    own_envs = envs is None
    if envs is None:
        envs = [plan.make_env() for _ in range(concurrency or plan.concurrency)]

    async def worker(env: Any) -> None:
        policy = plan.policy.bind(env)
        for code in queue:
            on_record(await play_one(plan, env, policy, code))

    try:
        await run_all([worker(env) for env in envs])
    finally:
        if own_envs:
            for env in envs:
                env.close()


async def play_one(plan: CollectPlan, env: Any, policy: Any, code: int) -> dict[str, Any]:
    """Play pair ``code`` on ``env`` with ``policy`` (already bound to ``env``).

    Returns:
        The rollout record, stamped with the run's fingerprint.
    """
    task_index, repeat_index = divmod(code, plan.num_repeats)
    record = await run_episode(
        env,
        policy,
        task_index=task_index,
        repeat_index=repeat_index,
        env_id=plan.env_id,
        overrides=plan.overrides,
    )
    return plan.stamp(record)


async def run_all(coroutines: list[Coroutine[Any, Any, Any]]) -> None:
    """Run ``coroutines`` concurrently; the first exception cancels the others and is raised."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    if not tasks:
        return
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
