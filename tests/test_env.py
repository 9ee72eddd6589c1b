"""LLMEnv's contract: tool-call robustness, turn budget, seeding, fresh data, bounded state."""

from __future__ import annotations

import asyncio
import json
import random
import time

import gymnasium
import numpy as np
import pytest

import gym_llm
from gym_llm import LLMEnv, Verdict, tool
from gym_llm import items as it
from gym_llm.testing import play

ROWS = [
    {"responses_create_params": {"input": f"task {i}", "temperature": 0.5}, "expected": i} for i in range(5)
]


class ToolBoxEnv(LLMEnv):
    """Tools that behave well and badly; reward 1 iff the answer text equals the row's ``expected``."""

    max_turns = 4
    tool_timeout = 0.2

    @tool
    def add(self, a: int, b: int = 1) -> dict:
        """Add two numbers.

        Args:
            a: The first number.
            b: The second number.
        """
        return {"sum": a + b}

    @tool
    def explode(self) -> str:
        """Always fails."""
        raise RuntimeError("boom")

    @tool
    def refuse(self) -> str:
        """Fails with a message meant for the model."""
        raise gym_llm.ToolError("the vault is closed on Sundays")

    @tool
    async def hang(self) -> str:
        """Never returns in time."""
        await asyncio.sleep(10)
        return "late"

    @tool(blocking=True, timeout=0.1)
    def slow_blocking(self) -> str:
        """Blocks a worker thread for too long."""
        time.sleep(0.5)
        return "late"

    def verify(self, task, response):
        return Verdict(float(it.last_assistant_text(response["output"]) == str(task["expected"])))


def call(name: str, args: object) -> list[dict]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    return [{"type": "function_call", "name": name, "arguments": arguments, "call_id": "c"}]


def last_output(obs) -> dict:
    item = obs["input"][-1]
    assert item["type"] == "function_call_output"
    return json.loads(item["output"])


@pytest.fixture
def env():
    return ToolBoxEnv(ROWS)


def test_tool_schema_comes_from_type_hints_and_docstring():
    schema = ToolBoxEnv.tools["add"].schema
    assert schema["name"] == "add"
    assert schema["description"] == "Add two numbers."
    params = schema["parameters"]
    assert params["properties"]["a"] == {"type": "integer", "description": "The first number."}
    assert params["properties"]["b"]["default"] == 1
    assert params["additionalProperties"] is False


def test_good_tool_call_then_answer(env):
    env.reset(options={"task_index": 3})
    obs, reward, term, trunc, info = env.step(call("add", {"a": 2}))
    assert last_output(obs) == {"sum": 3}
    assert (reward, term, trunc) == (0.0, False, False)
    obs, reward, term, trunc, info = env.step("3")
    assert (reward, term, trunc) == (1.0, True, False)
    assert info["tool_errors"] == 0 and info["num_turns"] == 2


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("nope", {}, "Unknown tool 'nope'"),
        ("add", "{not json", "expected a JSON object"),
        ("add", "[1, 2]", "expected a JSON object"),
        ("add", {"a": "three"}, "Invalid arguments for add: a:"),
        ("add", {"b": 2}, "a: Field required"),
        ("add", {"a": 1, "c": 2}, "c: Extra inputs are not permitted"),
        ("explode", {}, "Tool explode failed: RuntimeError: boom"),
        ("refuse", {}, "the vault is closed on Sundays"),
        ("hang", {}, "Tool hang timed out after 0.2 s"),
        ("slow_blocking", {}, "Tool slow_blocking timed out after 0.1 s"),
    ],
)
def test_bad_tool_calls_become_errors_the_model_reads(env, name, args, message):
    env.reset(options={"task_index": 0})
    obs, reward, term, trunc, info = env.step(call(name, args))
    assert message in last_output(obs)["error"]
    assert not term and not trunc  # the episode goes on
    obs, reward, term, trunc, info = env.step("0")
    assert (reward, term) == (1.0, True)
    assert info["tool_errors"] == 1


def test_malformed_hermes_call_is_reported_and_the_episode_goes_on(env):
    env.reset(options={"task_index": 0})
    obs, *_ = env.step("<tool_call>{oops</tool_call>")
    assert "not valid JSON" in last_output(obs)["error"]
    assert env.step("0")[1] == 1.0


def test_invalid_action_ends_the_episode_with_a_failure_kind(env):
    env.reset(options={"task_index": 0})
    _, reward, term, _, info = env.step(12345)
    assert (reward, term) == (0.0, True)
    assert info["failure_kind"] == "invalid_action"
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step("0")


def test_turn_budget_truncates_and_still_verifies(env):
    result = play(env, [call("add", {"a": 1})] * 4, task_index=0)
    assert result.truncated and not result.terminated
    assert result.info["failure_kind"] == "max_turns"
    assert result.info["num_turns"] == 4


def test_max_turns_kwarg_and_gymnasium_make_kwargs():
    env = ToolBoxEnv(ROWS, max_turns=1)
    env.reset()
    assert env.step(call("add", {"a": 1}))[3] is True
    with pytest.raises(ValueError):
        ToolBoxEnv(ROWS, max_turns=0)


