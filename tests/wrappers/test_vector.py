"""Tests of ``gym_llm.wrappers.vector``: make_vec, concurrency, autoreset modes, gymnasium's vector envs."""

from __future__ import annotations

import asyncio
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import gym_llm  # noqa: F401  (registers the llm/ envs)
from gym_llm import items as it
from gym_llm.env import LLMEnv
from gym_llm.envs.weather.env import WeatherEnv
from gym_llm.tools import tool
from gym_llm.verdict import Verdict
from gym_llm.wrappers import vector as vector_module
from gym_llm.wrappers.vector import LLMVectorEnv, ObservationDict, make_vector_env

WEATHER = "llm/Weather-v0"
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
ANSWER = "It is cold in Oslo."


class SleepEnv(LLMEnv):
    """A test env whose one tool awaits ``asyncio.sleep`` and logs when it starts and ends."""

    max_turns = 3

    def __init__(self, *args: Any, events: list[tuple[str, int]] | None = None, name: int = 0, **kw: Any):
        super().__init__(*args, tasks=[{"responses_create_params": {"input": "Wait, please."}}], **kw)
        self.events = events if events is not None else []
        self.name = name

    @tool
    async def wait(self, ms: int) -> str:
        """Wait a while.

        Args:
            ms: Milliseconds to wait.
        """
        self.events.append(("start", self.name))
        await asyncio.sleep(ms / 1000)
        self.events.append(("end", self.name))
        return "done"

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        return Verdict(1.0 if it.function_calls(response["output"], "wait") else 0.0)


def wait_call(ms: int) -> str:
    return f'<tool_call>{{"name": "wait", "arguments": {{"ms": {ms}}}}}</tool_call>'


def weather_vec(num_envs: int = 2, **kwargs: Any) -> LLMVectorEnv:
    return gym.make_vec(WEATHER, num_envs=num_envs, **kwargs)


def last_item(obs: dict[str, tuple]) -> dict[str, Any]:
    return obs["input"][-1]


# --------------------------------------------------------------------------- construction, spaces
def test_make_vec_builds_llm_vector_env_with_batched_spaces() -> None:
    envs = weather_vec(3)
    assert isinstance(envs, LLMVectorEnv)
    assert envs.num_envs == 3 and envs.spec.id == WEATHER
    assert all(isinstance(env, WeatherEnv) for env in envs.envs)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.single_observation_space == envs.envs[0].observation_space
    assert envs.observation_space == batch_space(envs.single_observation_space, 3)
    assert isinstance(envs.observation_space, gym.spaces.Tuple)
    assert isinstance(envs.action_space, gym.spaces.Tuple) and len(envs.action_space) == 3

    obs, info = envs.reset(seed=0)
    assert isinstance(obs, tuple) and len(obs) == 3
    assert all(set(o) == {"input", "tools"} for o in obs)
    assert obs in envs.observation_space
    assert obs[0]["tools"][0]["name"] == "get_weather"
    assert info["_task_index"].all() and info["task_index"].shape == (3,)
    envs.close()
    assert envs.closed


def test_observation_dict_batches_to_tuple_of_dicts() -> None:
    space = ObservationDict({"input": gym.spaces.Text(8), "tools": gym.spaces.Text(8)})
    batched = batch_space(space, 4)
    assert isinstance(batched, gym.spaces.Tuple) and len(batched) == 4
    sample = batched.sample()
    assert len(sample) == 4 and all(isinstance(s, dict) for s in sample)
    empty = gym.vector.utils.create_empty_array(space, 2)
    assert empty == ({"input": (), "tools": ()}, {"input": (), "tools": ()})
    assert gym.vector.utils.concatenate(space, [sample[0], sample[1]], empty) == (sample[0], sample[1])


def test_autoreset_mode_from_make_vec_kwarg_and_string() -> None:
    assert weather_vec(autoreset_mode=AutoresetMode.SAME_STEP).autoreset_mode is AutoresetMode.SAME_STEP
    assert weather_vec(autoreset_mode="Disabled").metadata["autoreset_mode"] is AutoresetMode.DISABLED
    assert weather_vec(autoreset_mode="same_step").autoreset_mode is AutoresetMode.SAME_STEP
    with pytest.raises(ValueError, match="autoreset_mode"):
        weather_vec(autoreset_mode="sometimes")


