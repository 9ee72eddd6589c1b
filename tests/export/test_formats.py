"""The export formats on collected rollouts: what each record holds and what is left out."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gym_llm
from gym_llm.chat_format import to_chat_tools
from gym_llm.export import ExportError, export, to_dataset
from gym_llm.export.messages import ROLLOUT_FIELDS


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def drop_none(value):
    """``value`` without the ``None`` fields Arrow fills in for keys a row lacks."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


def masked_keys(rows):
    return {(r["env_id"], r["task_index"], r["repeat_index"]) for r in rows if r["mask_sample"]}


# --------------------------------------------------------------------- sft
def test_sft_has_chat_messages_with_tool_calls_tool_messages_and_tools(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    ds = to_dataset(mixed_rollouts, "sft")
    assert len(ds) == sum(not r["mask_sample"] for r in rows) == 18
    assert not masked_keys(rows) & {(r["env_id"], r["task_index"], r["repeat_index"]) for r in ds}

    source = next(r for r in rows if r["env_id"] == "llm/Weather-v0" and r["reward"] == 1.0)
    record = next(
        r
        for r in ds
        if (r["env_id"], r["task_index"], r["repeat_index"])
        == (source["env_id"], source["task_index"], source["repeat_index"])
    )
    messages = drop_none(record["messages"])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == source["responses_create_params"]["input"][0]["content"]  # developer
    call = next(item for item in source["response"]["output"] if item["type"] == "function_call")
    output = next(item for item in source["response"]["output"] if item["type"] == "function_call_output")
    assert messages[2]["reasoning_content"] == "Let me use the tools."
    assert messages[2]["tool_calls"] == [
        {
            "id": call["call_id"],
            "type": "function",
            "function": {"name": "get_weather", "arguments": call["arguments"]},
        }
    ]
    assert messages[3] == {
        "role": "tool",
        "content": output["output"],
        "tool_call_id": call["call_id"],
        "name": "get_weather",
    }
    assert json.loads(record["tools"]) == to_chat_tools(source["responses_create_params"]["tools"])
    assert record["reward"] == 1.0


def test_sft_min_reward_keeps_rewarded_rollouts_and_masked_ones_never_pass(mixed_rollouts, tmp_path):
    rows = read_rows(mixed_rollouts)
    for row in rows:  # a masked rollout that somehow holds a reward is still no training data
        if row["mask_sample"]:
            row["reward"] = 1.0
    result = export(rows, tmp_path / "sft.jsonl", "sft", min_reward=1.0)
    written = read_rows(tmp_path / "sft.jsonl")
    assert result.rows == len(written) == 12
    assert all(r["reward"] == 1.0 for r in written)
    assert result.skipped == {"below_min_reward": 6, "masked": 6}
    assert not masked_keys(rows) & {(r["env_id"], r["task_index"], r["repeat_index"]) for r in written}


def test_a_row_without_a_request_is_named(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    del rows[4]["responses_create_params"]
    with pytest.raises(ExportError, match=r"rollout 5: the row has no responses_create_params.input"):
        to_dataset(rows, "sft")


# --------------------------------------------------------------------- dpo
def test_dpo_pairs_the_best_and_worst_rollout_of_each_task(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    ds = to_dataset(mixed_rollouts, "dpo")
    assert len(ds) == 6  # 3 tasks of 2 envs
    for pair in ds:
        assert (pair["chosen_reward"], pair["rejected_reward"]) == (1.0, 0.0)
        chosen_row = next(
            r
            for r in rows
            if (r["env_id"], r["task_index"], r["repeat_index"])
            == (pair["env_id"], pair["task_index"], pair["chosen_repeat_index"])
        )
        assert chosen_row["reward"] == 1.0 and not chosen_row["mask_sample"]
        assert drop_none(pair["prompt"])[-1]["role"] == "user"
        assert drop_none(pair["rejected"]) == [
            {"role": "assistant", "content": "<b>I do not know.</b>", "reasoning_content": "No idea."}
        ]
        assert drop_none(pair["chosen"])[0]["tool_calls"][0]["type"] == "function"
        assert drop_none(pair["chosen"])[-1]["role"] == "assistant"


def test_dpo_all_pairs_skip_ties_and_tasks_without_a_winner(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    result = export(mixed_rollouts, None, "dpo", pairs="all", push_to_hub="me/x", push=lambda *a, **k: None)
    # per task the unmasked rewards are 1, 0, 1: two pairs, one tie
    assert result.rows == 12
    assert result.skipped == {"masked": 6, "tied_pairs": 6}
    all_right = [r for r in rows if r["reward"] == 1.0]
    assert len(to_dataset(all_right, "dpo")) == 0


def test_no_rows_to_write_is_an_error_that_says_why(mixed_rollouts, tmp_path):
    all_right = [r for r in read_rows(mixed_rollouts) if r["reward"] == 1.0]
    for out in (tmp_path / "dpo.parquet", tmp_path / "dpo_dir"):
        with pytest.raises(
            ExportError, match=r"no dpo rows to write from 12 rollouts \(skipped: tied_tasks=6\)"
        ):
            export(all_right, out, "dpo")
        assert not out.exists()
    with pytest.raises(ExportError, match=r"no sft rows .*skipped: below_min_reward=24"):
        export(mixed_rollouts, tmp_path / "sft.jsonl", "sft", min_reward=2)
    assert list(tmp_path.iterdir()) == []


def test_dpo_reads_the_same_pairs_from_a_file_as_from_rows(mixed_rollouts):
    from_file = to_dataset(mixed_rollouts, "dpo", pairs="all").to_list()
    from_rows = to_dataset(read_rows(mixed_rollouts), "dpo", pairs="all").to_list()
    assert from_file == from_rows


# --------------------------------------------------------------------- prompts
def test_prompts_keep_each_task_once_with_the_row_to_verify_against(mixed_rollouts):
    rows = read_rows(mixed_rollouts)
    ds = to_dataset(mixed_rollouts, "prompts")
    assert [(r["env_id"], r["task_index"]) for r in ds] == [
        (env, t) for env in ("llm/Weather-v0", "llm/MultiStep-v0") for t in range(3)
    ]
    for record in ds:
        task = json.loads(record["task"])
        assert not set(task) & ROLLOUT_FIELDS
        assert drop_none(record["prompt"])[-1] == {
            "role": "user",
            "content": task["responses_create_params"]["input"][-1]["content"],
        }
        # a completion is verified against the task: a recorded rollout scores as it did
        for rollout in rows:
            key = (rollout["env_id"], rollout["task_index"])
            if key == (record["env_id"], record["task_index"]) and not rollout["mask_sample"]:
                verdict = gym_llm.verify(record["env_id"], {**task, "response": rollout["response"]})
                assert verdict.reward == rollout["reward"]


# --------------------------------------------------------------------- verl
def test_verl_parquet_has_rlhf_dataset_columns(mixed_rollouts, tmp_path):
    out = tmp_path / "verl.parquet"
    result = export(mixed_rollouts, out, "verl", split="test")
    assert result.kind == "parquet" and result.rows == 6
    table = pq.read_table(out)
    columns = ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
    assert table.schema.names == columns
    assert table.schema.field("prompt").type == pa.list_(
        pa.struct([("role", pa.string()), ("content", pa.string())])
    )
    first = table.to_pylist()[0]
    assert first["data_source"] == "llm/Weather-v0"
    assert first["ability"] == "Weather"
    assert first["agent_name"] == "gym_llm"
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert first["reward_model"]["style"] == "rule"
    assert first["reward_model"]["ground_truth"] == ""  # Weather rows carry no expected answer
    infos = [row["extra_info"] for row in table.to_pylist()][:2]
    assert [json.loads(info.pop("task"))["responses_create_params"]["tools"] != [] for info in infos] == [
        True
    ] * 2
    assert infos == [
        {"index": 0, "split": "test", "env_id": "llm/Weather-v0", "task_index": 0},
        {"index": 1, "split": "test", "env_id": "llm/Weather-v0", "task_index": 1},
    ]


def test_unknown_format_and_misplaced_options_are_errors(mixed_rollouts):
    with pytest.raises(ExportError, match="unknown format 'csv'"):
        to_dataset(mixed_rollouts, "csv")
    with pytest.raises(ExportError, match="min_reward applies to the raw and sft formats, not dpo"):
        to_dataset(mixed_rollouts, "dpo", min_reward=1)
    with pytest.raises(ExportError, match="unknown pairs 'some'"):
        to_dataset(mixed_rollouts, "dpo", pairs="some")
