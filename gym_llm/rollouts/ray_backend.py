"""Collection across machines on Ray: shards of (task, repeat) pairs run on Ray actors, each
running the same engine; their records stream back and are written by the driver in one file.

Needs the ``ray`` extra (``pip install "gym-llm[ray]"``). The policy and the validated task rows
are pickled to the workers, so a policy must be picklable before first use (the bundled ones are).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

_DONE = "__gym_llm_shard_done__"


class ShardWorker:
    """A Ray actor that plays one shard and yields its records as they finish."""

    async def play(
        self,
        env_id: str,
        pairs: list[tuple[int, int]],
        policy: Any,
        env_kwargs: Mapping[str, Any],
        concurrency: int,
        overrides: Mapping[str, Any] | None,
    ):
        import gym_llm  # noqa: F401 - registers the envs in this worker process
        from gym_llm.rollouts.collect import play_pairs

        records: asyncio.Queue = asyncio.Queue()

        async def produce() -> None:
            try:
                await play_pairs(
                    env_id, pairs, policy, records.put_nowait, env_kwargs, concurrency, overrides
                )
            finally:
                if hasattr(policy, "aclose"):
                    await policy.aclose()
                records.put_nowait(_DONE)

        producer = asyncio.create_task(produce())
        while (record := await records.get()) != _DONE:
            yield record
        await producer  # re-raise what went wrong in the shard


async def play_pairs_on_ray(
    env_id: str,
    pairs: list[tuple[int, int]],
    policy: Any,
    on_record: Callable[[dict[str, Any]], None],
    env_kwargs: Mapping[str, Any],
    concurrency: int,
    overrides: Mapping[str, Any] | None,
    address: str,
    num_workers: int | None = None,
) -> None:
    """Shard ``pairs`` over Ray actors; call ``on_record`` here for every record they stream back."""
    try:
        import ray
    except ImportError:
        raise RuntimeError('collecting on Ray needs the ray extra: pip install "gym-llm[ray]"') from None
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, log_to_driver=False)
    if not pairs:
        return
    if num_workers is None:
        num_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    num_workers = min(num_workers, len(pairs))
    per_worker = max(1, concurrency // num_workers)
    actor_class = ray.remote(num_cpus=1)(ShardWorker)
    actors = [actor_class.remote() for _ in range(num_workers)]
    streams = [
        actor.play.options(num_returns="streaming").remote(
            env_id, pairs[index::num_workers], policy, dict(env_kwargs), per_worker, overrides
        )
        for index, actor in enumerate(actors)
    ]

    async def drain(stream: Any) -> None:
        async for ref in stream:
            on_record(await ref)

    try:
        await asyncio.gather(*(drain(stream) for stream in streams))
    finally:
        for actor in actors:
            ray.kill(actor)
