"""Resume: check that an output file holds this run's rollouts, and settle it before new ones are added.

Rows whose fingerprint (env id, task digest, run digest) differs from the run's are refused with one
message. Rows that count as done: complete, unmasked (or masked with ``keep_failed``), and the first
of their (task, repeat) pair. Masked rows are dropped so that their pairs are played again; a later
duplicate of a pair is dropped too. When anything is dropped the file is rewritten atomically
(never losing a kept row); a torn last line is cut off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gym_llm import fastjson
from gym_llm.rollouts.errors import CollectError
from gym_llm.rollouts.metrics import MetricsAccumulator
from gym_llm.rollouts.output import cut_torn_tail, iter_lines, rewrite_keeping
from gym_llm.rollouts.plan import CollectPlan, PairSet

_ADVICE = "write to another --output, or pass --overwrite to replace the file"


@dataclass
class Resumed:
    """What an output file already holds for this run.

    Attributes:
        done: The pairs of this run already in the file.
        metrics: The counts of every row kept in the file (pairs outside this run included).
        kept: Rows kept.
        retried: Masked rows dropped so that their pairs are played again.
        duplicates: Rows dropped because their pair was already in the file.
    """

    done: PairSet
    metrics: MetricsAccumulator
    kept: int = 0
    retried: int = 0
    duplicates: int = 0


def resume_from(path: Path, plan: CollectPlan, *, keep_failed: bool = False) -> Resumed:
    """Check ``path`` against ``plan`` and settle it (see the module docstring).

    Returns:
        What the file holds for this run.

    Raises:
        CollectError: A row of another env, task or run, or a complete line that is not a record.
    """
    resumed = Resumed(PairSet(plan.num_pairs), MetricsAccumulator())
    dropped: set[int] = set()
    torn = False
    for number, line, complete in iter_lines(path):
        if not complete:
            torn = True
            break
        try:
            row = fastjson.loads(line)
        except fastjson.JSONDecodeError:
            raise CollectError(
                f"{path} line {number}: not valid JSON; cannot resume from this file"
            ) from None
        task_index, repeat_index = _check_row(path, number, row, plan)
        code = plan.code(task_index, repeat_index)
        if code is not None and row.get("mask_sample") and not keep_failed:
            resumed.retried += 1
            dropped.add(number)
        elif code is not None and not resumed.done.add(code):
            resumed.duplicates += 1
            dropped.add(number)
        else:
            resumed.kept += 1
            resumed.metrics.add(row)
    if dropped:
        rewrite_keeping(path, lambda number: number not in dropped)
    elif torn:
        cut_torn_tail(path)
    return resumed


def _check_row(path: Path, number: int, row: object, plan: CollectPlan) -> tuple[int, int]:
    where = f"{path} line {number}"
    if not isinstance(row, dict):
        raise CollectError(f"{where}: not a rollout record; cannot resume from this file")
    if row.get("env_id") != plan.env_id:
        raise CollectError(
            f"{path} holds rollouts of {row.get('env_id')!r} (line {number}), not {plan.env_id!r}: {_ADVICE}"
        )
    task_index, repeat_index = row.get("task_index"), row.get("repeat_index")
    if not isinstance(task_index, int) or not isinstance(repeat_index, int):
        raise CollectError(f"{where}: no task_index/repeat_index; cannot resume from this file")
    if "task_digest" not in row or "run_digest" not in row:
        raise CollectError(
            f"{where}: no run fingerprint (task_digest, run_digest), so its run is unknown: {_ADVICE}"
        )
    if not 0 <= task_index < len(plan.tasks) or row["task_digest"] != plan.task_digest(task_index):
        raise CollectError(
            f"{where}: task {task_index} is not task {task_index} of this run's tasks (another --input?): "
            f"{_ADVICE}"
        )
    if row["run_digest"] != plan.run_digest:
        raise CollectError(
            f"{where}: written with other settings (model, sampling fields, overrides or env arguments) "
            f"than this run's: {_ADVICE}"
        )
    return task_index, repeat_index
