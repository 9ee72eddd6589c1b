"""Per-env reward metrics of a batch, under fixed names, for a trainer's logger."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any


class RewardLog:
    """Collects the final ``info`` of finished episodes and averages it per env.

    Metric names: ``gym_llm/<env id>/<component>`` for each reward component (the env's fixed
    ``reward_components``), plus ``gym_llm/<env id>/tool_errors`` (failed tool calls per episode)
    and ``gym_llm/<env id>/masked`` (share of rollouts kept out of training).

    Example:
        >>> log = RewardLog()
        >>> log.add("llm/X-v0", {"reward_components": {"format": 1.0}, "tool_errors": 2})
        >>> log.add("llm/X-v0", {"reward_components": {"format": 0.0}, "tool_errors": 0})
        >>> log.means()["gym_llm/llm/X-v0/format"], log.means()["gym_llm/llm/X-v0/tool_errors"]
        (0.5, 1.0)
    """

    def __init__(self) -> None:
        self._sums: dict[str, float] = defaultdict(float)
        self._counts: dict[str, int] = defaultdict(int)

    def add(self, env_id: str, info: Mapping[str, Any]) -> None:
        """Count one finished episode's ``info`` (as a final ``step``/``finish`` returns it)."""
        prefix = f"gym_llm/{env_id}/"
        values = {**(info.get("reward_components") or {})}
        values["tool_errors"] = info.get("tool_errors") or 0
        values["masked"] = 1.0 if info.get("mask_sample") else 0.0
        for name, value in values.items():
            self._sums[prefix + name] += float(value)
            self._counts[prefix + name] += 1

    def means(self) -> dict[str, float]:
        """Each metric's mean over the episodes added.

        Returns:
            ``{metric name: mean}``.
        """
        return {name: self._sums[name] / self._counts[name] for name in self._sums}
