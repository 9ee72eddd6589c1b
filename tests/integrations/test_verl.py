"""VeRL's real rollout chain on gym_llm rows: RLHFDataset -> collate_fn -> AgentLoopWorker.

The worker is VeRL's own, built from VeRL's own config (hydra) without Ray; only the LLM server is
stood in for: a scripted token server, and the tiny offline model generating on CPU.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from trainer_suites import require

require("verl", "torch", "verl")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tiny_model import ASSISTANT_HEADER, steering_bias, tiny_model, tiny_tokenizer  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import gym_llm  # noqa: E402
from gym_llm.integrations.verl import agent_loop_yaml, compute_score, write_parquet  # noqa: E402

WEATHER, MCQA = "llm/Weather-v0", "llm/MCQA-v0"


class ScriptedServer:
    """VeRL's LLM server client, scripted: a Weather prompt gets a tool call, then an answer; an
    MCQA prompt the right letter on even rows and a wrong one on odd rows."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.calls = 0

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        self.calls += 1
        prompt = self.tokenizer.decode(prompt_ids)
        if "<tool_response>" in prompt:
            text = "It is cold there."
        elif "get_weather" in prompt:
            text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>'
        else:
            letter = "B" if "Polymerase" in prompt else "A"
            text = f"\\boxed{{{letter}}}"
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.25] * len(ids), stop_reason="completed")


class TinyModelServer:
    """VeRL's LLM server client backed by the tiny model's ``generate`` on CPU (sampled, steered)."""

    def __init__(self, tokenizer, model):
        self.tokenizer, self.model = tokenizer, model
        calls = [
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>',
            "It is cold.",
        ]
        after_tool = "</tool_response><|im_end|>\n" + ASSISTANT_HEADER
        bias = {
            **steering_bias(tokenizer, ASSISTANT_HEADER, calls + [f"\\boxed{{{x}}}" for x in "ABCD"]),
            **steering_bias(tokenizer, after_tool, ["Cold."]),
        }
        self.bias = {key: value for key, value in bias.items()}

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        inputs = torch.tensor([prompt_ids])
        with torch.no_grad():
            out = self.model.generate(
                inputs,
                attention_mask=torch.ones_like(inputs),
                max_new_tokens=64,
                do_sample=True,
                sequence_bias=self.bias,
                output_scores=True,
                return_dict_in_generate=True,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
            )
        ids = out.sequences[0, inputs.shape[1] :].tolist()
        logprobs = [torch.log_softmax(s[0], -1)[t].item() for s, t in zip(out.scores, ids, strict=False)]
        if self.tokenizer.eos_token_id in ids:
            cut = ids.index(self.tokenizer.eos_token_id) + 1
            ids, logprobs = ids[:cut], logprobs[:cut]
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")


def verl_config(tmp_path: Path, model_dir: Path, loop_yaml: Path):
    """VeRL's own trainer config (its hydra files), pointed at the tiny model and our agent loop."""
    import verl
    from hydra import compose, initialize_config_dir

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={model_dir}",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_yaml}",
                "actor_rollout_ref.rollout.prompt_length=2048",
                "actor_rollout_ref.rollout.response_length=512",
                "actor_rollout_ref.rollout.calculate_log_probs=true",
                "actor_rollout_ref.rollout.name=vllm",
                "data.max_prompt_length=2048",
                "data.max_response_length=512",
                "data.filter_overlong_prompts_workers=1",
            ],
        )


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verl")
    tokenizer = tiny_tokenizer()
    model_dir = tmp / "tiny"
    tokenizer.save_pretrained(model_dir)
    tiny_model(tokenizer).save_pretrained(model_dir)
    data = tmp / "train.parquet"
    count = write_parquet([WEATHER, MCQA], data)
    loop_yaml = agent_loop_yaml(tmp / "agent_loops.yaml", env_ids=[WEATHER, MCQA])
    config = verl_config(tmp, model_dir, loop_yaml)
    dataset = RLHFDataset(data_files=[str(data)], tokenizer=tokenizer, processor=None, config=config.data)
    assert len(dataset) == count
    return {"config": config, "dataset": dataset, "tokenizer": tokenizer, "model_dir": model_dir}


def rollout(setup, server, batch_size=8) -> DataProto:
    loader = DataLoader(setup["dataset"], batch_size=batch_size, shuffle=False, collate_fn=collate_fn)
    batch = DataProto.from_single_dict(next(iter(loader)))
    worker = AgentLoopWorker(setup["config"], llm_client=server)
    return asyncio.run(worker.generate_sequences(batch))


