"""Summary metrics over rollout records: mean reward, pass@k, majority@k, failure kinds."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from math import comb
from typing import Any

# answer fields envs put in their records, in order of preference, for majority voting
ANSWER_FIELDS = ("extracted_answer", "parsed_answer")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def summarize(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate metrics: counts, mean reward over unmasked rollouts, component means, pass@k
    and majority@k over repeats (k = the smallest repeat count of any task), failure kinds."""
    records = list(records)
    used = [r for r in records if not r.get("mask_sample")]
    summary: dict[str, Any] = {
        "num_rollouts": len(records),
        "num_masked": len(records) - len(used),
        "mean_reward": _mean(r.get("reward", 0.0) for r in used),
        "mean_num_turns": _mean(r.get("num_turns", 0) for r in used),
        "failure_kinds": dict(Counter(r["failure_kind"] for r in records if r.get("failure_kind"))),
    }
    components: dict[str, list[float]] = defaultdict(list)
    for record in used:
        for name, value in (record.get("reward_components") or {}).items():
            components[name].append(float(value))
    summary["mean_reward_components"] = {name: _mean(values) for name, values in sorted(components.items())}

    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for record in used:
        groups[record.get("task_index")].append(record)
    k = min((len(g) for g in groups.values()), default=0)
    if k > 1:
        summary[f"pass@{k}"] = _mean(
            pass_at_k(len(g), sum(r.get("reward", 0.0) >= 1.0 for r in g), k) for g in groups.values()
        )
        summary["pass@1"] = _mean(
            pass_at_k(len(g), sum(r.get("reward", 0.0) >= 1.0 for r in g), 1) for g in groups.values()
        )
        majority = [_majority_correct(g) for g in groups.values()]
        if all(m is not None for m in majority):
            summary[f"majority@{k}"] = _mean(majority)
    return summary


def _majority_correct(group: list[dict[str, Any]]) -> float | None:
    """1.0 if the most common answer of a task's repeats was rewarded, None without answers."""
    field = next((f for f in ANSWER_FIELDS if all(f in r for r in group)), None)
    if field is None:
        return None
    votes = Counter(str(r[field]) for r in group)
    winner = votes.most_common(1)[0][0]
    return float(any(str(r[field]) == winner and r.get("reward", 0.0) >= 1.0 for r in group))


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0
