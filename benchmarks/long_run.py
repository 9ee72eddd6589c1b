"""Memory and throughput of one long collection: RSS and rollouts/s as the run goes on.

One ``gym_llm.rollouts.acollect`` run of Weather with the reference policy (offline, so the engine
and the env are all that runs), ``--sizes`` checkpoints (default 10k, 100k, 1M rollouts). At each
checkpoint: the process's resident memory and the rate over the last stretch. Then the two
figures the engine aims at: RSS at the last checkpoint against the first (within 10%), and the rate
of the last 100k rollouts against the first 100k (at least 95%).

Run: ``python benchmarks/long_run.py [--sizes 10000,100000,1000000] [--concurrency 64]``
(the 1M run takes a few minutes and writes ~1.5 GB to a temporary directory, removed at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gym_llm  # noqa: F401 - registers the envs
from gym_llm.policies import Policy, ReferencePolicy
from gym_llm.rollouts import acollect

ENV_ID = "llm/Weather-v0"
CALLS_PER_ROLLOUT = 2  # Weather's reference solution: a get_weather call, then the answer
WINDOW = 100_000  # the stretch whose rate is compared at the start and at the end


def rss_mib() -> float:
    """Resident memory of this process now (``/proc/self/statm``), MiB."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return pages * 4096 / 2**20


class Clock:
    """Counts model calls of every bound copy and notes (time, RSS) when a checkpoint is passed."""

    def __init__(self, checkpoints: list[int]) -> None:
        self.calls = 0
        total = max(checkpoints)
        windows = {WINDOW, total - WINDOW} if total >= 2 * WINDOW else set()
        self.marks = sorted({*checkpoints, *windows})
        self.next = 0
        self.seen: dict[int, tuple[float, float]] = {}
        self.start = time.perf_counter()

    def tick(self) -> None:
        self.calls += 1
        if self.next < len(self.marks) and self.calls == self.marks[self.next] * CALLS_PER_ROLLOUT:
            # the rollout is one call from finishing: close enough at these sizes
            self.seen[self.marks[self.next]] = (time.perf_counter() - self.start, rss_mib())
            self.next += 1


class TimedReference(Policy):
    """The reference policy, counting its calls on a shared :class:`Clock`."""

    def __init__(self, clock: Clock, inner: Policy | None = None) -> None:
        self.clock = clock
        self.inner = inner or ReferencePolicy()

    def bind(self, env: Any) -> Policy:
        return TimedReference(self.clock, self.inner.bind(env))

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        self.clock.tick()
        return await self.inner(observation, params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10000,100000,1000000", help="checkpoints, rollouts (comma-separated)"
    )
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    total = sizes[-1]
    clock = Clock(sizes)
    gc.collect()
    start_rss = rss_mib()
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "rollouts.jsonl"
        tasks = 6  # Weather's bundled rows; repeats make up the size
        result = asyncio.run(
            acollect(
                ENV_ID,
                output,
                policy=TimedReference(clock),
                num_repeats=-(-total // tasks),
                concurrency=args.concurrency,
            )
        )
        size_gb = output.stat().st_size / 1e9
    print(f"{ENV_ID}, reference policy, concurrency {args.concurrency}: {result.written:,} rollouts in "
          f"{result.seconds:.1f} s ({result.rollouts_per_second:,.0f}/s), {size_gb:.2f} GB written; "
          f"RSS before the run {start_rss:.0f} MiB")  # fmt: skip
    print(f"{'rollouts':>10} {'RSS MiB':>8} {'rollouts/s (since previous)':>28}")
    previous = (0, 0.0)
    for size in sizes:
        seconds, rss = clock.seen[size]
        rate = (size - previous[0]) / (seconds - previous[1])
        print(f"{size:>10,} {rss:>8.1f} {rate:>28,.0f}")
        previous = (size, seconds)
    first_rss, last_rss = clock.seen[sizes[0]][1], clock.seen[sizes[-1]][1]
    print(f"RSS at {sizes[-1]:,} / RSS at {sizes[0]:,}: {last_rss / first_rss:.3f} (target <= 1.10)")
    if total >= 2 * WINDOW:
        first_rate = WINDOW / clock.seen[WINDOW][0]
        before_last = clock.seen[total - WINDOW][0]
        last_rate = WINDOW / (clock.seen[total][0] - before_last)
        print(f"rate of the last {WINDOW:,} / first {WINDOW:,}: {last_rate:,.0f} / {first_rate:,.0f} = "
              f"{last_rate / first_rate:.3f} (target >= 0.95)")  # fmt: skip


if __name__ == "__main__":
    main()