def rewards_and_masks(output: DataProto, tokenizer):
    """Per sample: the reward VeRL will train on, and the decoded model / env parts of the response."""
    rows = []
    for i in range(len(output)):
        mask = output.batch["response_mask"][i]
        responses = output.batch["responses"][i]
        length = int(output.batch["attention_mask"][i, -responses.shape[0] :].sum())
        scores = output.batch["rm_scores"][i]
        assert torch.count_nonzero(scores[length:]) == 0  # the score sits on the last response token
        model_ids = [int(t) for t, m in zip(responses[:length], mask[:length], strict=True) if m == 1]
        env_ids = [int(t) for t, m in zip(responses[:length], mask[:length], strict=True) if m == 0]
        rows.append((float(scores[length - 1]), tokenizer.decode(model_ids), tokenizer.decode(env_ids)))
    return rows


def test_parquet_rows_load_through_rlhf_dataset(setup):
    item = setup["dataset"][0]
    assert item["agent_name"] == "gym_llm" and item["data_source"] == WEATHER
    assert item["extra_info"]["env_id"] == WEATHER and item["raw_prompt"][0]["role"] == "system"
    task = json.loads(item["extra_info"]["task"])
    assert task["responses_create_params"]["input"][1]["content"] == item["raw_prompt"][1]["content"]


def test_agent_loop_with_a_scripted_token_server(setup):
    tokenizer = setup["tokenizer"]
    output = rollout(setup, ScriptedServer(tokenizer))
    rows = rewards_and_masks(output, tokenizer)
    envs = list(output.non_tensor_batch["data_source"])
    assert set(envs) == {WEATHER, MCQA}
    samples = zip(envs, rows, output.non_tensor_batch["gym_llm"], strict=True)
    for env_id, (reward, model_text, env_text), row_info in samples:
        assert row_info["env_id"] == env_id
        if env_id == WEATHER:
            assert reward == 1.0 and "get_weather" in model_text and "It is cold there." in model_text
            assert "<tool_response>" in env_text and "The weather in SF is cold." in env_text
            assert "<tool_response>" not in model_text
        else:
            assert env_text == "" and reward in (0.0, 1.0)
    mcqa_rewards = [r for (r, _, _), e in zip(rows, envs, strict=True) if e == MCQA]
    assert sorted(set(mcqa_rewards)) == [0.0, 1.0]
    assert "rollout_log_probs" in output.batch.keys()
    # fixed component names in every sample, NaN for the other env's
    accuracy = output.non_tensor_batch[f"{MCQA}/accuracy"]
    for env_id, value, (reward, _, _) in zip(envs, accuracy, rows, strict=True):
        assert math.isnan(value) if env_id == WEATHER else value == reward
    assert output.meta_info["reward_extra_keys"] == [f"{MCQA}/accuracy", f"{MCQA}/no_answer", "tool_errors"]


def test_agent_loop_with_the_tiny_model(setup):
    tokenizer = setup["tokenizer"]
    torch.manual_seed(0)
    model = tiny_model(tokenizer)
    output = rollout(setup, TinyModelServer(tokenizer, model))
    rows = rewards_and_masks(output, tokenizer)
    infos = output.non_tensor_batch["gym_llm"]
    # every reward is the env's verdict on the episode it played
    for (reward, model_text, env_text), info in zip(rows, infos, strict=True):
        assert reward in (0.0, 1.0) and info["env_turns"] >= 1
        if info["env_id"] == WEATHER:
            assert reward == float("get_weather" in model_text)
            assert ("<tool_response>" in env_text) == (info["env_turns"] > 1)
    assert any(info["env_turns"] > 1 for info in infos)  # a tool really ran in the env
    print("\nVeRL tiny-model rewards", [r for r, _, _ in rows])


def test_compute_score_matches_the_env_verifier(setup):
    item = setup["dataset"][6]
    assert item["data_source"] == MCQA
    task = json.loads(item["extra_info"]["task"])
    for answer in "ABCD":
        result = compute_score(item["data_source"], f"\\boxed{{{answer}}}", None, item["extra_info"])
        row = {**task, "response": {"output": [gym_llm.items.message(f"\\boxed{{{answer}}}")]}}
        assert result["score"] == gym_llm.verify(MCQA, row).reward
        assert set(result) == {"score", "accuracy", "no_answer"}
    assert np.isclose(
        compute_score(item["data_source"], f"\\boxed{{{task['expected_answer']}}}", None, item["extra_info"])[
            "score"
        ],
        1.0,
    )
