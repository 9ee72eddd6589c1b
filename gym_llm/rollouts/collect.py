"""The collection engine: many independent async episodes, bounded concurrency, durable output.

Each of ``concurrency`` workers owns one env instance and plays (task, repeat) pairs from a shared
queue: no lockstep, so a slow episode holds up nobody. Every finished rollout is one flushed JSON
line; ``resume=True`` skips the pairs already in the output file.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
from tqdm import tqdm

from gym_llm.policies import ReferencePolicy
from gym_llm.rollouts.episode import run_episode
from gym_llm.rollouts.metrics import ANSWER_FIELDS, summarize
from gym_llm.rollouts.output import RolloutWriter, load_finished
from gym_llm.sync import run_sync

_SLIM_FIELDS = ("reward", "mask_sample", "num_turns", "failure_kind", "reward_components", "task_index")


@dataclass
class CollectResult:
    """What a collection run did: new rollouts, skipped ones, time, metrics and where they are."""

    written: int
    skipped: int
    seconds: float
    summary: dict[str, Any]
    output: Path
    metrics_path: Path

    @property
    def rollouts_per_second(self) -> float:
        return self.written / self.seconds if self.seconds else 0.0


def metrics_path_for(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(f"{output.stem}_aggregate_metrics.json")


async def collect(
    env_id: str,
    output: str | Path,
    *,
    policy: Any = None,
    tasks: Any = None,
    env_kwargs: Mapping[str, Any] | None = None,
    limit: int | None = None,
    num_repeats: int = 1,
    concurrency: int = 32,
    resume: bool = False,
    overrides: Mapping[str, Any] | None = None,
    progress: bool = False,
    ray_address: str | None = None,
    ray_workers: int | None = None,
) -> CollectResult:
    """Collect verified rollouts of ``env_id`` into the JSONL file ``output``.

    Args:
        env_id: A registered env id, e.g. ``"llm/Weather-v0"``.
        output: The JSONL file to append to (and resume from).
        policy: An async policy (default: the reference policy, offline).
        tasks: Task rows (a list, a JSONL path, …); default: the env's bundled tasks.
        env_kwargs: Extra keyword arguments for ``gymnasium.make``.
        limit: Use only the first ``limit`` tasks.
        num_repeats: Rollouts per task.
        concurrency: Episodes in flight at once.
        resume: Skip (task_index, repeat_index) pairs already in ``output``; without it an
            existing ``output`` is replaced.
        overrides: Sampling fields that override the rows' (``temperature``, …).
        progress: Show a progress bar on stderr.
        ray_address: Run the episodes on Ray workers: ``"local"`` starts Ray on this machine,
            anything else is passed to ``ray.init(address=...)`` (e.g. ``"auto"``,
            ``"ray://head:10001"``). Records stream back to this process's one output file.
        ray_workers: Ray workers (actors) to shard the work over (default: the cluster's CPUs).
    """
    if num_repeats < 1 or concurrency < 1 or (limit is not None and limit < 1):
        raise ValueError("num_repeats, concurrency and limit must be at least 1")
    output = Path(output)
    kwargs = dict(env_kwargs or {})
    if tasks is not None:
        kwargs["tasks"] = tasks
    try:
        first = gymnasium.make(env_id, disable_env_checker=True, **kwargs).unwrapped
    except TypeError as exc:  # an argument the env does not take
        raise ValueError(f"{env_id}: bad env arguments {sorted(kwargs)}: {exc}") from None
    kwargs["tasks"] = first.tasks  # validated once, shared by every worker's env
    num_tasks = min(limit, len(first.tasks)) if limit else len(first.tasks)

    previous = load_finished(output) if resume else []
    if not resume and output.exists():
        output.unlink()
    done = {(r.get("task_index"), r.get("repeat_index")) for r in previous}
    todo = [(t, r) for t in range(num_tasks) for r in range(num_repeats) if (t, r) not in done]
    slim = [_slim(r) for r in previous]

    policy = policy if policy is not None else ReferencePolicy()
    writer = RolloutWriter(output)
    bar = tqdm(total=len(todo), disable=not progress, unit="rollout", dynamic_ncols=True)
    rewards: list[float] = []

    def on_record(record: dict[str, Any]) -> None:
        writer.write(record)
        slim.append(_slim(record))
        rewards.append(record["reward"])
        bar.update()
        if len(rewards) % 64 == 0:
            bar.set_postfix(mean_reward=f"{sum(rewards) / len(rewards):.3f}", refresh=False)

    start = time.perf_counter()
    try:
        if ray_address is None:
            await play_pairs(env_id, todo, policy, on_record, kwargs, concurrency, overrides, first_env=first)
        else:
            from gym_llm.rollouts.ray_backend import play_pairs_on_ray

            first.close()
            await play_pairs_on_ray(
                env_id, todo, policy, on_record, kwargs, concurrency, overrides, ray_address, ray_workers
            )
    finally:
        seconds = time.perf_counter() - start
        writer.close()
        bar.close()
        if hasattr(policy, "aclose"):
            await policy.aclose()

    summary = summarize(slim)
    summary["rollouts_per_second"] = round(len(todo) / seconds, 2) if seconds else 0.0
    summary["env_id"] = env_id
    metrics_path = metrics_path_for(output)
    metrics_path.write_text(json.dumps(summary, indent=2) + "\n")
    return CollectResult(len(todo), len(previous), seconds, summary, output, metrics_path)


async def play_pairs(
    env_id: str,
    pairs: list[tuple[int, int]],
    policy: Any,
    on_record: Callable[[dict[str, Any]], None],
    env_kwargs: Mapping[str, Any],
    concurrency: int,
    overrides: Mapping[str, Any] | None = None,
    *,
    first_env: Any = None,
) -> None:
    """Play every (task_index, repeat_index) pair with ``concurrency`` workers, one env each.

    ``on_record`` gets each rollout record as it finishes. The envs are closed at the end; the
    policy is left open for the caller.
    """
    queue: Iterator[tuple[int, int]] = iter(pairs)
    count = max(1, min(concurrency, len(pairs)))
    envs = [first_env] if first_env is not None else []
    envs += [
        gymnasium.make(env_id, disable_env_checker=True, **env_kwargs).unwrapped
        for _ in range(count - len(envs))
    ]

    async def worker(env: Any) -> None:
        bound = policy.for_env(env) if hasattr(policy, "for_env") else policy
        for task_index, repeat_index in queue:
            on_record(
                await run_episode(
                    env,
                    bound,
                    task_index=task_index,
                    repeat_index=repeat_index,
                    env_id=env_id,
                    overrides=overrides,
                )
            )

    try:
        await asyncio.gather(*(worker(env) for env in envs))
    finally:
        for env in envs:
            env.close()


def collect_sync(env_id: str, output: str | Path, **kwargs: Any) -> CollectResult:
    """:func:`collect` for synchronous code."""
    return run_sync(collect(env_id, output, **kwargs))


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    """The fields the summary needs, so a long run does not hold every transcript in memory."""
    slim = {key: record.get(key) for key in _SLIM_FIELDS}
    for field in ANSWER_FIELDS:
        if field in record:
            slim[field] = record[field]
    return slim
