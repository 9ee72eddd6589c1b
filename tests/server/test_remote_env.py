"""``llm/Remote-v0``: episodes on a server behave as the same episodes in-process."""

from __future__ import annotations

import re
import time

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from server_wire import ENVS

from gym_llm.policies import make_policy
from gym_llm.remote import RemoteEnv, RemoteError, RemoteRequestError
from gym_llm.rollouts import collect
from gym_llm.server import EnvServer

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>'


def play_side_by_side(env_id, server, seed):
    """Play the reference solution in-process and replay its turns remotely; return both traces."""
    local = gymnasium.make(env_id).unwrapped
    remote = gymnasium.make("llm/Remote-v0", base_url=server.base_url).unwrapped
    traces = {"local": [], "remote": []}
    local_obs, local_info = local.reset(seed=seed)
    remote_obs, remote_info = remote.reset(seed=seed)
    traces["local"].append((local_obs, local_info))
    traces["remote"].append((remote_obs, remote_info))
    done = False
    while not done:
        action = local.reference_action(local.task, local_obs)
        local_obs, *local_rest = local.step(action)
        remote_obs, *remote_rest = remote.step(action)
        traces["local"].append((local_obs, *local_rest))
        traces["remote"].append((remote_obs, *remote_rest))
        done = local_rest[1] or local_rest[2]
    assert remote.response == local.response and remote.num_turns == local.num_turns
    assert remote.task == local.task and remote.task_index == local.task_index
    remote.close()
    return traces


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_remote_episodes_equal_local_ones(weather_server, counter_server, seed):
    for env_id, server in (("llm/Weather-v0", weather_server), ("llm/StatefulCounter-v0", counter_server)):
        traces = play_side_by_side(env_id, server, seed)
        assert traces["remote"] == traces["local"]
        assert traces["remote"][-1][1] == 1.0  # the reference solution's reward


def test_the_remote_env_passes_gymnasium_s_checker(weather_server):
    env = gymnasium.make("llm/Remote-v0", base_url=weather_server.base_url)
    check_env(env.unwrapped, skip_render_check=False)
    assert isinstance(env.observation_space.sample(), dict)
    env.close()


def test_make_vec_steps_remote_episodes_concurrently(weather_server):
    envs = gymnasium.make_vec("llm/Remote-v0", num_envs=4, base_url=weather_server.base_url)
    try:
        assert type(envs).__name__ == "LLMVectorEnv" and envs.num_envs == 4
        obs, info = envs.reset(seed=0)
        assert len({sub.session_id for sub in envs.envs}) == 4
        assert info["task_index"].tolist() == [sub.task_index for sub in envs.envs]
        obs, rewards, terminations, _, info = envs.step([CALL] * 4)
        assert "weather_description" in obs[0]["input"][-1]["output"] and not terminations.any()
        obs, rewards, terminations, _, info = envs.step(["It is cold."] * 4)
        assert rewards.tolist() == [1.0] * 4 and terminations.all()
        # NEXT_STEP autoreset: the finished sub-envs start new episodes on the next step
        obs, rewards, terminations, _, _ = envs.step(["ignored"] * 4)
        assert rewards.tolist() == [0.0] * 4 and all(len(o["input"]) == 2 for o in obs)
    finally:
        envs.close()
    assert all(sub.session_id is None for sub in envs.envs)


def test_collect_plays_a_remote_env_with_a_model_over_http(weather_server, oracle_server, tmp_path):
    policy = make_policy("test", base_url=oracle_server.base_url, api_key="x")
    result = collect(
        "llm/Remote-v0",
        tmp_path / "rollouts.jsonl",
        policy=policy,
        env_kwargs={"base_url": weather_server.base_url},
        num_repeats=2,
        concurrency=4,
    )
    assert result.written == 12 and result.summary["mean_reward"] == 1.0