def test_env_kwargs_reach_every_sub_env() -> None:
    envs = weather_vec(2, max_turns=1, render_mode="ansi")
    assert [env.max_turns for env in envs.envs] == [1, 1]
    envs.reset(seed=0)
    _, rewards, terminations, truncations, _ = envs.step([CALL, CALL])
    # max_turns=1: the tool turn exhausts the budget; the episode is truncated and verified.
    assert truncations.all() and not terminations.any()
    assert rewards.tolist() == [1.0, 1.0]
    frames = envs.render()
    assert len(frames) == 2 and all("[call " in frame for frame in frames)


def test_max_episode_steps_truncates_like_time_limit() -> None:
    envs = weather_vec(2, max_episode_steps=1)
    envs.reset(seed=0)
    _, rewards, terminations, truncations, _ = envs.step([CALL, ANSWER])
    # env 0 is cut off mid-episode (no reward yet); env 1 finished on its own.
    assert truncations.tolist() == [True, False]
    assert terminations.tolist() == [False, True]
    assert rewards.tolist() == [0.0, 0.0]


def test_per_id_entry_point_and_direct_call() -> None:
    gym.register(
        id="llm_test/Sleep-v0",
        entry_point=SleepEnv,
        vector_entry_point="gym_llm.wrappers.vector:llm_test/Sleep-v0",
        kwargs={"max_turns": 2},
    )
    try:
        envs = gym.make_vec("llm_test/Sleep-v0", num_envs=2)
        assert isinstance(envs, LLMVectorEnv) and all(isinstance(e, SleepEnv) for e in envs.envs)
        assert [env.max_turns for env in envs.envs] == [2, 2]  # the spec's kwargs are applied
    finally:
        del gym.registry["llm_test/Sleep-v0"]
    direct = make_vector_env(2, env_id=WEATHER, autoreset_mode="SameStep")
    assert direct.autoreset_mode is AutoresetMode.SAME_STEP and direct.spec.id == WEATHER
    with pytest.raises(ValueError, match="env_id"):
        make_vector_env(2)
    with pytest.raises(ValueError, match="num_envs"):
        make_vector_env(0, env_id=WEATHER)


def test_make_vec_modes_and_module_prefix() -> None:
    assert isinstance(gym.make_vec("gym_llm:llm/Weather-v0", num_envs=2), LLMVectorEnv)
    sync = gym.make_vec(WEATHER, num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, SyncVectorEnv)
    obs = sync.reset(seed=0)[0]
    assert len(obs) == 2 and obs[0]["tools"][0]["name"] == "get_weather"  # one dict per sub-env
    # Per-id attributes exist only for env ids; other names are still missing.
    assert callable(vector_module.__getattr__(WEATHER))
    assert not hasattr(vector_module, "no_such_thing")


