"""``/aggregate_metrics``: NeMo Gym's ``AggregateMetrics`` over a list of verify responses.

The shape NeMo's collection writes to ``*_aggregate_metrics.json``:

- ``agent_metrics``: ``mean/<f>``, ``max/<f>``, ``min/<f>``, ``median/<f>``, ``std/<f>`` for every
  numeric top-level field ``f`` of the responses (booleans count as 0/1) and every numeric field
  of ``response.usage``, the task and rollout indices left out;
- ``key_metrics``: the ``mean/*`` entries;
- ``group_level_metrics``: the same statistics per task (``_ng_task_index``, 0 when absent), with
  ``num_rollouts`` and each rollout's numeric fields in ``rollout_infos``.

``std`` is the sample standard deviation; a single value has none, and reads 0 as in NeMo.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from gym_llm.cpu_pool import run_in_process

TASK_INDEX = "_ng_task_index"
ROLLOUT_INDEX = "_ng_rollout_index"
_STATISTICS = ("mean", "max", "min", "median", "std")
# beyond this many responses the statistics run in the CPU pool, off the event loop
_IN_PROCESS_ABOVE = 2_000


async def aggregate_metrics(verify_responses: list[dict[str, Any]]) -> dict[str, Any]:
    """NeMo's ``AggregateMetrics`` of ``verify_responses``.

    Args:
        verify_responses: Verify response objects (each a row with ``reward`` and its fields).

    Returns:
        ``{"group_level_metrics": [...], "agent_metrics": {...}, "key_metrics": {...}}``.
    """
    numeric = [numeric_fields(response) for response in verify_responses]
    if len(numeric) > _IN_PROCESS_ABOVE:
        return await run_in_process(summarize, numeric, timeout=120)
    return summarize(numeric)


def numeric_fields(response: Mapping[str, Any]) -> dict[str, float]:
    """The numeric fields of one verify response, ``response.usage``'s included (booleans as 0/1)."""
    values: dict[str, float] = {}
    usage = response.get("response", {}).get("usage") if isinstance(response.get("response"), dict) else None
    sources = [response, usage] if isinstance(usage, dict) else [response]
    for source in sources:
        for key, value in source.items():
            if key == "response":
                continue
            if isinstance(value, bool):
                values[key] = int(value)
            elif isinstance(value, (int, float)):
                values[key] = value
    values.setdefault(TASK_INDEX, 0)
    values.setdefault(ROLLOUT_INDEX, 0)
    return values


def summarize(rows: list[dict[str, float]]) -> dict[str, Any]:
    """The ``AggregateMetrics`` of rows of :func:`numeric_fields` (see the module docstring).

    Example:
        >>> summary = summarize([numeric_fields({"reward": 1.0}), numeric_fields({"reward": 0.0})])
        >>> summary["key_metrics"]
        {'mean/reward': 0.5}
    """
    if not rows:
        return {"group_level_metrics": [], "agent_metrics": {}, "key_metrics": {}}
    agent = _describe(rows, skip=(TASK_INDEX, ROLLOUT_INDEX))
    by_task: dict[Any, list[dict[str, float]]] = defaultdict(list)
    for row in rows:
        by_task[row[TASK_INDEX]].append(row)
    groups = []
    for task_index in sorted(by_task):
        task_rows = by_task[task_index]
        group = {TASK_INDEX: task_index, **_describe(task_rows, skip=(TASK_INDEX, ROLLOUT_INDEX))}
        group["num_rollouts"] = len(task_rows)
        group["rollout_infos"] = sorted(
            ({"rollout_id": f"{task_index}:{row[ROLLOUT_INDEX]}", **row} for row in task_rows),
            key=lambda info: info[ROLLOUT_INDEX],
        )
        groups.append(group)
    key_metrics = {name: value for name, value in agent.items() if name.startswith("mean/")}
    return {"group_level_metrics": groups, "agent_metrics": agent, "key_metrics": key_metrics}


def _describe(rows: list[dict[str, float]], skip: tuple[str, ...]) -> dict[str, float]:
    columns: dict[str, list[float]] = {}
    for row in rows:
        for key, value in row.items():
            if key not in skip:
                columns.setdefault(key, []).append(value)
    described: dict[str, float] = {}
    for stat in _STATISTICS:
        for key, values in columns.items():
            described[f"{stat}/{key}"] = _statistic(stat, values)
    return described


def _statistic(stat: str, values: list[float]) -> float:
    if stat == "mean":
        return statistics.fmean(values)
    if stat == "max":
        return max(values)
    if stat == "min":
        return min(values)
    if stat == "median":
        return statistics.median(values)
    return statistics.stdev(values) if len(values) > 1 else 0.0
