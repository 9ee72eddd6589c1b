"""StatefulCounter: per-episode counter from initial_count; reward iff it ends at expected_count."""

from __future__ import annotations

import json

import gymnasium
import pytest

import gym_llm
from gym_llm import items as it
from gym_llm.testing import play, play_reference


@pytest.fixture
def env():
    return gymnasium.make("llm/StatefulCounter-v0")


def inc(n, call_id="i") -> dict:
    return it.function_call("increment_counter", {"count": n}, call_id)


GET = it.function_call("get_counter_value", {}, "g")


def test_counter_starts_at_initial_count_and_accumulates(env):
    task = env.unwrapped.tasks[0]  # initial 3, +1 +2 -> 6
    env.reset(options={"task_index": 0})
    env.step([inc(1, "a"), inc(2, "b")])
    obs, *_ = env.step([GET])
    assert json.loads(obs["input"][-1]["output"]) == {"count": task["expected_count"]}
    assert env.step("6")[1] == 1.0


def test_wrong_total_scores_zero(env):
    assert play(env, [[inc(1)], "done"]).reward == 0.0


def test_state_does_not_leak_between_episodes(env):
    play(env, [[inc(100)], "done"])
    env.reset(options={"task_index": 0})
    obs, *_ = env.step([GET])
    assert json.loads(obs["input"][-1]["output"]) == {"count": 3}


def test_invalid_increment_is_an_error_and_does_not_count(env):
    result = play(
        env, [[it.function_call("increment_counter", {"count": "lots"}, "x")], [inc(1), inc(2, "y")], "ok"]
    )
    assert result.info["tool_errors"] == 1
    assert result.reward == 1.0


def test_replay_verify_matches_the_live_counter(env):
    result = play(env, [[inc(1), inc(2, "j")], "done"])
    row = {**env.unwrapped.task, "response": env.unwrapped.response}
    assert gym_llm.verify("llm/StatefulCounter-v0", row).reward == result.reward == 1.0


@pytest.mark.parametrize("index", range(6))
def test_reference_on_every_row(env, index):
    assert play_reference(env, task_index=index).reward == 1.0