def test_verify_that_raises_gives_zero_and_a_failure_kind():
    class Broken(ToolBoxEnv):
        def verify(self, task, response):
            raise KeyError("missing")

    env = Broken(ROWS)
    env.reset()
    _, reward, term, _, info = env.step("x")
    assert (reward, term, info["failure_kind"]) == (0.0, True, "verify_error")
    assert "KeyError" in info["details"]["error"]


def test_seeding_uses_np_random_only_and_options_pin_the_task(env):
    random.seed(1)
    np.random.seed(1)
    expected_py, expected_np = random.random(), np.random.rand()
    random.seed(1)
    np.random.seed(1)
    first = [env.reset(seed=7)[1]["task_index"]] + [env.reset()[1]["task_index"] for _ in range(5)]
    again = [env.reset(seed=7)[1]["task_index"]] + [env.reset()[1]["task_index"] for _ in range(5)]
    assert first == again
    assert (random.random(), np.random.rand()) == (expected_py, expected_np)  # global RNGs untouched
    obs, info = env.reset(options={"task_index": 2})
    assert info == {"task_index": 2, "params": {"temperature": 0.5}}
    assert obs["input"][0]["content"] == "task 2"
    obs, info = env.reset(options={"task": {"responses_create_params": {"input": "custom"}, "expected": 9}})
    assert obs["input"][0]["content"] == "custom" and info["task_index"] is None
    with pytest.raises(IndexError):
        env.reset(options={"task_index": 99})


def test_returned_data_is_fresh_every_call(env):
    obs1, info1 = env.reset(options={"task_index": 0})
    obs1["input"][0]["content"] = "mutated by the caller"
    info1["params"]["temperature"] = 9
    obs2, info2 = env.reset(options={"task_index": 0})
    assert obs2["input"][0]["content"] == "task 0"
    assert info2["params"]["temperature"] == 0.5


def test_state_stays_bounded_over_1000_episodes(env):
    sizes = set()
    for i in range(1000):
        env.reset(options={"task_index": i % 5})
        obs, *_ = env.step(call("add", {"a": i}))
        env.step(str(i % 5))
        sizes.add(len(obs["input"]))
        assert len(env.response["output"]) == 3
    assert sizes == {3}


def test_sync_api_works_inside_a_running_event_loop(env):
    async def inside_loop():
        env.reset(options={"task_index": 1})
        return env.step("1")[1]

    assert asyncio.run(inside_loop()) == 1.0


def test_async_api(env):
    async def run():
        await env.areset(options={"task_index": 4})
        await env.astep(call("add", {"a": 1, "b": 3}))
        return await env.astep("4")

    assert asyncio.run(run())[1] == 1.0


def test_row_schemas_are_honoured_over_generated_ones():
    row = {
        "responses_create_params": {"input": "hi", "tools": [{"type": "function", "name": "add"}]},
        "expected": 0,
    }
    env = ToolBoxEnv([row])
    obs, _ = env.reset()
    assert obs["tools"] == ({"type": "function", "name": "add"},)
    obs, _ = ToolBoxEnv(ROWS).reset()
    assert {t["name"] for t in obs["tools"]} == {"add", "explode", "refuse", "hang", "slow_blocking"}


def test_bad_rows_name_the_field():
    class Strict(ToolBoxEnv):
        class task_model(gym_llm.TaskRow):
            expected: int

    with pytest.raises(gym_llm.TaskError, match="row 2: field 'expected'"):
        Strict([ROWS[0], {"responses_create_params": {"input": "x"}, "expected": "seven"}])
    with pytest.raises(gym_llm.TaskError, match="responses_create_params"):
        ToolBoxEnv([{"expected": 1}])
    with pytest.raises(gym_llm.TaskError, match="no task rows"):
        ToolBoxEnv([])


def test_render_ansi():
    env = ToolBoxEnv(ROWS, render_mode="ansi")
    env.reset(options={"task_index": 0})
    env.step(call("add", {"a": 1}))
    text = env.render()
    assert "[user] task 0" in text and "add(" in text and '{"sum":2}' in text


def test_make_passes_kwargs_through_the_registry():
    env = gymnasium.make("llm/Weather-v0", max_turns=1)
    assert env.unwrapped.max_turns == 1


def test_execute_tools_false_records_calls_and_ends_the_episode():
    class Graded(ToolBoxEnv):
        execute_tools = False

    env = Graded(ROWS)
    env.reset(options={"task_index": 0})
    _, _, term, trunc, info = env.step(call("explode", {}))  # would raise if it ran
    assert term and not trunc and info["tool_errors"] == 0
    assert [i["type"] for i in env.response["output"]] == ["function_call"]


def test_tool_error_message_reaches_the_model_unchanged(env):
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(call("refuse", {}))
    assert last_output(obs) == {"error": "the vault is closed on Sundays"}


def test_is_live_response_tells_the_running_episode_from_a_copy(env):
    env.reset(options={"task_index": 0})
    env.step(call("add", {"a": 1}))
    assert env.is_live_response(env.task, env.response)
    assert not env.is_live_response(dict(env.task), env.response)
    assert not env.is_live_response(env.task, {"output": [dict(i) for i in env.response["output"]]})
