"""Play whole episodes with scripted or reference actions (for tests and benchmarks)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gym_llm.env import LLMEnv


@dataclass
class EpisodeResult:
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    observation: dict[str, tuple]
    steps: int


def play(env: Any, actions: Iterable[Any], *, task_index: int = 0) -> EpisodeResult:
    """Reset ``env`` on ``task_index`` and step the given actions until the episode ends.

    Raises:
        AssertionError: The actions ran out before the episode ended.
    """
    obs, info = env.reset(options={"task_index": task_index})
    steps = 0
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            return EpisodeResult(float(reward), terminated, truncated, info, obs, steps)
    raise AssertionError(f"the episode did not end after {steps} actions")


def play_reference(env: Any, *, task_index: int = 0, max_steps: int = 50) -> EpisodeResult:
    """Play one episode with the env's reference solution."""
    core: LLMEnv = env.unwrapped
    obs, info = env.reset(options={"task_index": task_index})
    task = core.task
    assert task is not None, "reset() sets the env's task"
    for step in range(1, max_steps + 1):
        obs, reward, terminated, truncated, info = env.step(core.reference_action(task, obs))
        if terminated or truncated:
            return EpisodeResult(float(reward), terminated, truncated, info, obs, step)
    raise AssertionError(f"the reference solution did not finish within {max_steps} steps")