def test_the_episode_api_beyond_step(counter_server):
    env = RemoteEnv(counter_server.base_url)
    env.reset(options={"task_index": 1})  # expected_count 4, initial_count 0
    assert env.call_tool("increment_counter", {"count": 4}) == '{"success":true}'
    assert env.call_tool("get_counter_value", "{}", count_turn=False) == '{"count":4}'
    assert env.num_turns == 1 and len(env.response["output"]) == 4
    reward, info = env.finish()
    assert reward == 1.0 and info["details"] == {"final_count": 4}
    # re-verification of the recorded row runs on the server too
    row = {**env.task, "response": env.response}
    assert env.verify_row(row).reward == 1.0
    assert env.verify_row({**row, "response": {"output": []}}).reward == 0.0
    env.close()


def test_rows_given_to_the_client_are_played_by_index(counter_server):
    rows = [
        dict(row, expected_count=row["initial_count"]) for row in RemoteEnv(counter_server.base_url).tasks
    ]
    env = RemoteEnv(counter_server.base_url, tasks=rows)
    _, info = env.reset(options={"task_index": 2})
    assert info["task_index"] == 2 and env.task == rows[2]
    assert env.step("done")[1] == 1.0  # our row's expected count, not the server's
    with pytest.raises(IndexError):
        env.reset(options={"task_index": 6})
    env.close()


def test_errors_read_as_they_do_in_process(weather_server):
    env = RemoteEnv(weather_server.base_url, render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step("hi")
    env.reset(seed=3)
    assert env.step("It is cold")[2] is True
    assert "[assistant] It is cold" in env.render()
    with pytest.raises(RemoteError, match="episode is over") as over:
        env.step("again")
    assert isinstance(over.value, RuntimeError) and over.value.status == 409
    with pytest.raises(RemoteRequestError, match="out of range") as bad:
        env.reset(options={"task_index": 99})
    assert isinstance(bad.value, ValueError) and bad.value.field == "options.task_index"
    env.close()
    with pytest.raises(RemoteError, match="cannot reach"):
        RemoteEnv("http://127.0.0.1:9")  # nothing listens on the discard port


def test_a_session_that_expired_on_the_server_is_replaced_at_reset():
    with EnvServer("llm/Weather-v0", idle_timeout=0.2) as server:
        env = RemoteEnv(server.base_url)
        env.reset(seed=0)
        first = env.session_id
        for _ in range(50):  # the expiry runs every idle_timeout / 4
            if not len(server.sessions):
                break
            time.sleep(0.1)
        assert len(server.sessions) == 0
        with pytest.raises(RemoteRequestError, match="unknown or expired"):
            env.step(CALL)
        env.reset(seed=0)
        assert env.session_id != first and env.step(CALL)[1] == 0.0
        env.close()


def test_a_token_is_sent_when_given():
    with EnvServer("llm/Weather-v0", token="t0ken") as server:
        with pytest.raises(RemoteError, match="401"):
            RemoteEnv(server.base_url)
        env = gymnasium.make("llm/Remote-v0", base_url=server.base_url, token="t0ken")
        env.reset(seed=0)
        assert env.step(CALL)[0]["input"][-1]["type"] == "function_call_output"
        env.close()


def test_the_readme_example_runs(counter_server):
    readme = (ENVS.parent / "README.md").read_text()
    code = next(
        block for block in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "llm/Remote-v0" in block
    )
    code = code.replace("http://127.0.0.1:8000", counter_server.base_url)
    code = code.replace(
        '"data/example.jsonl"', repr(str(ENVS / "stateful_counter" / "data" / "example.jsonl"))
    )
    namespace: dict = {}
    exec(code, namespace)
    nemo_obs, _ = namespace["nemo"].reset(seed=0)
    remote_obs, _ = namespace["env"].reset(seed=0)
    assert remote_obs == namespace["envs"].reset(seed=0)[0][0] == nemo_obs  # one row, three ways
    for name in ("env", "envs", "nemo"):
        namespace[name].close()
