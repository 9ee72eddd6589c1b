"""TRL's real GRPOTrainer on gym_llm envs, on CPU with the tiny offline model, in both modes."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from trainer_suites import require

require("trl", "torch", "trl", "datasets")

import torch  # noqa: E402
from tiny_model import ASSISTANT_HEADER, as_generation_kwarg, steering_bias, tiny_model, tiny_tokenizer  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

import gym_llm  # noqa: E402
from gym_llm.integrations.trl import environment_class, grpo_kwargs, train_dataset  # noqa: E402
from gym_llm.integrations.trl_rollout import task_of  # noqa: E402

WEATHER, MCQA = "llm/Weather-v0", "llm/MCQA-v0"
CALL = '<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'
AFTER_TOOL = "</tool_response><|im_end|>\n" + ASSISTANT_HEADER


def weather_bias(tokenizer, first_turn=None) -> dict:
    """First turn: a get_weather call (two cities) or a direct answer; after a tool output: an answer."""
    first_turn = first_turn or [
        CALL.format(name="get_weather", args='{"city": "SF"}'),
        CALL.format(name="get_weather", args='{"city": "Paris"}'),
        "It is cold.",
    ]
    return {
        **steering_bias(tokenizer, ASSISTANT_HEADER, first_turn),
        **steering_bias(tokenizer, AFTER_TOOL, ["It is cold there."]),
    }


def mcqa_bias(tokenizer) -> dict:
    return steering_bias(tokenizer, ASSISTANT_HEADER, [f"\\boxed{{{letter}}}" for letter in "ABCD"])


def train(tmp_path, kwargs, bias, **config):
    """Two GRPO steps with the tiny model; the trainer after training."""
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    defaults = dict(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=160,
        learning_rate=1e-3,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
        disable_tqdm=True,
        log_completions=False,
        generation_kwargs={"sequence_bias": as_generation_kwarg(bias(tokenizer))},
    )
    defaults.update(config)
    trainer = GRPOTrainer(
        model=tiny_model(tokenizer), args=GRPOConfig(**defaults), processing_class=tokenizer, **kwargs
    )
    trainer.train()
    return trainer


def step_logs(trainer) -> list[dict]:
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert trainer.state.global_step == 2 and len(logs) == 2
    for entry in logs:
        assert math.isfinite(entry["loss"]) and "rewards/gym_llm_reward/mean" in entry
    # shown with `pytest -s`: the figures a CPU run reaches
    print(f"\nrewards per step {[e['reward'] for e in logs]}, loss {[round(e['loss'], 4) for e in logs]}")
    return logs


class Spy:
    """Wraps the reward function: what it returned per step, and the env state it scored."""

    def __init__(self, reward_fn, pool=None):
        self.reward_fn, self.pool = reward_fn, pool
        self.rewards: list[list[float]] = []
        self.reverified: list[list[float]] = []
        self.infos: list[list[dict]] = []
        self.completions: list = []
        self.__name__ = reward_fn.__name__

    async def __call__(self, **kwargs):
        rewards = await self.reward_fn(**kwargs)
        self.rewards.append(rewards)
        self.infos.append(kwargs.get("verified_info") or [env._result[1] for env in kwargs["environments"]])
        self.completions.append(kwargs)
        if "environments" in kwargs:
            scored = [(env._env_id, env._env) for env in kwargs["environments"]]
        else:  # rollout mode: the pool's envs hold the episodes just played (all of them, when it is full)
            scored = [(env_id, env) for env_id, envs in self.pool._free.items() for env in envs]
        # an independent verdict on each scored episode, from the env's own record of it
        if len(scored) == len(rewards):
            self.reverified.append(
                sorted(gym_llm.verify(env_id, record(env)).reward for env_id, env in scored)
            )
        else:
            self.reverified.append(None)
        return rewards


def record_rollouts(kwargs) -> list[dict]:
    """Wrap ``kwargs["rollout_func"]``: the list it returns fills with every rollout batch played."""
    rollouts: list[dict] = []
    loop = kwargs["rollout_func"]

    def recording_rollout(prompts, trainer):
        out = loop(prompts, trainer)
        rollouts.append(out)
        return out

    kwargs["rollout_func"] = recording_rollout
    return rollouts


def record(env) -> dict:
    return {**env.task, "response": env.response}


def test_environment_class_exposes_exactly_the_env_tools_with_their_schemas():
    from transformers.utils import get_json_schema

    cls = environment_class("llm/MultiStep-v0")
    import inspect

    public = sorted(n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_"))
    assert public == ["extract_synonym_values", "get_synonym_value", "reset"]
    schema = get_json_schema(cls().extract_synonym_values)
    params = schema["function"]["parameters"]
    assert params["required"] == ["synonym_values"]
    assert params["properties"]["synonym_values"]["type"] == "array"
    assert params["properties"]["synonym_values"]["items"] == {"type": "integer"}


@pytest.mark.parametrize("env_id", gym_llm.env_ids())
def test_every_env_tool_renders_through_trl_schema_generation(env_id):
    from transformers.utils import get_json_schema

    try:
        cls = environment_class(env_id)
    except ImportError as exc:  # an env whose optional dependency is absent here
        pytest.skip(str(exc))
    instance = cls()
    for name in instance._env.tools:
        schema = get_json_schema(getattr(instance, name))
        assert schema["function"]["name"] == name and schema["function"]["description"]


def test_tools_run_in_the_env_and_errors_raise_for_trl():
    cls = environment_class(WEATHER)
    env = cls()
    env.reset(prompt=[], env_id=WEATHER, task_index=0)
    import asyncio

    out = asyncio.run(env.get_weather(city="Rome"))
    assert json.loads(out)["weather_description"] == "The weather in Rome is cold."
    with pytest.raises(RuntimeError, match="Invalid arguments for get_weather"):
        asyncio.run(env.get_weather(city=3))
    reward, info = asyncio.run(env._finish({"role": "assistant", "content": "Cold."}))
    assert reward == 1.0 and info["tool_errors"] == 1


def test_train_dataset_rows_and_rollout_tags():
    pool_envs = {WEATHER: gym_llm.integrations.episodes.make_env(WEATHER)}
    plain = train_dataset(pool_envs)
    tagged = train_dataset(pool_envs, tag_tasks=True)
    assert plain[0]["prompt"][0]["role"] == "system"  # developer -> system for Qwen templates
    assert plain.column_names == ["prompt", "env_id", "task_index"]
    assert task_of(tagged[3]["prompt"]) == (WEATHER, 3)


def test_grpo_kwargs_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown env id"):
        grpo_kwargs("llm/Nope-v0")
    with pytest.raises(ValueError, match="mode must be one of"):
        grpo_kwargs(WEATHER, mode="online")
    with pytest.raises(ValueError, match="mapping"):
        grpo_kwargs([WEATHER, MCQA], tasks=[{"responses_create_params": {"input": "hi"}}])


@pytest.mark.parametrize("mode", ["environment", "rollout"])
def test_grpo_on_weather(tmp_path, mode):
    kwargs = grpo_kwargs(WEATHER, mode=mode)
    spy = Spy(kwargs["reward_funcs"][0], getattr(kwargs.get("rollout_func"), "pool", None))
    kwargs["reward_funcs"] = [spy]
    extra = {"max_tool_calling_iterations": 2} if mode == "environment" else {}
    trainer = train(tmp_path, kwargs, weather_bias, **extra)
    logs = step_logs(trainer)
    for entry, rewards, reverified in zip(logs, spy.rewards, spy.reverified, strict=True):
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))
        assert sorted(rewards) == reverified  # the logged reward is the verifier's
    all_rewards = [r for step in spy.rewards for r in step]
    assert set(all_rewards) == {0.0, 1.0}, all_rewards  # variance: GRPO learns something
    calls = [info["num_turns"] for step in spy.infos for info in step]
    assert max(calls) >= 2  # a tool call ran in the env, then the model answered
    if mode == "environment":
        assert any(entry["tools/call_frequency"] > 0 for entry in logs)
    assert any(entry["loss"] != 0.0 for entry in logs)


@pytest.mark.parametrize("mode", ["environment", "rollout"])
def test_grpo_on_mcqa_logs_reward_components(tmp_path, mode):
    kwargs = grpo_kwargs(MCQA, mode=mode)
    spy = Spy(kwargs["reward_funcs"][0], getattr(kwargs.get("rollout_func"), "pool", None))
    kwargs["reward_funcs"] = [spy]
    trainer = train(tmp_path, kwargs, mcqa_bias, max_completion_length=24)
    logs = step_logs(trainer)
    for entry, rewards, reverified in zip(logs, spy.rewards, spy.reverified, strict=True):
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))
        assert sorted(rewards) == reverified
        assert entry[f"gym_llm/{MCQA}/accuracy"] == pytest.approx(sum(rewards) / len(rewards))
        assert f"gym_llm/{MCQA}/no_answer" in entry


@pytest.mark.parametrize("mode", ["environment", "rollout"])
def test_grpo_on_weather_and_mcqa_together(tmp_path, mode):
    kwargs = grpo_kwargs([WEATHER, MCQA], mode=mode)
    if mode == "environment":
        assert set(kwargs["environment_factory"]) == {WEATHER, MCQA}
        assert set(kwargs["train_dataset"]["environment"]) == {WEATHER, MCQA}
    spy = Spy(kwargs["reward_funcs"][0], getattr(kwargs.get("rollout_func"), "pool", None))
    kwargs["reward_funcs"] = [spy]
    bias = lambda tok: {**mcqa_bias(tok), **weather_bias(tok)}  # noqa: E731
    extra = {"max_tool_calling_iterations": 2} if mode == "environment" else {}
    trainer = train(tmp_path, kwargs, bias, per_device_train_batch_size=8, num_generations=4, **extra)
    logs = step_logs(trainer)
    envs_seen = Counter(env_id for kw in spy.completions for env_id in kw.get("env_id", []))
    assert set(envs_seen) == {WEATHER, MCQA}
    for entry, rewards in zip(logs, spy.rewards, strict=True):
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))


def test_rollout_mode_keeps_the_env_turn_rules(tmp_path):
    """Unknown tools and malformed calls get error outputs (masked); the turn budget ends the episode."""
    kwargs = grpo_kwargs(WEATHER, mode="rollout", max_turns=2)
    spy = Spy(kwargs["reward_funcs"][0], kwargs["rollout_func"].pool)
    kwargs["reward_funcs"] = [spy]
    rollouts = record_rollouts(kwargs)
    bad_calls = [
        CALL.format(name="get_forecast", args='{"city": "SF"}'),
        "<tool_call>\n{not json\n</tool_call>",
    ]
    bias = lambda tok: steering_bias(tok, ASSISTANT_HEADER, bad_calls)  # noqa: E731
    trainer = train(tmp_path, kwargs, bias, max_completion_length=400)
    step_logs(trainer)
    tokenizer = trainer.processing_class
    for out, infos in zip(rollouts, spy.infos, strict=True):
        episodes = zip(out["completion_ids"], out["env_mask"], infos, out["verified_reward"], strict=True)
        for ids, mask, info, reward in episodes:
            assert info["num_turns"] == 2 and info["tool_errors"] == 2
            assert info["failure_kind"] == "max_turns" and reward == 0.0
            env_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
            model_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1])
            assert "<tool_response>" in env_text and "<tool_response>" not in model_text
            assert "Unknown tool 'get_forecast'" in env_text or "Malformed tool call" in env_text


def test_rollout_mode_plays_a_simulated_user(tmp_path):
    """SupportDesk's scripted customer answers each reply: its messages join the token stream as env
    tokens (masked), and the verified reward (the shop's final state) reaches the logs."""
    support = "llm/SupportDesk-v0"
    kwargs = grpo_kwargs(support, mode="rollout")
    spy = Spy(kwargs["reward_funcs"][0], kwargs["rollout_func"].pool)
    kwargs["reward_funcs"] = [spy]
    rollouts = record_rollouts(kwargs)
    bias = lambda tok: steering_bias(tok, ASSISTANT_HEADER, ["Could you confirm your email address?"])  # noqa: E731
    trainer = train(tmp_path, kwargs, bias, max_completion_length=240)
    logs = step_logs(trainer)
    tokenizer = trainer.processing_class
    scripts = {line for task in gym_llm.registry.make_llm_env(support).tasks for line in task["user_script"]}
    for entry, rewards, reverified in zip(logs, spy.rewards, spy.reverified, strict=True):
        assert entry["reward"] == pytest.approx(sum(rewards) / len(rewards))
        assert reverified is None or sorted(rewards) == reverified
    for out in rollouts:
        for ids, mask in zip(out["completion_ids"], out["env_mask"], strict=True):
            env_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 0])
            model_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m == 1])
            assert any(line in env_text for line in scripts), env_text  # the customer spoke, as env tokens
            assert not any(line in model_text for line in scripts)
    infos = [info for step in spy.infos for info in step]
    assert all(info["num_turns"] >= 2 and info["failure_kind"] != "user_sim_error" for info in infos)
