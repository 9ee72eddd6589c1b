"""Every registered env: makes, passes gymnasium's checker, and scores 1.0 with its reference."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm
from gym_llm.testing import play_reference

ENV_IDS = gym_llm.env_ids()


def test_the_first_envs_are_registered():
    assert {"llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"} <= set(ENV_IDS)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_passes(env_id):
    env = gymnasium.make(env_id)
    check_env(env.unwrapped, skip_render_check=False)
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reference_scores_one_on_the_first_task(env_id):
    env = gymnasium.make(env_id)
    assert play_reference(env, task_index=0).reward == 1.0
    env.close()


def test_make_with_module_prefix_works_without_importing_gym_llm():
    code = (
        "import gymnasium, sys\n"
        "env = gymnasium.make('gym_llm:llm/Weather-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(obs['tools'][0]['name'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "get_weather"


def test_verify_re_scores_a_recorded_row():
    env = gymnasium.make("llm/Weather-v0")
    result = play_reference(env, task_index=2)
    row = {**env.unwrapped.task, "response": env.unwrapped.response}
    assert gym_llm.verify("llm/Weather-v0", row).reward == result.reward == 1.0
    row["response"] = {"output": [{"type": "message", "role": "assistant", "content": "no call"}]}
    assert gym_llm.verify("llm/Weather-v0", row).reward == 0.0
    with pytest.raises(gym_llm.TaskError, match=r"response\.output"):
        gym_llm.verify("llm/Weather-v0", {**env.unwrapped.task})


def test_client_envs_are_registered_but_not_listed():
    """llm/Remote-v0 and llm/NeMoGym-v0 need a server: registered, but not among the bundled envs."""
    assert {"llm/Remote-v0", "llm/NeMoGym-v0"} <= set(gymnasium.registry)
    assert not {"llm/Remote-v0", "llm/NeMoGym-v0"} & set(gym_llm.env_ids())
