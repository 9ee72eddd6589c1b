"""Tests of llm/InstructionFollowing-v0: the 25 IFEval checkers, grading, row validation, episodes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm  # noqa: F401  (registers the envs)
from gym_llm import items as it
from gym_llm.envs.instruction_following.env import InstructionFollowingEnv
from gym_llm.envs.instruction_following.instructions import INSTRUCTIONS, check_instruction
from gym_llm.envs.instruction_following.text import count_sentences, count_words, split_sentences
from gym_llm.tasks import TaskError, read_jsonl
from gym_llm.testing.episodes import play, play_reference

DATA = Path(InstructionFollowingEnv.default_tasks)

IFEVAL_IDS = {
    "keywords:existence",
    "keywords:frequency",
    "keywords:forbidden_words",
    "keywords:letter_frequency",
    "language:response_language",
    "length_constraints:number_sentences",
    "length_constraints:number_paragraphs",
    "length_constraints:number_words",
    "length_constraints:nth_paragraph_first_word",
    "detectable_content:number_placeholders",
    "detectable_content:postscript",
    "detectable_format:number_bullet_lists",
    "detectable_format:constrained_response",
    "detectable_format:number_highlighted_sections",
    "detectable_format:multiple_sections",
    "detectable_format:json_format",
    "detectable_format:title",
    "combination:two_responses",
    "combination:repeat_prompt",
    "startend:end_checker",
    "startend:quotation",
    "change_case:capital_word_frequency",
    "change_case:english_capital",
    "change_case:english_lowercase",
    "punctuation:no_comma",
}

# (instruction id, kwargs, a text that follows it, a text that does not)
CASES: list[tuple[str, dict[str, Any] | None, str, str]] = [
    (
        "keywords:existence",
        {"keywords": ["Helmet", "route"]},
        "Wear a helmet on every ROUTE.",
        "Wear a helmet.",
    ),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "at least"},
        "Tea is good; green tea is better.",
        "Coffee is good; tea is better.",
    ),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "less than"},
        "Coffee is good; tea is better.",
        "Tea is good; green tea is better.",
    ),
    ("keywords:forbidden_words", {"forbidden_words": ["easy"]}, "It takes work, not ease.", "It is Easy."),
    (
        "keywords:letter_frequency",
        {"letter": "z", "let_frequency": 2, "let_relation": "at least"},
        "Zebras zigzag.",
        "Zebras run.",
    ),
    (
        "language:response_language",
        {"language": "de"},
        "Das Wetter ist heute sehr schön und wir gehen in den Park spazieren.",
        "The weather is very nice today and we are going for a walk in the park.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 3, "relation": "less than"},
        "Dr. Smith came at 3.30 p.m. today. He left early!",
        "One. Two. Three.",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": 2},
        "First paragraph here.\n\n***\n\nSecond paragraph here.",
        "First.\n\n***\n\n***\n\nSecond.",
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "at least"},
        "one two three four five",
        "one two three four",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        'We start here.\n\n"Then, we finish.',
        "We start here.\n\nAnd we finish.",
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": 2},
        "Dear [name], see you at [place].",
        "Dear [name], see you there.",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "Bye.\np.s. call me",
        "Bye.\nPS call me",
    ),
    (
        "detectable_format:number_bullet_lists",
        {"num_bullets": 2},
        "Tips:\n* one\n- two\n---\nDone.",
        "Tips:\n* one\n* two\n* three",
    ),
    ("detectable_format:constrained_response", None, "My answer is maybe.", "My answer is: yes"),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": 2},
        "Use *water* and **salt**.",
        "Use *water* and ** ** salt.",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "SECTION 1\nIntro\nSECTION 2\nBody",
        "SECTION 1\nIntro and body",
    ),
    ("detectable_format:json_format", {}, '```JSON\n{"a": [1, 2]}\n```', 'Here it is: {"a": 1}'),
    ("detectable_format:title", {}, "<<A Title>>\nText.", "<< >>\nText without a title."),
    ("combination:two_responses", {}, "Yes, indeed.\n******\nNo, never.", "Same.\n******\nSame."),
    (
        "combination:repeat_prompt",
        {"prompt_to_repeat": "Name a color."},
        "  name a color. Blue.",
        "Blue. Name a color.",
    ),
    (
        "startend:end_checker",
        {"end_phrase": "Any other questions?"},
        '"That is all. any other questions?"',
        "Any other questions? That is all.",
    ),
    ("startend:quotation", {}, '  "Quoted answer."  ', '"Half quoted.'),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "at least"},
        "This is VERY WELL-KNOWN.",
        "This is Very well known.",
    ),
    (
        "change_case:english_capital",
        {},
        "THIS ENTIRE ANSWER IS WRITTEN IN CAPITAL LETTERS.",
        "THIS ANSWER IS Mostly IN CAPITAL LETTERS.",
    ),
    (
        "change_case:english_lowercase",
        {},
        "this entire answer is written in lowercase letters.",
        "this answer is mostly in lowercase letters, except for English.",
    ),
    ("punctuation:no_comma", {}, "No commas here.", "Well, a comma."),
]


def test_registry_holds_the_25_ifeval_instructions() -> None:
    assert set(INSTRUCTIONS) == IFEVAL_IDS
    assert {case[0] for case in CASES} == IFEVAL_IDS


@pytest.mark.parametrize(("instruction_id", "kwargs", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_checker_passes_and_fails(instruction_id: str, kwargs: dict | None, good: str, bad: str) -> None:
    assert check_instruction(instruction_id, kwargs, good) is True
    assert check_instruction(instruction_id, kwargs, bad) is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith arrived at 3.30 p.m. today. He was late!", 2),
        ('She said "Stop." Then she left.', 2),
        ("1. First item\n2. Second item", 1),
        ("J. R. R. Tolkien wrote it. Really?", 2),
        ("A paragraph without a stop\n\nAnother one", 2),
        ("Visit example.com today. e.g. this is one sentence.", 1),
        ("", 0),
    ],
)
def test_sentence_splitter(text: str, expected: int) -> None:
    assert count_sentences(text) == expected, split_sentences(text)


def test_word_count_uses_word_characters() -> None:
    assert count_words("It's a well-known fact: 3 cats.") == 8


def test_language_checks_are_deterministic_and_refuse_text_without_letters() -> None:
    text = "Ceci est une réponse entièrement rédigée en français, sans aucun mot anglais."
    assert all(check_instruction("language:response_language", {"language": "fr"}, text) for _ in range(5))
    assert check_instruction("language:response_language", {"language": "fr"}, "12345 !!!") is False
    assert check_instruction(
        "language:response_language", {"language": "zh"}, "今天天气很好，我们去公园散步吧。"
    )


def test_ifeval_style_none_values_are_dropped() -> None:
    kwargs = {"num_words": 3, "relation": "at least", "language": None, "keywords": None}
    assert check_instruction("length_constraints:number_words", kwargs, "one two three")


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
    assert verdict.details["follow_instruction_list"] == [False, True]
    assert "made:up" in verdict.details["instruction_errors"]["0"]


def test_malformed_and_empty_responses() -> None:
    env = InstructionFollowingEnv([_row(*TWO)])
    row = _row(*TWO)
    assert env.verify(row, {"output": "text"}).failure_kind == "malformed_response"
    assert env.verify(row, {}).failure_kind == "malformed_response"
    broken = {
        "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": None}]}
        ]
    }
    assert env.verify(row, broken).failure_kind == "malformed_response"
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


def test_example_rows_cover_every_instruction_and_both_formats() -> None:
    rows = read_jsonl(DATA)
    seen, nested, modes = set(), 0, set()
    for row in rows:
        spec = row["verifier_metadata"] if "verifier_metadata" in row else row
        nested += "verifier_metadata" in row
        seen |= set(spec["instruction_id_list"])
        modes.add(spec.get("grading_mode", "binary"))
        assert row["responses_create_params"]["input"][0]["content"] == row["prompt"]
    assert seen == IFEVAL_IDS
    assert nested >= 1 and nested < len(rows)
    assert modes == {"binary", "fraction"}


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
