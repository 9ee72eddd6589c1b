"""MultiStep: the last extract_synonym_values call must equal the expected values, in order."""

from __future__ import annotations

import json

import gymnasium
import pytest

from gym_llm import items as it
from gym_llm.testing import play, play_reference


@pytest.fixture
def env():
    return gymnasium.make("llm/MultiStep-v0")


def extract(values) -> list[dict]:
    return [it.function_call("extract_synonym_values", {"synonym_values": values}, "x")]


def test_get_synonym_value_is_the_sum_of_code_points(env):
    env.reset(options={"task_index": 0})
    obs, *_ = env.step([it.function_call("get_synonym_value", {"synonym": "Warm"}, "a")])
    assert json.loads(obs["input"][-1]["output"]) == {"synonym_value": sum(map(ord, "Warm"))}


def test_right_values_score_one_with_metrics(env):
    task = env.unwrapped.tasks[0]
    result = play(env, [extract(task["expected_synonym_values"]), "done"])
    assert result.reward == 1.0
    assert result.info["reward_components"] == {
        "accuracy": 1.0,
        "set_overlap": 1.0,
        "original_term_minefield_hit": 0.0,
        "order_instruction_following_failure": 0.0,
    }
    assert result.info["details"]["parsed_synonym_values"] == task["expected_synonym_values"]


def test_wrong_order_is_an_order_failure(env):
    values = env.unwrapped.tasks[0]["expected_synonym_values"]
    result = play(env, [extract(values[::-1]), "done"])
    assert result.reward == 0.0
    assert result.info["reward_components"]["order_instruction_following_failure"] == 1.0


def test_minefield_value_is_flagged(env):
    task = env.unwrapped.tasks[0]
    result = play(env, [extract([task["minefield_label_value"]]), "done"])
    assert result.reward == 0.0
    assert result.info["reward_components"]["original_term_minefield_hit"] == 1.0
    assert result.info["reward_components"]["set_overlap"] == 0.0


def test_only_the_last_extraction_counts(env):
    values = env.unwrapped.tasks[0]["expected_synonym_values"]
    assert play(env, [extract([1]), extract(values), "done"]).reward == 1.0
    assert play(env, [extract(values), extract([1]), "done"]).reward == 0.0


def test_malformed_extraction_scores_zero_without_crashing(env):
    bad = [it.function_call("extract_synonym_values", "{broken", "x")]
    result = play(env, [bad, "done"])
    assert result.reward == 0.0
    assert result.info["details"]["parsed_synonym_values"] == []


@pytest.mark.parametrize("index", range(6))
def test_reference_on_every_row(env, index):
    assert play_reference(env, task_index=index).reward == 1.0
