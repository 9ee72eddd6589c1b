"""The episode API adapters build on: finish, call_tool, new_items, tool_errors, reward_components."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium
import pytest

from gym_llm import LLMEnv, SingleTurnEnv, Verdict, tool
from gym_llm import items as it
from gym_llm.failures import MASKED_KINDS, VERIFY_ERROR, is_masked

ROWS = [{"responses_create_params": {"input": "add things"}, "target": 3}]


class AdderEnv(LLMEnv):
    """Reward 1 iff the running total reaches the row's target; components track it."""

    max_turns = 3
    reward_components = ("total", "calls")

    def setup(self, task: dict[str, Any]) -> None:
        self.total = 0
        self.calls = 0

    @tool
    def add(self, n: int) -> dict:
        """Add to the total.

        Args:
            n: The amount.
        """
        self.total += n
        self.calls += 1
        return {"total": self.total}

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        # only "total" given: the base class fills "calls" with 0.0
        return Verdict(float(self.total == task["target"]), {"total": float(self.total)})


def call(n: int, call_id: str = "c") -> list[dict[str, Any]]:
    return [it.function_call("add", {"n": n}, call_id)]


def test_finish_verifies_now_and_returns_the_final_info() -> None:
    env = AdderEnv(ROWS)
    env.reset(seed=0)
    env.step(call(3))
    reward, info = env.finish()
    assert reward == 1.0
    assert info["num_turns"] == 1 and info["failure_kind"] is None and info["mask_sample"] is False
    assert info["reward_components"] == {"total": 3.0, "calls": 0.0}
    assert info["new_items"] == []


def test_finish_records_the_last_turn_without_running_its_tools() -> None:
    env = AdderEnv(ROWS)
    env.reset(seed=0)
    reward, info = env.finish(call(3))
    assert reward == 0.0 and env.total == 0  # the call is recorded, not run
    assert it.function_calls(env.response["output"], "add")
    assert info["num_turns"] == 1


def test_finish_twice_or_before_reset_is_a_clear_error() -> None:
    env = AdderEnv(ROWS)
    with pytest.raises(RuntimeError, match=r"reset\(\) before finish"):
        env.finish()
    env.reset(seed=0)
    env.finish()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.finish()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step("done")
    with pytest.raises(RuntimeError, match="episode is over"):
        env.call_tool("add", {"n": 1})


def test_call_tool_returns_the_output_the_model_would_read_and_records_it() -> None:
    env = AdderEnv(ROWS)
    env.reset(seed=0)
    assert env.call_tool("add", {"n": 2}) == '{"total":2}'
    assert env.call_tool("add", '{"n": 1}') == '{"total":3}'
    assert env.num_turns == 2
    assert json.loads(env.call_tool("nope", {}))["error"].startswith("Unknown tool 'nope'")
    assert "Invalid arguments for add" in env.call_tool("add", {"n": "many"}, count_turn=False)
    assert env.num_turns == 3  # the unknown tool used a turn; the count_turn=False call did not
    # the budget is spent: one more counted call is refused, an uncounted one still runs
    assert "turn budget" in json.loads(env.call_tool("add", {"n": 1}))["error"]
    assert env.call_tool("add", {"n": 0}, count_turn=False) == '{"total":3}'
    kinds = [item["type"] for item in env.response["output"]]
    assert kinds == ["function_call", "function_call_output"] * 6
    ids = [item["call_id"] for item in env.response["output"] if item["type"] == "function_call"]
    assert len(set(ids)) == len(ids)
    reward, info = env.finish()
    assert reward == 1.0 and info["tool_errors"] == 3


def test_new_items_are_exactly_the_tool_outputs_a_step_appended() -> None:
    env = AdderEnv(ROWS)
    obs, _ = env.reset(seed=0)
    before = len(obs["input"])
    obs, _, _, _, info = env.step(call(1, "a") + call(1, "b"))
    assert [item["type"] for item in info["new_items"]] == ["function_call_output"] * 2
    assert list(obs["input"][before + 2 :]) == info["new_items"]
    info["new_items"].clear()  # a copy: changing it changes nothing in the env
    assert len(env.step("done")[0]["input"]) == before + 5


def test_tool_errors_count_malformed_calls_too() -> None:
    env = AdderEnv(ROWS)
    env.reset(seed=0)
    text = '<tool_call>{not json</tool_call><tool_call>{"name": "add", "arguments": {"n": 1}}</tool_call>'
    _, _, _, _, info = env.step(text)
    assert info["tool_errors"] == 1
    _, _, _, _, info = env.step('<tool_call>{"name": "ghost", "arguments": {}}</tool_call>')
    assert info["tool_errors"] == 2


def test_every_verdict_carries_exactly_the_declared_components() -> None:
    env = AdderEnv(ROWS)
    env.reset(seed=0)
    _, _, _, _, info = env.step("no tools")
    assert list(info["reward_components"]) == ["total", "calls"]
    env.reset(seed=0)
    _, _, _, _, info = env.step({"bogus": True})  # an invalid action still reports every component
    assert info["failure_kind"] == "invalid_action" and list(info["reward_components"]) == ["total", "calls"]


class UndeclaredEnv(SingleTurnEnv):
    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        return Verdict(1.0, {"surprise": 1.0})


def test_an_undeclared_component_is_a_masked_verify_error() -> None:
    env = UndeclaredEnv(ROWS)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("hi")
    assert (reward, terminated, info["failure_kind"]) == (0.0, True, VERIFY_ERROR)
    assert info["mask_sample"] is True
    assert "surprise" in info["details"]["error"]


def test_single_turn_env_grades_one_turn_and_never_runs_tools() -> None:
    class Graded(SingleTurnEnv):
        @tool
        def touch(self) -> str:
            """Must never run."""
            raise AssertionError("ran")

        def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
            return Verdict(float(bool(it.function_calls(response["output"], "touch"))))

    env = Graded(ROWS)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step([it.function_call("touch", {}, "t")])
    assert (reward, terminated, truncated, info["tool_errors"]) == (1.0, True, False, 0)


def test_verify_gets_output_as_item_dicts_and_a_bad_output_is_masked() -> None:
    env = gymnasium.make("llm/Weather-v0").unwrapped
    row = dict(env.tasks[0])
    verdict = env.verify_row(
        {**row, "response": {"output": [it.function_call("get_weather", {"city": "x"}, "c")]}}
    )
    assert verdict.reward == 1.0
    verdict = asyncio.run(env.averify(row, {"output": [1, 2]}))
    assert verdict.failure_kind == "malformed_response" and is_masked(verdict.failure_kind)


def test_masked_kinds_are_failures_outside_the_answer() -> None:
    assert "judge_error" in MASKED_KINDS and "model_error" in MASKED_KINDS
    assert not is_masked("max_turns") and not is_masked("invalid_action")


def test_reset_info_params_complete_the_request() -> None:
    env = gymnasium.make("llm/GoogleSearch-v0").unwrapped
    obs, info = env.reset(seed=0)
    request = {**obs, **info["params"]}
    assert set(request) >= {"input", "tools"}
    assert all(key not in info["params"] for key in ("input", "tools"))
    assert isinstance(obs["input"], tuple) and isinstance(obs["tools"], tuple)
    obs["input"][0]["content"] = "changed"  # the caller's copy: the env's conversation is untouched
    assert env.step("x")[0]["input"][0]["content"] != "changed"
