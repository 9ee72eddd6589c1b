"""Collection across machines on Ray: workers play pairs of one plan; the driver writes the one file.

Needs the ``ray`` extra (``pip install -e ".[ray]"`` in a gym_llm checkout, as the README says).
The plan (policy and validated task rows included) is pickled to the workers once, so a policy must
be picklable before first use (the bundled ones are).

The driver hands each worker chunks of pair codes and remembers every worker's unfinished codes.
A worker plays its codes with its share of the global concurrency and streams back batches: the
codes finished, their records as encoded JSON lines, and their metric counts; so the driver's work
is per batch, not per record. A worker that is lost (its process or node died) costs time only:
its unfinished codes go back to the queue for the others, and one line is logged. If every worker
is lost the run stops with a :class:`~gym_llm.rollouts.errors.CollectError`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from gym_llm import fastjson
from gym_llm.rollouts.errors import CollectError
from gym_llm.rollouts.metrics import MetricsAccumulator
from gym_llm.rollouts.plan import CollectPlan
from gym_llm.rollouts.sink import RolloutSink
from gym_llm.rollouts.workers import play_one, run_all

log = logging.getLogger(__name__)

BATCH_RECORDS = 512  # a worker sends a batch when it holds this many records ...
BATCH_SECONDS = 0.25  # ... or at least this often while it holds any
MIN_CHUNK = 64  # pair codes handed to a worker at once, at least

# the install command the error names; the README names the same one
RAY_INSTALL = 'pip install -e ".[ray]"'


class ShardWorker:
    """A Ray actor: plays the pair codes fed to it and streams back batches of finished records.

    Args:
        plan: The run.
        concurrency: Episodes this worker plays at once (its share of the run's concurrency).
    """

    def __init__(self, plan: CollectPlan, concurrency: int) -> None:
        import gym_llm  # noqa: F401 - registers the envs in this worker process

        self.plan = plan
        self.concurrency = concurrency
        self.codes: asyncio.Queue[int | None] = asyncio.Queue()

    # async, so that Ray runs them in the actor's event loop, the queue's own
    async def feed(self, codes: list[int]) -> None:
        """Queue more pair codes."""
        for code in codes:
            self.codes.put_nowait(code)

    async def close_input(self) -> None:
        """No more codes: play what is queued, then end the stream."""
        for _ in range(self.concurrency):
            self.codes.put_nowait(None)

    async def play(self) -> AsyncIterator[tuple[list[int], bytes, MetricsAccumulator]]:
        """Play queued codes until :meth:`close_input`.

        Yields:
            ``(codes, lines, metrics)``: the pair codes finished, their records as JSON lines (one
            bytes object), and the records' metric counts.
        """
        plan = self.plan
        envs = [plan.make_env() for _ in range(self.concurrency)]
        codes: list[int] = []
        lines: list[bytes] = []
        metrics = MetricsAccumulator()
        full = asyncio.Event()

        async def player(env: Any) -> None:
            policy = plan.policy.bind(env)
            while (code := await self.codes.get()) is not None:
                record = await play_one(plan, env, policy, code)
                codes.append(code)
                lines.append(fastjson.dumps_line(record))
                metrics.add(record)
                if len(codes) >= BATCH_RECORDS:
                    full.set()

        players = asyncio.ensure_future(run_all([player(env) for env in envs]))
        try:
            while True:
                finished = players.done()
                if not finished:
                    try:
                        await asyncio.wait_for(full.wait(), BATCH_SECONDS)
                    except asyncio.TimeoutError:
                        pass
                    full.clear()
                if codes:
                    # new lists before the yield: players go on adding while the generator waits there
                    batch = codes, b"".join(lines), metrics
                    codes, lines, metrics = [], [], MetricsAccumulator()
                    yield batch
                if finished:
                    players.result()  # raise what went wrong in this worker
                    return
        finally:
            players.cancel()
            for env in envs:
                env.close()
            await plan.policy.aclose()


async def play_on_ray(
    plan: CollectPlan,
    codes: Iterator[int],
    todo: int,
    sink: RolloutSink,
    address: str,
    num_workers: int | None = None,
) -> None:
    """Play ``todo`` pair codes drawn lazily from ``codes`` on Ray workers, writing through ``sink`` here.

    Raises:
        CollectError: Every worker was lost.
        RuntimeError: Ray is not installed.
    """
    try:
        import ray
    except ImportError:
        raise RuntimeError(
            f"collecting on Ray needs the ray extra: {RAY_INSTALL} (in the gym_llm checkout)"
        ) from None
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, log_to_driver=False)
    if not todo:
        return
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    if num_workers is None:
        num_workers = max(1, int(cpus))
    # the bound is global: never more workers than episodes allowed in flight, shares summing to it
    num_workers = max(1, min(num_workers, plan.concurrency, todo))
    shares = [
        plan.concurrency // num_workers + (i < plan.concurrency % num_workers) for i in range(num_workers)
    ]
    # a CPU each, or a fair part of the cluster's when asked for more workers than it has CPUs
    # (whole-CPU actors beyond the cluster's CPUs would wait for ever to be placed)
    await _Driver(ray, plan, codes, sink, shares, min(1.0, cpus / num_workers)).run()


class _Driver:
    """Feeds the workers, writes their batches, re-queues the codes of lost workers."""

    def __init__(
        self,
        ray: Any,
        plan: CollectPlan,
        codes: Iterator[int],
        sink: RolloutSink,
        shares: list[int],
        cpus_per_worker: float,
    ) -> None:
        self.ray = ray
        self.sink = sink
        self.codes = codes
        self.requeued: collections.deque[int] = collections.deque()
        self.exhausted = False
        self.closed = False
        plan_ref = ray.put(plan)
        actor_class = ray.remote(num_cpus=cpus_per_worker)(ShardWorker)
        self.actors = [actor_class.remote(plan_ref, share) for share in shares]
        self.chunks = [max(MIN_CHUNK, 4 * share) for share in shares]
        self.outstanding: list[set[int]] = [set() for _ in shares]
        self.alive = [True] * len(shares)

    async def run(self) -> None:
        streams = [actor.play.options(num_returns="streaming").remote() for actor in self.actors]
        for index in range(len(self.actors)):
            self._refill(index)
        try:
            await run_all([self._drain(index, stream) for index, stream in enumerate(streams)])
        finally:
            for actor in self.actors:
                self.ray.kill(actor)
        if not any(self.alive):
            raise CollectError(
                f"every Ray worker was lost ({len(self.actors)} of {len(self.actors)}) after "
                f"{self.sink.written} rollouts were written; run the same command with --resume "
                "(resume=True) to play the rest"
            )

    async def _drain(self, index: int, stream: Any) -> None:
        from ray import exceptions

        try:
            async for ref in stream:
                codes, lines, metrics = await ref
                self.outstanding[index].difference_update(codes)
                self.sink.add_batch(lines, len(codes), metrics)
                self._refill(index)
        except (exceptions.RayActorError, exceptions.WorkerCrashedError) as exc:
            self._lose(index, exc)
        except exceptions.RayTaskError as exc:  # the worker's own error: show it, not Ray's wrapping
            cause = exc.cause if isinstance(exc.cause, BaseException) else RuntimeError(str(exc))
            raise cause from None

    def _take(self, count: int) -> list[int]:
        taken: list[int] = []
        while self.requeued and len(taken) < count:
            taken.append(self.requeued.popleft())
        while not self.exhausted and len(taken) < count:
            code = next(self.codes, None)
            if code is None:
                self.exhausted = True
            else:
                taken.append(code)
        return taken

    def _refill(self, index: int) -> None:
        """Keep a worker's queue between one and two chunks; close every input once all is played."""
        if self.alive[index] and len(self.outstanding[index]) <= self.chunks[index]:
            more = self._take(self.chunks[index])
            if more:
                self.outstanding[index].update(more)
                self.actors[index].feed.remote(more)
        # inputs stay open until every code is finished: a late loss re-queues codes to the others
        if not self.closed and self.exhausted and not self.requeued and not any(self.outstanding):
            self.closed = True
            for actor, alive in zip(self.actors, self.alive):  # noqa: B905 - same length
                if alive:
                    actor.close_input.remote()

    def _lose(self, index: int, exc: BaseException) -> None:
        self.alive[index] = False
        unfinished = sorted(self.outstanding[index])
        self.outstanding[index] = set()
        self.requeued.extend(unfinished)
        survivors = [i for i, alive in enumerate(self.alive) if alive]
        log.warning(
            "Ray worker %d of %d was lost (%s); its %d unfinished rollouts go back to the queue "
            "for the %d other workers",
            index + 1, len(self.actors), type(exc).__name__, len(unfinished), len(survivors),
        )  # fmt: skip
        for other in survivors:
            self._refill(other)
