"""Rollout collection: run episodes with a policy, write NeMo Gym-format JSONL, summarise."""

from gym_llm.rollouts.collect import CollectResult, collect, collect_sync, metrics_path_for
from gym_llm.rollouts.episode import run_episode
from gym_llm.rollouts.metrics import pass_at_k, summarize
from gym_llm.rollouts.output import RolloutWriter, load_finished

__all__ = [
    "CollectResult",
    "RolloutWriter",
    "collect",
    "collect_sync",
    "load_finished",
    "metrics_path_for",
    "pass_at_k",
    "run_episode",
    "summarize",
]
