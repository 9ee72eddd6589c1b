"""Weather: reward 1.0 iff get_weather was called (NeMo's rule); the answer is not graded."""

from __future__ import annotations

import json

import gymnasium
import pytest

from gym_llm.testing import play, play_reference

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'


@pytest.fixture
def env():
    return gymnasium.make("llm/Weather-v0")


def test_right_trajectory(env):
    result = play(env, [CALL, "It is cold in Oslo."])
    assert (result.reward, result.terminated) == (1.0, True)
    output = json.loads(result.observation["input"][-2]["output"])
    assert output == {"city": "Oslo", "weather_description": "The weather in Oslo is cold."}


def test_answer_without_calling_the_tool_scores_zero(env):
    assert play(env, ["It's probably sunny."]).reward == 0.0


def test_a_failed_call_still_counts_as_calling_get_weather(env):
    # NeMo's rule looks only for a function_call named get_weather, whatever its arguments.
    result = play(
        env, ['<tool_call>{"name": "get_weather", "arguments": {"town": "Oslo"}}</tool_call>', "ok"]
    )
    assert "error" in json.loads(result.observation["input"][-2]["output"])
    assert result.reward == 1.0


def test_calling_another_tool_scores_zero(env):
    result = play(env, ['<tool_call>{"name": "get_forecast", "arguments": {}}</tool_call>', "done"])
    assert result.reward == 0.0 and result.info["tool_errors"] == 1


def test_tools_in_the_observation_are_the_rows(env):
    obs, _ = env.reset(options={"task_index": 0})
    assert obs["tools"][0]["name"] == "get_weather" and obs["tools"][0]["strict"] is True
    assert obs["input"][0]["role"] == "developer"


@pytest.mark.parametrize("index", range(6))
def test_reference_on_every_row(env, index):
    assert play_reference(env, task_index=index).reward == 1.0
