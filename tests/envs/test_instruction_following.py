"""Tests of llm/InstructionFollowing-v0: grading, row validation, episodes (checkers: see the folder)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm  # noqa: F401  (registers the envs)
from gym_llm import items as it
from gym_llm.envs.instruction_following.env import InstructionFollowingEnv
from gym_llm.envs.instruction_following.instructions import INSTRUCTIONS
from gym_llm.tasks import TaskError, read_jsonl
from gym_llm.testing.episodes import play, play_reference

DATA = Path(InstructionFollowingEnv.default_tasks)


# ----------------------------------------------------------------- the env
def _row(ids: list[str], kwargs: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": 1,
        "instruction_id_list": ids,
        "prompt": "Say something.",
        "kwargs": kwargs,
        "responses_create_params": {"input": [{"role": "user", "content": "Say something."}]},
        **extra,
    }


def _response(text: str) -> dict[str, Any]:
    return {"output": [it.message(text)]}


TWO = (["punctuation:no_comma", "detectable_format:title"], [{}, None])


def test_binary_and_fraction_grading() -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    half = _response("<<Title>> but, a comma")
    verdict = env.verify(_row(*TWO), half)
    assert verdict.reward == 0.0
    assert verdict.details == {"follow_all_instructions": False, "follow_instruction_list": [False, True]}
    assert verdict.components == {"follow_all_instructions": 0.0, "instruction_accuracy": 0.5}
    assert verdict.failure_kind is None
    assert env.verify(_row(*TWO, grading_mode="fraction"), half).reward == 0.5
    assert env.verify(_row(*TWO), _response("<<Title>> and no comma")).reward == 1.0
    # The env's default applies to rows that name no mode; a row's own mode wins.
    frac_env = InstructionFollowingEnv([_row(*TWO)], grading_mode="fraction")
    assert frac_env.verify(_row(*TWO), half).reward == 0.5
    assert frac_env.verify(_row(*TWO, grading_mode="binary"), half).reward == 0.0
    with pytest.raises(ValueError, match="grading_mode"):
        InstructionFollowingEnv([_row(*TWO)], grading_mode="mean")


def test_rows_without_kwargs_load_for_instructions_without_arguments() -> None:
    row = {"instruction_id_list": TWO[0], "responses_create_params": {"input": "Say something."}}
    assert InstructionFollowingEnv([row]).verify(row, _response("<<T>> fine")).reward == 1.0


def test_verifier_metadata_nesting() -> None:
    nested = {
        "id": 7,
        "prompt": "Say something.",
        "verifier_metadata": {"instruction_id_list": TWO[0], "kwargs": TWO[1], "grading_mode": "fraction"},
        "responses_create_params": {"input": [{"role": "user", "content": "Say something."}]},
    }
    env = InstructionFollowingEnv([nested])
    assert env.verify(nested, _response("<<Title>>, comma")).reward == 0.5
    # Top-level fields win over nested ones.
    both = {**nested, "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    verdict = InstructionFollowingEnv([both]).verify(both, _response("<<Title>>, comma"))
    assert verdict.details["follow_instruction_list"] == [False]
    assert verdict.reward == 0.0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            _row(["punctuation:no_comma", "keywords:made_up"], [{}, {}]),
            r"tasks row 1: field 'instruction_id_list':.*"
            r"unknown instruction id 'keywords:made_up' at index 1 \(row id 1\)",
        ),
        (
            {
                "prompt": "x",
                "verifier_metadata": {"instruction_id_list": ["nope:nope"], "kwargs": [{}]},
                "responses_create_params": {"input": "x"},
            },
            r"field 'verifier_metadata.instruction_id_list':.*unknown instruction id 'nope:nope'",
        ),
        (
            {"prompt": "x", "responses_create_params": {"input": "x"}},
            r"field 'instruction_id_list':.*missing",
        ),
        (_row([], []), r"field 'instruction_id_list':.*empty"),
        (
            _row(["length_constraints:number_words"], [{"num_words": 5}]),
            r"field 'kwargs':.*kwargs\[0\] for 'length_constraints:number_words': "
            r"argument 'relation': Field required",
        ),
        (
            _row(["length_constraints:number_words"], [{"num_words": 5, "relation": "at most"}]),
            r"field 'kwargs':.*argument 'relation'",
        ),
        (
            _row(["punctuation:no_comma"], [{"colour": "red"}]),
            r"kwargs\[0\] for 'punctuation:no_comma'.*'colour'",
        ),
        (
            _row(["punctuation:no_comma"], [{}, {}]),
            r"field 'kwargs':.*has 2 entries but instruction_id_list has 1",
        ),
        (_row(["language:response_language"], [{"language": "xx"}]), r"unsupported language code 'xx'"),
        (
            {"instruction_id_list": ["startend:end_checker"], "responses_create_params": {"input": "x"}},
            r"field 'kwargs':.*argument 'end_phrase': Field required",
        ),
        (_row(["punctuation:no_comma"], [{}], grading_mode="mean"), r"field 'grading_mode'"),
    ],
)
def test_bad_rows_raise_task_errors(row: dict[str, Any], message: str) -> None:
    with pytest.raises(TaskError, match=message):
        InstructionFollowingEnv([row])


def test_unvalidated_bad_row_scores_zero_at_verify() -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    verdict = env.verify(_row(["made:up", "punctuation:no_comma"], [{}, {}]), _response("fine"))
    assert verdict.reward == 0.0
    assert verdict.failure_kind == "instruction_error"
    assert verdict.mask_sample  # the row is broken, not the answer
    assert verdict.details["follow_instruction_list"] == [False, True]
    assert "made:up" in verdict.details["instruction_errors"]["0"]


@pytest.mark.parametrize("bad_kwargs", [5, "x", ["a"], {"num_words": "many"}])
def test_bad_row_kwargs_are_a_masked_instruction_error(bad_kwargs: Any) -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    row = _row(["length_constraints:number_words"], [bad_kwargs])
    verdict = asyncio.run(env.averify(row, _response("hello world")))
    assert (verdict.failure_kind, verdict.mask_sample) == ("instruction_error", True)
    assert "kwargs[0]" in verdict.details["instruction_errors"]["0"]


def test_a_checker_that_crashes_is_a_masked_verify_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # A checker bug (not a bad row) must reach the base class, never pass as instruction_error.
    def broken(response: str, **kwargs: Any) -> bool:
        raise TypeError("checker bug")

    spec = dataclasses.replace(INSTRUCTIONS["punctuation:no_comma"], check=broken)
    monkeypatch.setitem(INSTRUCTIONS, "punctuation:no_comma", spec)
    env = InstructionFollowingEnv([_row(*TWO)], offload_chars=None)
    verdict = asyncio.run(env.averify(_row(*TWO), _response("fine")))
    assert (verdict.failure_kind, verdict.mask_sample) == ("verify_error", True)
    assert "TypeError: checker bug" in verdict.details["error"]


@pytest.mark.parametrize("output", ["x" * 10, 5, ["abc"], [{"type": "message"}, 7]])
def test_malformed_outputs_are_refused_whatever_the_offload_threshold(output: Any) -> None:
    row = _row(*TWO)
    for offload_chars in (None, 0):
        env = InstructionFollowingEnv([row], offload_chars=offload_chars)
        verdict = asyncio.run(env.averify(row, {"output": output}))
        assert (verdict.failure_kind, verdict.mask_sample) == ("malformed_response", True)


def test_malformed_and_empty_responses() -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    row = _row(*TWO)
    # the base class refuses a response whose output is no list of items, before verify runs
    assert asyncio.run(env.averify(row, {"output": "text"})).failure_kind == "malformed_response"
    assert asyncio.run(env.averify(row, {})).failure_kind == "malformed_response"
    broken = {
        "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": None}]}
        ]
    }
    assert env.verify(row, broken).failure_kind == "empty_response"
    # No assistant message, or only whitespace: zero, even for instructions "" would satisfy.
    for response in ({"output": []}, {"output": [it.reasoning("thinking")]}, _response("  \n")):
        verdict = env.verify(_row(["punctuation:no_comma"], [{}], grading_mode="fraction"), response)
        assert (verdict.reward, verdict.failure_kind) == (0.0, "empty_response")


def test_last_assistant_message_is_graded() -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    response = {"output": [it.message("<<T>> no comma"), it.reasoning("hmm, well"), it.message("a, b")]}
    assert env.verify(_row(*TWO), response).details["follow_instruction_list"] == [False, False]


def test_episode_with_raw_text_and_reasoning() -> None:
    env = gym.make("llm/InstructionFollowing-v0", tasks=[_row(*TWO)])
    result = play(env, ["<think>Hmm, a title, no commas.</think><<Answer>> Here it is."])
    assert (result.reward, result.terminated, result.steps) == (1.0, True, 1)
    assert result.info["reward_components"]["instruction_accuracy"] == 1.0
    result = play(env, ["Here, it is."])
    assert result.reward == 0.0
    assert result.info["details"]["follow_instruction_list"] == [False, False]


def test_reference_scores_one_on_every_example_row() -> None:
    env = gym.make("llm/InstructionFollowing-v0")
    tasks = env.unwrapped.tasks
    assert len(tasks) >= 10
    for index in range(len(tasks)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert result.info["details"]["follow_all_instructions"] is True


def test_example_rows_cover_every_ifeval_instruction_both_formats_and_each_source() -> None:
    rows = read_jsonl(DATA)
    seen, nested, modes = set(), 0, set()
    for row in rows:
        spec = row["verifier_metadata"] if "verifier_metadata" in row else row
        nested += "verifier_metadata" in row
        seen |= set(spec["instruction_id_list"])
        modes.add(spec.get("grading_mode", "binary"))
        assert row["responses_create_params"]["input"][0]["content"] == row["prompt"]
    ifeval = {key for key, spec in INSTRUCTIONS.items() if spec.source == "ifeval"}
    assert ifeval <= seen
    assert {INSTRUCTIONS[key].source for key in seen} == {"ifeval", "ifevalg", "ifbench"}
    assert nested >= 1 and nested < len(rows)
    assert modes == {"binary", "fraction"}


def test_ifbench_rows_load_unchanged() -> None:
    # IFBench's own rows: "key" instead of "id", every argument name present with null values.
    names = ["N", "keyword", "keyword1", "options", "prompt_to_repeat", "small_n", "word"]
    kwargs = [{name: None for name in names} | {"word": "tea", "N": 1}, {name: None for name in names}]
    row = {
        "key": "7",
        "prompt": "Say something.",
        "instruction_id_list": ["sentence:keyword", "format:no_whitespace"],
        "kwargs": kwargs,
        "responses_create_params": {"input": "Say something."},
    }
    env = InstructionFollowingEnv([row])
    assert env.verify(row, _response("Tea-is-nice.")).details["follow_instruction_list"] == [True, True]
    assert env.verify(row, _response("Coffee is nice.")).reward == 0.0


def test_a_keyword_that_is_no_regular_expression_loads_and_scores_zero_with_a_reason() -> None:
    row = _row(
        ["keywords:existence", "punctuation:no_comma"], [{"keywords": ["(tea"]}, {}], grading_mode="fraction"
    )
    env = InstructionFollowingEnv([row])  # the reference fails it at check time; the row itself is valid
    verdict = env.verify(row, _response("(tea time"))
    assert verdict.reward == 0.5
    assert verdict.failure_kind == "instruction_error"
    assert "not a valid regular expression" in verdict.details["instruction_errors"]["0"]


def test_unknown_id_error_suggests_close_ids() -> None:
    with pytest.raises(
        TaskError,
        match=r"unknown instruction id 'paragraphs:paragraph'.*did you mean 'paragraphs:paragraphs'",
    ):
        InstructionFollowingEnv([_row(["paragraphs:paragraph"], [{}])])


def test_models_load_when_the_env_is_made() -> None:
    from gym_llm.envs.instruction_following import tagger, text

    InstructionFollowingEnv([_row(["words:start_verb"], [{}])])
    assert text._punkt.cache_info().currsize == 1
    assert tagger._parser.cache_info().currsize == 1


def test_reverify_recorded_rollout() -> None:
    env = InstructionFollowingEnv()
    row = copy.deepcopy(env.tasks[0])
    row["response"] = _response(row["reference_response"])
    assert env.verify_row(json.loads(json.dumps(row))).reward == 1.0
    row["response"] = _response("Nothing, here.")
    assert env.verify_row(row).reward == 0.0


def test_check_env() -> None:
    env = gym.make("llm/InstructionFollowing-v0")
    check_env(env.unwrapped)


def test_long_answers_are_checked_in_the_process_pool_with_the_same_verdict() -> None:
    ids = [
        "length_constraints:number_sentences",
        "change_case:capital_word_frequency",
        "punctuation:no_comma",
    ]
    kwargs = [
        {"num_sentences": 3, "relation": "at least"},
        {"capital_frequency": 2, "capital_relation": "at least"},
        {},
    ]
    row = _row(ids, kwargs, grading_mode="fraction")
    response = _response("It rained. then it STOPPED. We went OUT, happy.")
    inline = InstructionFollowingEnv([row], offload_chars=None)
    pooled = InstructionFollowingEnv([row], offload_chars=10)
    expected = inline.verify(row, response)
    assert expected.details["follow_instruction_list"] == [True, True, False]
    got = asyncio.run(pooled.averify(row, response))
    assert (got.reward, got.details, got.components) == (
        expected.reward,
        expected.details,
        expected.components,
    )
