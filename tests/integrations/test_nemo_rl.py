"""The NeMo RL environment, driven the way NeMo RL's multi-turn rollout drives it.

NeMo RL is not on PyPI, so the suite checks the exact field names and call shapes NeMo RL uses
(its ``EnvironmentReturn`` fields, ``DatumSpec`` keys, raw-text observations) and, where Ray is
installed, runs the env as a Ray actor. The test of NeMo RL's own rollout code runs only where
``nemo_rl`` is importable.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from trainer_suites import require

require("nemo_rl", "torch", "transformers")

import torch  # noqa: E402
from tiny_model import tiny_tokenizer  # noqa: E402

import gym_llm  # noqa: E402
from gym_llm.integrations.nemo_rl import EnvironmentReturn, GymLLMEnvironment, datum_spec, datum_specs  # noqa: E402

WEATHER, MCQA = "llm/Weather-v0", "llm/MCQA-v0"
NEMO_RL_FIELDS = ("observations", "metadata", "next_stop_strings", "rewards", "terminateds", "answers")
TOOL_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>'


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def play(env, specs, replies_for):
    """NeMo RL's multi-turn loop in miniature: generate (scripted), step, append the observation
    text tokenized raw, until every sample terminates. Returns each sample's token stream, reward
    and turn count."""
    tok = env.chat.tokenizer
    logs = [list(spec["message_log"]) for spec in specs]
    metadata = [spec["extra_env_info"] for spec in specs]
    rewards = [0.0] * len(specs)
    turns = [0] * len(specs)
    active = list(range(len(specs)))
    while active:
        batch = []
        for i in active:
            text = replies_for(i, turns[i])
            ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            logs[i].append({"role": "assistant", "content": text, "token_ids": torch.tensor(ids)})
            turns[i] += 1
            batch.append([{"role": m["role"], "content": m["content"]} for m in logs[i]])  # role/content only
        out = env.step(batch, [metadata[i] for i in active])
        still = []
        for k, i in enumerate(active):
            rewards[i] += float(out.rewards[k])
            if out.terminateds[k]:
                assert out.metadata[k] is None
                continue
            content = out.observations[k]["content"]
            ids = tok(content, add_special_tokens=False)["input_ids"]  # NeMo RL: raw, no chat template
            logs[i].append({"role": "environment", "content": content, "token_ids": torch.tensor(ids)})
            metadata[i] = out.metadata[k]
            still.append(i)
        active = still
    streams = [torch.cat([m["token_ids"] for m in log]).tolist() for log in logs]
    return streams, rewards, turns


def test_environment_return_has_nemo_rls_fields():
    assert EnvironmentReturn._fields == NEMO_RL_FIELDS


def test_datum_spec_has_nemo_rls_keys_and_the_rendered_prompt(tokenizer):
    specs = list(datum_specs([WEATHER, MCQA], tokenizer))
    assert len(specs) == 12 and [s["idx"] for s in specs] == list(range(12))
    spec = specs[0]
    assert set(spec) == {"message_log", "length", "extra_env_info", "loss_multiplier", "idx", "task_name"}
    message = spec["message_log"][0]
    assert message["role"] == "user" and message["content"].endswith("<|im_start|>assistant\n")
    assert "get_weather" in message["content"]  # the tools are in the prompt
    assert (
        message["token_ids"].tolist() == tokenizer(message["content"], add_special_tokens=False)["input_ids"]
    )
    assert spec["length"] == len(message["token_ids"]) and spec["extra_env_info"]["env_id"] == WEATHER


def test_multi_turn_episodes_give_a_chat_format_token_stream_and_verified_rewards(tokenizer):
    env = GymLLMEnvironment({"tokenizer": tokenizer})
    specs = [
        datum_spec(json.loads(json.dumps(t)), tokenizer, i, WEATHER)
        for i, t in enumerate(_tasks(WEATHER)[:2])
    ]
    specs += [datum_spec(t, tokenizer, 2 + i, MCQA) for i, t in enumerate(_tasks(MCQA)[:2])]
    gold = [None, None, _tasks(MCQA)[0]["expected_answer"], "Z"]

    def replies(i, turn):
        if i < 2:  # Weather: a tool call, then an answer (sample 1 answers at once: reward 0)
            return TOOL_CALL if turn == 0 and i == 0 else "It is cold."
        return f"\\boxed{{{gold[i]}}}"

    streams, rewards, turns = play(env, specs, replies)
    assert rewards == [1.0, 0.0, 1.0, 0.0] and turns == [2, 1, 1, 1]
    # the Weather episode's tokens are exactly what the chat template renders for its conversation
    # (up to the last turn, which the model wrote itself)
    conversation = [
        *prompt_messages(_tasks(WEATHER)[0]),
        {"role": "assistant", "tool_calls": [_call("get_weather", {"city": "SF"})]},
        {"role": "tool", "name": "get_weather", "content": json.dumps(_weather("SF"), separators=(",", ":"))},
    ]
    tools = [{"type": "function", "function": _fn_schema()}]
    rendered = tokenizer.apply_chat_template(
        conversation, tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert tokenizer.decode(streams[0]) == rendered + "It is cold.<|im_end|>"
    assert env._episodes == {}  # every finished episode handed its env back


def test_reward_components_as_a_dict_of_tensors(tokenizer):
    env = GymLLMEnvironment({"tokenizer": tokenizer, "reward_components": True})
    spec = datum_spec(_tasks(MCQA)[0], tokenizer, 0, MCQA)
    answer = "\\boxed{" + _tasks(MCQA)[0]["expected_answer"] + "}"
    out = env.step(
        [[{"role": "user", "content": "q"}, {"role": "assistant", "content": answer}]],
        [spec["extra_env_info"]],
    )
    assert set(out.rewards) == {"reward", "accuracy", "no_answer"}
    assert out.rewards["reward"].tolist() == [1.0] and out.rewards["accuracy"].tolist() == [1.0]
    _, metrics = env.global_post_process_and_metrics({"total_reward": torch.tensor([1.0, 0.0])})
    assert metrics == {"gym_llm/success_rate": 0.5, "gym_llm/mean_reward": 0.5}


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed here")
def test_runs_as_a_ray_actor(tokenizer):
    import ray

    from gym_llm.integrations.nemo_rl import ray_actor

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        actor = ray_actor({"tokenizer": tokenizer})
        spec = datum_spec(_tasks(WEATHER)[0], tokenizer, 0, WEATHER)
        log = [{"role": "user", "content": "q"}, {"role": "assistant", "content": TOOL_CALL}]
        out = ray.get(actor.step.remote([log], [spec["extra_env_info"]]))
        assert out.terminateds.tolist() == [False] and "<tool_response>" in out.observations[0]["content"]
        log += [out.observations[0], {"role": "assistant", "content": "Cold."}]
        out = ray.get(actor.step.remote([log], out.metadata))
        assert out.terminateds.tolist() == [True] and out.rewards.tolist() == [1.0] and out.metadata == [None]
    finally:
        ray.shutdown()


@pytest.mark.skipif(
    importlib.util.find_spec("nemo_rl") is None,
    reason="nemo_rl is not importable (NeMo RL is not on PyPI; put its source on PYTHONPATH to run this)",
)
def test_nemo_rls_own_calculate_rewards(tokenizer):
    import ray
    from nemo_rl.distributed.batched_data_dict import BatchedDataDict
    from nemo_rl.environments.interfaces import EnvironmentInterface
    from nemo_rl.experience.rollouts import calculate_rewards

    from gym_llm.integrations.nemo_rl import ray_actor

    assert issubclass(GymLLMEnvironment, EnvironmentInterface)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        specs = [datum_spec(t, tokenizer, i, MCQA) for i, t in enumerate(_tasks(MCQA)[:2])]
        answers = ["\\boxed{" + _tasks(MCQA)[0]["expected_answer"] + "}", "\\boxed{Z}"]
        batch = BatchedDataDict(
            {
                "message_log": [
                    [*s["message_log"], {"role": "assistant", "content": a, "token_ids": torch.tensor([1])}]
                    for s, a in zip(specs, answers, strict=True)
                ],
                "task_name": ["gym_llm", "gym_llm"],
                "extra_env_info": [s["extra_env_info"] for s in specs],
            }
        )
        ret = calculate_rewards(batch, {"gym_llm": ray_actor({"tokenizer": tokenizer})})
        assert ret.rewards.tolist() == [1.0, 0.0] and ret.terminateds.tolist() == [True, True]
    finally:
        ray.shutdown()


def _tasks(env_id):
    return list(gym_llm.integrations.episodes.make_env(env_id).tasks)


def prompt_messages(task):
    return gym_llm.integrations.episodes.prompt_messages(task)


def _call(name, args):
    return {"id": "call_weather", "type": "function", "function": {"name": name, "arguments": args}}


def _weather(city):
    return {"city": city, "weather_description": f"The weather in {city} is cold."}


def _fn_schema():
    env = gym_llm.integrations.episodes.make_env(WEATHER)
    obs, _ = env.reset(options={"task_index": 0})
    schema = dict(obs["tools"][0])
    return {key: schema[key] for key in ("name", "description", "parameters", "strict") if key in schema}