def test_misuse_raises_clear_errors() -> None:
    envs = weather_vec(2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step([CALL, CALL])
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="2 actions"):
        envs.step([CALL])
    with pytest.raises(ValueError, match="2 actions"):
        envs.step(CALL)
    with pytest.raises(ValueError, match="2 seeds"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(TypeError, match="areset/astep"):
        LLMVectorEnv([gym.make("CartPole-v1")])
    with pytest.raises(ValueError, match="at least one"):
        LLMVectorEnv([])


# --------------------------------------------------------------------------- concurrency
def test_tool_calls_of_all_sub_envs_overlap() -> None:
    events: list[tuple[str, int]] = []
    envs = LLMVectorEnv([SleepEnv(events=events, name=i) for i in range(8)])
    envs.reset(seed=0)
    obs, rewards, terminations, _, _ = envs.step([wait_call(20)] * 8)
    assert len(events) == 16
    # Every tool started before any finished: the 8 sleeps ran at the same time.
    assert [kind for kind, _ in events[:8]] == ["start"] * 8
    assert [kind for kind, _ in events[8:]] == ["end"] * 8
    assert {name for _, name in events[:8]} == set(range(8))
    outputs = [(last_item(o)["type"], last_item(o)["output"]) for o in obs]
    assert outputs == [("function_call_output", "done")] * 8
    assert not terminations.any()
    _, rewards, terminations, _, _ = envs.step(["finished"] * 8)
    assert rewards.tolist() == [1.0] * 8 and terminations.all()


def test_sync_vector_env_runs_the_same_tools_one_after_another() -> None:
    # The contrast that shows the overlap test can fail: gymnasium's SyncVectorEnv serialises.
    events: list[tuple[str, int]] = []
    envs = SyncVectorEnv([lambda i=i: SleepEnv(events=events, name=i) for i in range(3)])
    envs.reset(seed=0)
    envs.step([wait_call(1)] * 3)
    assert events == [("start", 0), ("end", 0), ("start", 1), ("end", 1), ("start", 2), ("end", 2)]


def test_async_api_from_a_running_loop() -> None:
    async def main() -> tuple[np.ndarray, np.ndarray]:
        envs = weather_vec(4)
        await envs.areset(seed=0)
        await envs.astep([CALL] * 4)
        _, rewards, terminations, _, _ = await envs.astep([ANSWER] * 4)
        # The sync facade also works inside a running loop (run_sync hands it to a thread).
        envs.reset(seed=1)
        return rewards, terminations

    rewards, terminations = asyncio.run(main())
    assert rewards.tolist() == [1.0] * 4 and terminations.all()


def test_malformed_and_sampled_actions_never_raise() -> None:
    envs = weather_vec(4)
    envs.action_space.seed(0)
    envs.reset(seed=0)
    for _ in range(10):
        obs, rewards, _, _, _ = envs.step(envs.action_space.sample())
        assert obs in envs.observation_space
        assert ((rewards == 0.0) | (rewards == 1.0)).all()
    envs.reset(seed=0)
    _, rewards, terminations, _, info = envs.step(["<tool_call>{not json</tool_call>", 42, None, []])
    # Bad JSON is a tool error the model can read; non-turns and empty turns end with reward 0.
    assert rewards.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert terminations.tolist() == [False, True, True, True]
    assert info["failure_kind"][1:3].tolist() == ["invalid_action"] * 2


# --------------------------------------------------------------------------- autoreset modes
def test_next_step_autoreset() -> None:
    envs = weather_vec(2)
    obs, _ = envs.reset(seed=0)
    first_len = [len(o["input"]) for o in obs]

    # step 1: env 0 calls the tool, env 1 answers without it (reward 0, done).
    obs, rewards, terminations, truncations, info = envs.step([CALL, ANSWER])
    assert terminations.tolist() == [False, True] and rewards.tolist() == [0.0, 0.0]
    assert last_item(obs[0])["type"] == "function_call_output"
    assert info["_failure_kind"].tolist() == [False, True]

    # step 2: env 0 answers (reward 1, done); env 1 is reset, its action ignored.
    obs, rewards, terminations, truncations, info = envs.step([ANSWER, CALL])
    assert rewards.tolist() == [1.0, 0.0]
    assert terminations.tolist() == [True, False] and not truncations.any()
    assert len(obs[1]["input"]) == first_len[1] and last_item(obs[1])["role"] == "user"
    assert info["_task_index"].tolist() == [False, True]  # env 1's info is its reset info
    assert info["_num_turns"].tolist() == [True, False]
    assert info["num_turns"][0] == 2

    # step 3: env 0 is reset; env 1 plays the first turn of its new episode.
    obs, rewards, terminations, _, info = envs.step([CALL, CALL])
    assert rewards.tolist() == [0.0, 0.0] and not terminations.any()
    assert last_item(obs[0])["role"] == "user"
    assert last_item(obs[1])["type"] == "function_call_output"
    assert info["_task_index"].tolist() == [True, False]


def test_same_step_autoreset() -> None:
    envs = weather_vec(2, autoreset_mode=AutoresetMode.SAME_STEP)
    envs.reset(seed=0)
    obs, rewards, terminations, _, info = envs.step([CALL, CALL])
    assert "final_obs" not in info and not terminations.any()

    obs, rewards, terminations, _, info = envs.step([ANSWER, CALL])
    assert rewards.tolist() == [1.0, 0.0] and terminations.tolist() == [True, False]
    assert info["_final_obs"].tolist() == [True, False] and info["_final_info"].tolist() == [True, False]
    final = info["final_obs"][0]
    assert last_item(final)["role"] == "assistant" and it.output_text([last_item(final)]) == ANSWER
    assert info["final_obs"][1] is None
    assert info["final_info"]["num_turns"][0] == 2
    assert info["final_info"]["_num_turns"].tolist() == [True, False]
    # The returned observation and top-level info already belong to env 0's next episode.
    assert last_item(obs[0])["role"] == "user"
    assert info["_task_index"].tolist() == [True, False]
    assert info["num_turns"][1] == 2

    # No wasted reset step: env 0 plays its new episode's first turn right away.
    obs, rewards, terminations, _, info = envs.step([CALL, ANSWER])
    assert last_item(obs[0])["type"] == "function_call_output"
    assert rewards.tolist() == [0.0, 1.0] and terminations.tolist() == [False, True]
    assert info["_final_obs"].tolist() == [False, True]


def test_disabled_autoreset_with_reset_mask() -> None:
    envs = weather_vec(3, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset(seed=0)
    envs.step([CALL, CALL, CALL])
    obs, rewards, terminations, _, _ = envs.step([ANSWER, CALL, ANSWER])
    assert terminations.tolist() == [True, False, True] and rewards.tolist() == [1.0, 0.0, 1.0]
    before = obs[1]

    with pytest.raises(RuntimeError, match=r"\[0, 2\].*reset_mask"):
        envs.step([CALL, ANSWER, CALL])

    mask = np.array([True, False, True])
    options = {"reset_mask": mask}
    obs, info = envs.reset(options=options)
    assert "reset_mask" in options  # the caller's dict is left alone (wrappers read it after us)
    assert info["_task_index"].tolist() == [True, False, True]
    assert last_item(obs[0])["role"] == "user" and last_item(obs[2])["role"] == "user"
    assert obs[1] == before and obs[1] is not before  # untouched episode, fresh copy

    _, rewards, terminations, _, _ = envs.step([CALL, ANSWER, CALL])
    assert terminations.tolist() == [False, True, False] and rewards.tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("mask", "error"),
    [
        ([True, False], TypeError),
        (np.array([True, False, True]), ValueError),
        (np.array([1, 0]), TypeError),
        (np.array([False, False]), ValueError),
    ],
)
def test_bad_reset_mask(mask: Any, error: type[Exception]) -> None:
    envs = weather_vec(2, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset(seed=0)
    with pytest.raises(error, match="reset_mask"):
        envs.reset(options={"reset_mask": mask})


def test_first_reset_cannot_be_masked() -> None:
    envs = weather_vec(2, autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(RuntimeError, match="first reset"):
        envs.reset(options={"reset_mask": np.array([True, False])})


# --------------------------------------------------------------------------- seeding, wrappers
def test_seeded_resets_are_deterministic() -> None:
    envs = weather_vec(4)
    obs_a, info_a = envs.reset(seed=0)
    obs_b, info_b = envs.reset(seed=0)
    assert obs_a == obs_b and obs_a is not obs_b
    assert info_a["task_index"].tolist() == info_b["task_index"].tolist()
    # seed=int gives sub-env i the seed + i, as gymnasium's vector envs do.
    obs_c, _ = envs.reset(seed=[0, 1, 2, 3])
    assert obs_c == obs_a
    # Distinct per-env seeds: with 6 tasks and 4 envs, not every env draws the same task.
    assert len(set(info_a["task_index"].tolist())) > 1
    other = weather_vec(4)
    assert other.reset(seed=0)[0] == obs_a
    seeds = [[s] * 4 for s in range(5)]
    assert len({tuple(envs.reset(seed=s)[1]["task_index"].tolist()) for s in seeds}) > 1


def test_task_index_option_pins_the_task() -> None:
    envs = weather_vec(3)
    _, info = envs.reset(options={"task_index": 2})
    assert info["task_index"].tolist() == [2, 2, 2]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_record_episode_statistics(mode: AutoresetMode) -> None:
    envs = RecordEpisodeStatistics(weather_vec(2, autoreset_mode=mode))
    envs.reset(seed=0)
    envs.step([CALL, ANSWER])
    _, _, _, _, info = envs.step([ANSWER, CALL])  # env 0 ends; env 1 restarts (NEXT_STEP) or calls
    assert info["_episode"][0]
    assert info["episode"]["r"][0] == 1.0 and info["episode"]["l"][0] == 2
    assert list(envs.return_queue) == [0.0, 1.0] and list(envs.length_queue) == [1, 2]


# --------------------------------------------------------------------------- gymnasium's vector envs
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_gymnasium_vector_envs_over_weather(kind: str) -> None:
    fns = [lambda: gym.make(WEATHER) for _ in range(2)]
    envs = SyncVectorEnv(fns) if kind == "sync" else AsyncVectorEnv(fns, shared_memory=False)
    try:
        obs, info = envs.reset(seed=0)
        # our observation space batches as a tuple of per-env dicts, in gymnasium's vector envs too
        assert len(obs) == 2 and obs[1]["tools"][0]["name"] == "get_weather"
        assert info["_task_index"].all()
        native = weather_vec(2).reset(seed=0)[0]
        assert obs == native  # same episodes, same seeds
        envs.step([CALL, CALL])
        _, rewards, terminations, _, info = envs.step([ANSWER, ANSWER])
        assert rewards.tolist() == [1.0, 1.0] and terminations.all()
        assert info["num_turns"].tolist() == [2, 2]
    finally:
        envs.close()
