"""Every registered env, end to end: reference rollouts through the collector, and make_vec."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import gym_llm
from gym_llm.rollouts import collect


@pytest.mark.parametrize("env_id", gym_llm.env_ids())
def test_collect_scores_one_on_every_example_row(tmp_path, env_id):
    result = collect(env_id, tmp_path / "r.jsonl", concurrency=4)
    assert result.written == len(gymnasium.make(env_id).unwrapped.tasks)
    assert result.summary["mean_reward"] == 1.0, result.summary
    assert result.summary["num_masked"] == 0


@pytest.mark.parametrize("env_id", gym_llm.env_ids())
def test_make_vec_plays_reference_episodes(env_id):
    envs = gymnasium.make_vec(env_id, num_envs=2, autoreset_mode="SameStep")
    try:
        subs = envs.envs
        obs, _ = envs.reset(seed=0)
        finished = np.zeros(2, dtype=bool)
        rewards = np.zeros(2)
        for _ in range(30):
            # a finished sub-env was reset (SAME_STEP): it just answers until the other one ends
            actions = [
                "done" if done else sub.reference_action(sub.task, o)
                for sub, o, done in zip(subs, obs, finished, strict=True)
            ]
            obs, reward, terminated, truncated, _ = envs.step(actions)
            ended = (terminated | truncated) & ~finished
            rewards[ended] = reward[ended]
            finished |= ended
            if finished.all():
                break
        assert finished.all() and rewards.tolist() == [1.0, 1.0]
    finally:
        envs.close()
