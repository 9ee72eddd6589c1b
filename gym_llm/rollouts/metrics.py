"""Summary metrics over rollout records, kept as running counters: memory does not grow with run length.

Mean reward, mean turns and reward-component means are over unmasked rollouts; failure kinds count
every rollout. pass@k and majority@k need each task's repeats together, so the accumulator keeps a
few counters per task (rollouts, correct ones, votes per distinct answer), never the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from math import comb
from typing import Any

# answer fields envs put in their records, in order of preference, for majority voting
ANSWER_FIELDS = ("extracted_answer", "parsed_answer")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct (Chen et al., 2021).

    Example:
        >>> pass_at_k(4, 1, 2)
        0.5
    """
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class _TaskCounts:
    """One task's unmasked rollouts: how many, how many correct, and the votes for each answer."""

    __slots__ = ("answers", "correct", "n", "with_field")

    def __init__(self) -> None:
        self.n = 0
        self.correct = 0
        self.with_field = [0] * len(ANSWER_FIELDS)  # rollouts that carry each answer field
        # per answer field: answer text -> [votes, 1 if some rollout with that answer was rewarded]
        self.answers: list[dict[str, list[int]]] = [{} for _ in ANSWER_FIELDS]

    def add(self, record: Mapping[str, Any], correct: bool) -> None:
        self.n += 1
        self.correct += correct
        for index, field in enumerate(ANSWER_FIELDS):
            if field in record:
                self.with_field[index] += 1
                entry = self.answers[index].setdefault(str(record[field]), [0, 0])
                entry[0] += 1
                entry[1] |= correct

    def merge(self, other: _TaskCounts) -> None:
        self.n += other.n
        self.correct += other.correct
        for index in range(len(ANSWER_FIELDS)):
            self.with_field[index] += other.with_field[index]
            mine = self.answers[index]
            for answer, (votes, rewarded) in other.answers[index].items():
                entry = mine.setdefault(answer, [0, 0])
                entry[0] += votes
                entry[1] |= rewarded

    def majority_correct(self) -> float | None:
        """1.0 if the most common answer was rewarded; None without answers.

        A tie goes to the answer whose text sorts first, so the result does not depend on the
        order the rollouts finished in.
        """
        for index in range(len(ANSWER_FIELDS)):
            if self.with_field[index] == self.n:
                votes = self.answers[index]
                winner = min(votes, key=lambda answer: (-votes[answer][0], answer))
                return float(votes[winner][1])
        return None


class MetricsAccumulator:
    """Running counters for :meth:`summary`; add records one at a time or merge another accumulator.

    Example:
        >>> metrics = MetricsAccumulator()
        >>> metrics.add({"task_index": 0, "reward": 1.0, "num_turns": 2})
        >>> metrics.add({"task_index": 0, "reward": 0.0, "num_turns": 2, "mask_sample": True,
        ...              "failure_kind": "model_error"})
        >>> metrics.summary()["mean_reward"], metrics.summary()["num_masked"]
        (1.0, 1)
    """

    def __init__(self) -> None:
        self.num_rollouts = 0
        self.num_masked = 0
        self.reward_sum = 0.0
        self.turns_sum = 0.0
        self.failure_kinds: dict[str, int] = {}
        self.component_sums: dict[str, float] = {}
        self.component_counts: dict[str, int] = {}
        self.tasks: dict[Any, _TaskCounts] = {}

    @property
    def num_used(self) -> int:
        """Rollouts that count (not masked)."""
        return self.num_rollouts - self.num_masked

    @property
    def mean_reward(self) -> float:
        """Mean reward over the unmasked rollouts so far (0.0 before any)."""
        return self.reward_sum / self.num_used if self.num_used else 0.0

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one rollout record."""
        self.num_rollouts += 1
        kind = record.get("failure_kind")
        if kind:
            self.failure_kinds[kind] = self.failure_kinds.get(kind, 0) + 1
        if record.get("mask_sample"):
            self.num_masked += 1
            return
        reward = record.get("reward", 0.0)
        self.reward_sum += reward
        self.turns_sum += record.get("num_turns", 0)
        for name, value in (record.get("reward_components") or {}).items():
            self.component_sums[name] = self.component_sums.get(name, 0.0) + float(value)
            self.component_counts[name] = self.component_counts.get(name, 0) + 1
        task = record.get("task_index")
        counts = self.tasks.get(task)
        if counts is None:
            counts = self.tasks[task] = _TaskCounts()
        counts.add(record, reward >= 1.0)

    def merge(self, other: MetricsAccumulator) -> None:
        """Add ``other``'s counts to these (e.g. a Ray worker's batch)."""
        self.num_rollouts += other.num_rollouts
        self.num_masked += other.num_masked
        self.reward_sum += other.reward_sum
        self.turns_sum += other.turns_sum
        for kind, count in other.failure_kinds.items():
            self.failure_kinds[kind] = self.failure_kinds.get(kind, 0) + count
        for name, total in other.component_sums.items():
            self.component_sums[name] = self.component_sums.get(name, 0.0) + total
            self.component_counts[name] = self.component_counts.get(name, 0) + other.component_counts[name]
        for task, theirs in other.tasks.items():
            mine = self.tasks.get(task)
            if mine is None:
                self.tasks[task] = theirs
            else:
                mine.merge(theirs)

    def summary(self) -> dict[str, Any]:
        """The aggregate metrics.

        Returns:
            ``num_rollouts``, ``num_masked``, ``mean_reward`` and ``mean_num_turns`` (unmasked),
            ``failure_kinds`` (kind -> count, masked ones included), ``mean_reward_components``,
            and with more than one unmasked repeat of every task: ``pass@k`` and ``pass@1`` (k =
            the smallest repeat count of any task) and ``majority@k`` when every rollout carries an
            answer field (``extracted_answer``/``parsed_answer``).
        """
        used = self.num_used
        summary: dict[str, Any] = {
            "num_rollouts": self.num_rollouts,
            "num_masked": self.num_masked,
            "mean_reward": self.reward_sum / used if used else 0.0,
            "mean_num_turns": self.turns_sum / used if used else 0.0,
            "failure_kinds": dict(self.failure_kinds),
            "mean_reward_components": {
                name: self.component_sums[name] / self.component_counts[name]
                for name in sorted(self.component_sums)
            },
        }
        groups = list(self.tasks.values())
        k = min((g.n for g in groups), default=0)
        if k > 1:
            summary[f"pass@{k}"] = _mean(pass_at_k(g.n, g.correct, k) for g in groups)
            summary["pass@1"] = _mean(pass_at_k(g.n, g.correct, 1) for g in groups)
            majority = [g.majority_correct() for g in groups]
            if all(m is not None for m in majority):
                summary[f"majority@{k}"] = _mean(majority)  # type: ignore[arg-type]
        return summary


def summarize(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Aggregate metrics of ``records`` (see :meth:`MetricsAccumulator.summary`).

    Returns:
        The summary dict.
    """
    metrics = MetricsAccumulator()
    for record in records:
        metrics.add(record)
    return metrics.summary()


def _mean(values: Iterable[float]) -> float:
    total, count = 0.0, 0
    for value in values:
        total += value
        count += 1
    return total / count if count else 0.0
