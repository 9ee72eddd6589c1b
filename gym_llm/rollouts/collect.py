"""The collection engine: many independent async episodes, bounded concurrency, durable output.

:func:`acollect` builds one :class:`~gym_llm.rollouts.plan.CollectPlan`, settles the output file
(refuse, replace, or resume it), and plays the pairs still to do, here or on Ray workers. Every
finished rollout is one flushed JSON line. :func:`collect` is the same for synchronous code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium

from gym_llm.policies.base import as_policy
from gym_llm.policies.reference import ReferencePolicy
from gym_llm.rollouts.errors import CollectError
from gym_llm.rollouts.metrics import MetricsAccumulator
from gym_llm.rollouts.output import RolloutWriter
from gym_llm.rollouts.plan import CollectPlan, PairSet
from gym_llm.rollouts.progress import Progress
from gym_llm.rollouts.resume import Resumed, resume_from
from gym_llm.rollouts.sink import RolloutSink
from gym_llm.rollouts.workers import play_pairs
from gym_llm.sync import run_sync


@dataclass
class CollectResult:
    """What a collection run did.

    Attributes:
        written: Rollouts written by this run.
        skipped: Pairs of this run already in the file (resume).
        seconds: Wall time of the playing.
        summary: The aggregate metrics of every row in the file (also in ``metrics_path``).
        output: The JSONL file.
        metrics_path: The metrics file beside it.
        retried: Masked rows of an earlier run dropped so that their pairs were played again.
    """

    written: int
    skipped: int
    seconds: float
    summary: dict[str, Any]
    output: Path
    metrics_path: Path
    retried: int = 0

    @property
    def rollouts_per_second(self) -> float:
        """Rollouts written per second of this run."""
        return self.written / self.seconds if self.seconds else 0.0


def metrics_path_for(output: str | Path) -> Path:
    """``<stem>_aggregate_metrics.json`` beside ``output`` (NeMo Gym's name for it).

    Example:
        >>> metrics_path_for("out/rollouts.jsonl").as_posix()
        'out/rollouts_aggregate_metrics.json'
    """
    output = Path(output)
    return output.with_name(f"{output.stem}_aggregate_metrics.json")


async def acollect(
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
    overwrite: bool = False,
    keep_failed: bool = False,
    overrides: Mapping[str, Any] | None = None,
    progress: bool = False,
    progress_interval: float = 10.0,
    fail_fast: int = 8,
    ray_address: str | None = None,
    ray_workers: int | None = None,
) -> CollectResult:
    """Collect verified rollouts of ``env_id`` into the JSONL file ``output``.

    Args:
        env_id: A registered env id, e.g. ``"llm/Weather-v0"``.
        output: The JSONL file to write (and resume from).
        policy: A :class:`~gym_llm.policies.Policy` or an async callable (default: the reference
            policy, offline). It is closed at the end (a policy closes only what it opened).
        tasks: Task rows (a list, a JSONL path, …); default: the env's bundled tasks.
        env_kwargs: Extra keyword arguments for ``gymnasium.make``.
        limit: Use only the first ``limit`` tasks.
        num_repeats: Rollouts per task.
        concurrency: Episodes in flight at once (over all Ray workers too).
        resume: Go on with an existing ``output`` written by the same run (same env, task rows,
            model and sampling settings; anything else is refused): its pairs are skipped, its
            masked rollouts played again. More tasks or repeats than before are fine.
        overwrite: Replace an existing ``output``. Without ``resume`` or ``overwrite`` an existing
            non-empty file is an error.
        keep_failed: With ``resume``, keep masked rollouts instead of playing them again.
        overrides: Sampling fields that override the rows' (``temperature``, …).
        progress: Show progress on stderr: a bar on a terminal, else a line every
            ``progress_interval`` seconds.
        progress_interval: Seconds between progress lines.
        fail_fast: Stop with an error, before writing them, when the first ``fail_fast`` rollouts
            all fail to reach the model (0: never).
        ray_address: Run the episodes on Ray workers: ``"local"`` starts Ray on this machine,
            anything else is passed to ``ray.init(address=...)`` (e.g. ``"auto"``,
            ``"ray://head:10001"``). Records stream back to this process's one output file.
        ray_workers: Ray workers (actors) to spread the work over (default: the cluster's CPUs).

    Returns:
        What was done (:class:`CollectResult`); the metrics are also written to
        :func:`metrics_path_for` ``(output)``.

    Raises:
        ValueError: Bad arguments or env arguments.
        TaskError: Bad task rows.
        CollectError: The output exists (neither resume nor overwrite), holds another run's rows,
            or the run had to stop (model server unreachable, every Ray worker lost); its
            ``result`` tells what was written.
    """
    if num_repeats < 1 or concurrency < 1 or (limit is not None and limit < 1):
        raise ValueError("num_repeats, concurrency and limit must be at least 1")
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    output = Path(output)
    policy = as_policy(policy if policy is not None else ReferencePolicy())
    kwargs = dict(env_kwargs or {})
    if tasks is not None:
        kwargs["tasks"] = tasks
    try:
        first: Any = gymnasium.make(env_id, disable_env_checker=True, **kwargs).unwrapped
    except TypeError as exc:  # an argument the env does not take
        raise ValueError(f"{env_id}: bad env arguments {sorted(kwargs)}: {exc}") from None
    kwargs["tasks"] = first.tasks  # validated once, shared by every worker's env
    plan = CollectPlan.create(
        env_id,
        kwargs,
        num_tasks=min(limit, len(first.tasks)) if limit else len(first.tasks),
        num_repeats=num_repeats,
        concurrency=concurrency,
        policy=policy,
        overrides=overrides,
    )
    try:
        resumed = _settle_output(output, plan, resume=resume, overwrite=overwrite, keep_failed=keep_failed)
    except BaseException:
        first.close()
        raise
    return await _play(
        plan, first, output, resumed, progress, progress_interval, fail_fast, ray_address, ray_workers
    )


def collect(env_id: str, output: str | Path, **kwargs: Any) -> CollectResult:
    """:func:`acollect` for synchronous code (also inside a running event loop, e.g. Jupyter).

    Returns:
        What was done (:class:`CollectResult`).

    Example:
        >>> import pathlib, tempfile
        >>> output = pathlib.Path(tempfile.mkdtemp()) / "rollouts.jsonl"
        >>> result = collect("llm/Weather-v0", output, num_repeats=2)  # the reference policy, offline
        >>> result.written, result.summary["mean_reward"], result.summary["pass@2"]
        (12, 1.0, 1.0)
    """
    return run_sync(acollect(env_id, output, **kwargs))


def _settle_output(
    output: Path, plan: CollectPlan, *, resume: bool, overwrite: bool, keep_failed: bool
) -> Resumed:
    """Refuse, replace or resume an existing output file; what it holds for this run."""
    exists = output.is_file() and output.stat().st_size > 0
    if exists and resume:
        return resume_from(output, plan, keep_failed=keep_failed)
    if exists and not overwrite:
        raise CollectError(
            f"{output} already exists: pass --resume (resume=True) to go on with it, or --overwrite "
            "(overwrite=True) to replace it"
        )
    if output.is_file():
        output.unlink()
    return Resumed(PairSet(plan.num_pairs), MetricsAccumulator())


async def _play(
    plan: CollectPlan,
    first: Any,
    output: Path,
    resumed: Resumed,
    show_progress: bool,
    progress_interval: float,
    fail_fast: int,
    ray_address: str | None,
    ray_workers: int | None,
) -> CollectResult:
    todo = plan.num_pairs - len(resumed.done)
    existed = output.exists()
    writer = RolloutWriter(output)
    progress = Progress(todo, resumed.metrics, enabled=show_progress, interval=progress_interval)
    sink = RolloutSink(writer, resumed.metrics, progress, fail_fast)
    start = time.perf_counter()
    error: CollectError | None = None
    try:
        if ray_address is None:
            count = max(0, min(plan.concurrency, todo))
            envs = [first, *(plan.make_env() for _ in range(count - 1))] if count else []
            if not count:
                first.close()
            try:
                await play_pairs(plan, resumed.done.missing(), sink.add_record, envs=envs)
            finally:
                for env in envs:
                    env.close()
        else:
            from gym_llm.rollouts.ray_backend import play_on_ray

            first.close()
            await play_on_ray(plan, resumed.done.missing(), todo, sink, ray_address, ray_workers)
        sink.finish()
    except CollectError as exc:
        error = exc
    finally:
        seconds = time.perf_counter() - start
        writer.close()
        progress.close()
        await plan.policy.aclose()
    if error is not None and not resumed.kept and not sink.written:
        if not existed:
            output.unlink(missing_ok=True)
        raise error
    summary = resumed.metrics.summary()
    summary["rollouts_per_second"] = round(sink.written / seconds, 2) if seconds else 0.0
    summary["env_id"] = plan.env_id
    summary["run_digest"] = plan.run_digest
    metrics_path = metrics_path_for(output)
    metrics_path.write_text(json.dumps(summary, indent=2) + "\n")
    result = CollectResult(
        sink.written, len(resumed.done), seconds, summary, output, metrics_path, resumed.retried
    )
    if error is not None:
        error.result = result
        raise error
    return result
