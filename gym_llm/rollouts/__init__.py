"""Rollout collection: run episodes with a policy, write NeMo Gym-format JSONL, summarise.

``collect(env_id, output, ...)`` runs a collection (``acollect`` is the coroutine); see
:mod:`gym_llm.rollouts.collect`.
"""

from gym_llm.rollouts.collect import CollectResult, acollect, collect, metrics_path_for
from gym_llm.rollouts.episode import run_episode
from gym_llm.rollouts.errors import CollectError
from gym_llm.rollouts.metrics import MetricsAccumulator, pass_at_k, summarize
from gym_llm.rollouts.output import RolloutWriter, load_finished
from gym_llm.rollouts.plan import CollectPlan

__all__ = [
    "CollectError",
    "CollectPlan",
    "CollectResult",
    "MetricsAccumulator",
    "RolloutWriter",
    "acollect",
    "collect",
    "load_finished",
    "metrics_path_for",
    "pass_at_k",
    "run_episode",
    "summarize",
]
