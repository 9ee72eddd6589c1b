"""``llm/NeMoGym-v0`` drives a NeMo Gym resources server: here ``gym-llm serve`` in a real subprocess."""

from __future__ import annotations

import gymnasium
import pytest
from server_wire import ENVS, ServeProcess, http, rows

from gym_llm import items as it
from gym_llm.policies import make_policy
from gym_llm.remote import NeMoGymEnv, RemoteError
from gym_llm.rollouts import collect

COUNTER_TASKS = str(ENVS / "stateful_counter" / "data" / "example.jsonl")


@pytest.fixture(scope="module")
def counter_process():
    with ServeProcess("llm/StatefulCounter-v0") as served:
        yield served
    assert served.process.returncode == 0


def open_sessions(served: ServeProcess) -> int:
    return http("GET", f"{served.base_url}/health").json()["sessions"]


@pytest.mark.parametrize("typed_sessions", [False, True])
def test_reference_episodes_score_one_on_every_row(counter_process, typed_sessions):
    env = gymnasium.make(
        "llm/NeMoGym-v0",
        base_url=counter_process.base_url,
        tasks=COUNTER_TASKS,
        typed_sessions=typed_sessions,
    )
    reference = gymnasium.make("llm/StatefulCounter-v0").unwrapped  # plays the model's part
    for index in range(len(env.unwrapped.tasks)):
        obs, info = env.reset(options={"task_index": index})
        assert open_sessions(counter_process) == 1
        done, reward = False, 0.0
        while not done:
            obs, reward, terminated, truncated, info = env.step(
                reference.reference_action(env.unwrapped.task, obs)
            )
            done = terminated or truncated
        assert reward == 1.0, info
        assert info["details"]["final_count"] == env.unwrapped.task["expected_count"]
        assert open_sessions(counter_process) == 0  # verified, then closed
    env.close()


def test_the_counter_lives_in_the_server_session(counter_process):
    env = NeMoGymEnv(counter_process.base_url, COUNTER_TASKS)
    env.reset(options={"task_index": 2})  # initial_count 7
    obs, *_ = env.step([it.function_call("increment_counter", {"count": 5}, "a")])
    assert obs["input"][-1]["output"] == '{"success":true}'
    obs, *_ = env.step([it.function_call("get_counter_value", {}, "b")])
    assert obs["input"][-1]["output"] == '{"count":12}'
    env.close()
    assert open_sessions(counter_process) == 0


def test_tool_failures_reach_the_model_as_simple_agent_hands_them_over(counter_process):
    env = NeMoGymEnv(counter_process.base_url, COUNTER_TASKS)
    env.reset(options={"task_index": 0})
    calls = [
        it.function_call("increment_counter", {"count": "many"}, "a"),  # the server's 422 body
        it.function_call("verify", {}, "b"),  # not a tool of the task: never sent
        it.function_call("increment_counter", "{not json", "c"),
    ]
    obs, _, _, _, info = env.step(calls)
    outputs = [item["output"] for item in obs["input"][-3:]]
    assert '"field":"count"' in outputs[0] and "Invalid arguments for increment_counter" in outputs[0]
    assert "Unknown tool 'verify'" in outputs[1]
    assert "expected a JSON object" in outputs[2]
    assert info["tool_errors"] == 3
    env.close()


def test_a_recorded_row_re_verifies_without_a_session(counter_process):
    env = NeMoGymEnv(counter_process.base_url, COUNTER_TASKS)
    row = env.tasks[1]
    output = [
        it.function_call("increment_counter", {"count": 4}, "a"),
        it.function_call_output("a", '{"success":true}'),
    ]
    assert env.verify_row({**row, "response": {"output": output}}).reward == 1.0
    assert env.verify_row({**row, "response": {"output": output[:1]}}).reward == 0.0
    env.close()


def test_collect_with_a_model_over_http(counter_process, oracle_server, tmp_path):
    policy = make_policy("test", base_url=oracle_server.base_url, api_key="x", api="chat")
    result = collect(
        "llm/NeMoGym-v0",
        tmp_path / "rollouts.jsonl",
        policy=policy,
        env_kwargs={"base_url": counter_process.base_url, "tasks": COUNTER_TASKS},
        num_repeats=2,
        concurrency=4,
    )
    assert result.written == 12 and result.summary["mean_reward"] == 1.0
    assert open_sessions(counter_process) == 0


def test_an_unreachable_server_fails_the_reset():
    env = NeMoGymEnv("http://127.0.0.1:9", COUNTER_TASKS)
    with pytest.raises(RemoteError, match="cannot reach"):
        env.reset(seed=0)
    env.close()


def test_rows_are_required():
    with pytest.raises(ValueError, match="no tasks given"):
        NeMoGymEnv("http://127.0.0.1:9")


def test_the_weather_rows_of_nemo_s_example_server(tmp_path):
    with ServeProcess("llm/Weather-v0") as served:
        env = NeMoGymEnv(served.base_url, rows("weather"))
        env.reset(seed=0)
        obs, *_ = env.step('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>')
        assert (
            obs["input"][-1]["output"]
            == '{"city":"Oslo","weather_description":"The weather in Oslo is cold."}'
        )
        assert env.step("Cold.")[1] == 1.0
        env.close()
        status, out, _ = served.stop()
    assert status == 0 and "Stopped." in out
