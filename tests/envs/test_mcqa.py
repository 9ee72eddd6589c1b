"""Tests for ``llm/MCQA-v0`` (port of NeMo Gym's mcqa)."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm  # noqa: F401  (registers the envs)
from gym_llm import items as it
from gym_llm.envs.mcqa.env import MCQAEnv
from gym_llm.tasks import TaskError, load_tasks
from gym_llm.testing.episodes import play, play_reference

OPTIONS = [{"A": "opt1"}, {"B": "opt2"}, {"C": "opt3"}, {"D": "opt4"}]


def row(expected: str = "B", mode: str = "strict_single_letter_boxed", **extra: Any) -> dict[str, Any]:
    return {
        "responses_create_params": {
            "input": [{"role": "user", "content": "Q?\nA: opt1\nB: opt2\nC: opt3\nD: opt4"}]
        },
        "options": copy.deepcopy(OPTIONS),
        "expected_answer": expected,
        "grading_mode": mode,
        **extra,
    }


@pytest.fixture(scope="module")
def env() -> MCQAEnv:
    return MCQAEnv()


def grade(env: MCQAEnv, text: str, task: dict[str, Any]) -> tuple[float, str | None, str | None]:
    verdict = env.verify(task, {"output": [it.message(text)]})
    return verdict.reward, verdict.details["extracted_answer"], verdict.failure_kind


def test_reference_solves_every_example_row() -> None:
    env = gym.make("llm/MCQA-v0")
    modes = set()
    for index in range(len(env.unwrapped.tasks)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert result.terminated and not result.truncated
        modes.add(env.unwrapped.task["grading_mode"])
    assert modes == {
        "strict_single_letter_boxed",
        "lenient_boxed",
        "lenient_answer_colon",
        "lenient_answer_colon_md",
    }


def test_check_env() -> None:
    check_env(gym.make("llm/MCQA-v0").unwrapped)


@pytest.mark.parametrize(
    "text,extracted",
    [
        ("Reasoning...\n\\boxed{B}", "B"),
        ("Final: \\boxed{ [B] }", "B"),
        ("\\boxed{(B)}", "B"),
        ("\\boxed{\\text{B}}", "B"),
        ("\\boxed{B: opt2}", "B"),
        ("\\boxed{B) opt2}", "B"),
        ("First \\boxed{A}, on reflection \\boxed{B}", "B"),  # the last box wins
    ],
)
def test_strict_boxed_right(env: MCQAEnv, text: str, extracted: str) -> None:
    assert grade(env, text, row()) == (1.0, extracted, None)


@pytest.mark.parametrize(
    "text,extracted,failure",
    [
        ("\\boxed{C}", "C", None),  # wrong letter
        ("\\boxed{B} then \\boxed{C}", "C", None),
        ("The answer is B.", None, "no_answer"),  # strict needs a box
        ("\\boxed{b}", None, "no_answer"),  # lower case is not a letter answer
        ("\\boxed{E}", None, "no_answer"),  # not an option
        ("\\boxed{opt2}", None, "no_answer"),  # option text is lenient only
        ("\\boxed{B", None, "no_answer"),  # unclosed box
        ("   ", None, "empty_response"),
    ],
)
def test_strict_boxed_wrong_or_malformed(
    env: MCQAEnv, text: str, extracted: str | None, failure: str | None
) -> None:
    assert grade(env, text, row()) == (0.0, extracted, failure)


def test_lenient_boxed_matches_option_text(env: MCQAEnv) -> None:
    task = row(mode="lenient_boxed")
    assert grade(env, "\\boxed{ OPT2 }", task) == (1.0, "B", None)
    assert grade(env, "\\boxed{\\text{the answer is opt2}}", task) == (1.0, "B", None)
    assert grade(env, "\\boxed{B}", task) == (1.0, "B", None)
    assert grade(env, "\\boxed{opt3}", task)[:2] == (0.0, "C")
    # Two options' texts in the box: ambiguous, no answer.
    assert grade(env, "\\boxed{opt2 or opt3}", task) == (0.0, None, "no_answer")
    assert grade(env, "opt2", task) == (0.0, None, "no_answer")


def test_lenient_answer_colon(env: MCQAEnv) -> None:
    task = row(expected="C", mode="lenient_answer_colon")
    assert grade(env, "Answer: c", task) == (1.0, "C", None)
    assert grade(env, "ANSWER:   opt3", task) == (1.0, "C", None)
    assert grade(env, "Answer: \\text{C}", task) == (1.0, "C", None)
    assert grade(env, "Answer: A\nLater... Answer: C", task)[:2] == (0.0, "A")  # the first one counts
    assert grade(env, "**Answer: C**", task) == (0.0, None, "no_answer")  # markdown is the _md mode
    assert grade(env, "Answer: C.", task) == (0.0, None, "no_answer")
    assert grade(env, "The answer is C", task) == (0.0, None, "no_answer")


@pytest.mark.parametrize(
    "text,extracted",
    [
        ("Reasoning.\n\nAnswer: C", "C"),
        ("**Answer: C**", "C"),
        ("**Answer:** C", "C"),
        ("Answer: **C**", "C"),
        ("__Answer__: C", "C"),
        ("Answer: (C) opt3", "C"),
        ("Answer: C because A is wrong", "C"),
        ("Answer: A\n...\nAnswer: C", "C"),  # the last payload counts
        ("Answer: Ｃ", "C"),  # full-width letter
    ],
)
def test_lenient_answer_colon_md_right(env: MCQAEnv, text: str, extracted: str) -> None:
    assert grade(env, text, row(expected="C", mode="lenient_answer_colon_md")) == (1.0, extracted, None)


@pytest.mark.parametrize("text", ["Answer: A or C", "Answer: A/C", "I think it might be C", "Answer: Z", ""])
def test_lenient_answer_colon_md_no_answer(env: MCQAEnv, text: str) -> None:
    reward, extracted, failure = grade(env, text, row(expected="C", mode="lenient_answer_colon_md"))
    assert (reward, extracted) == (0.0, None)
    assert failure == ("empty_response" if not text else "no_answer")


def test_answer_prefix_and_boxed_fallback(env: MCQAEnv) -> None:
    task = row(mode="lenient_answer_colon_md", template_metadata={"answer_prefix": "Respuesta:"})
    assert grade(env, "Respuesta: B", task) == (1.0, "B", None)
    assert grade(env, "Razonamiento \\boxed{B}", task) == (1.0, "B", None)  # boxed fallback with a prefix
    no_prefix = row(mode="lenient_answer_colon_md")
    assert grade(env, "\\boxed{B}", no_prefix) == (0.0, None, "no_answer")


def test_output_regex_comes_first(env: MCQAEnv) -> None:
    task = row(template_metadata={"output_regex": r"Final Choice:\s*([A-Za-z])"})
    assert grade(env, "Final Choice: b", task) == (1.0, "B", None)  # case-insensitive
    assert grade(env, "Final Choice: A ... Final Choice: B", task) == (1.0, "B", None)  # last match
    assert grade(env, "\\boxed{B}", task) == (1.0, "B", None)  # falls back to the grading mode
    assert grade(env, "Final Choice: opt2", task)[:2] == (0.0, "O")  # captures "o", trusted as a letter
    listed = row(
        template_metadata={"output_regex": [r"Answer\s*:\s*([A-Za-z])", r"Antwort\s*:\s*([A-Za-z])"]}
    )
    assert grade(env, "Antwort: B", listed) == (1.0, "B", None)
    text_regex = row(template_metadata={"output_regex": r"Pick:\s*(\w+)"})
    assert grade(env, "Pick: opt2", text_regex) == (1.0, "B", None)
    arabic = row(template_metadata={"output_regex": r"الإجابة:\s*([أ-د])"})
    assert grade(env, "الإجابة: ب", arabic) == (1.0, "B", None)


def test_env_grading_mode_overrides_rows() -> None:
    env = MCQAEnv(grading_mode="lenient_answer_colon")
    assert grade(env, "Answer: B", row()) == (1.0, "B", None)
    assert grade(MCQAEnv(), "Answer: B", row()) == (0.0, None, "no_answer")
    with pytest.raises(ValueError, match="grading_mode"):
        MCQAEnv(grading_mode="loose")  # type: ignore[arg-type]


def test_episode_through_gym_api() -> None:
    env = gym.make("llm/MCQA-v0")
    right = play(env, ["Let me think. PCR amplifies DNA. \\boxed{B}"], task_index=0)
    assert (right.reward, right.terminated, right.steps) == (1.0, True, 1)
    assert right.info["details"]["extracted_answer"] == "B"
    assert right.info["reward_components"] == {"accuracy": 1.0, "no_answer": 0.0}
    wrong = play(env, ["\\boxed{A}"], task_index=0)
    assert (wrong.reward, wrong.info["failure_kind"]) == (0.0, None)
    thinking = play(env, ["<think>maybe A</think>It is \\boxed{B}"], task_index=0)
    assert thinking.reward == 1.0


def test_malformed_actions_score_zero() -> None:
    env = gym.make("llm/MCQA-v0")
    invalid = play(env, [42], task_index=0)
    assert (invalid.reward, invalid.info["failure_kind"]) == (0.0, "invalid_action")
    # A tool call in a no-tool env is not run: the single turn is graded and has no answer.
    call = play(env, ['<tool_call>{"name": "lookup", "arguments": {}}</tool_call>'], task_index=0)
    assert (call.reward, call.terminated, call.truncated) == (0.0, True, False)
    assert call.info["failure_kind"] == "empty_response"
    assert [item["type"] for item in env.unwrapped.response["output"]] == ["function_call"]
    both = play(env, [[it.function_call("lookup", "{}", "c1"), it.message("\\boxed{B}")]], task_index=0)
    assert both.reward == 1.0


def test_verify_row_rescores_a_recorded_rollout(env: MCQAEnv) -> None:
    recorded = {**row(), "response": {"output": [it.message("\\boxed{B}")]}}
    assert env.verify_row(recorded).reward == 1.0
    with pytest.raises(TaskError, match=r"response\.output"):
        env.verify_row(row())


@pytest.mark.parametrize(
    "change,field",
    [
        ({"expected_answer": None}, "expected_answer"),
        ({"expected_answer": "AB"}, "expected_answer"),
        ({"grading_mode": "loose"}, "grading_mode"),
        ({"options": "A: x"}, "options"),
        ({"template_metadata": {"output_regex": "(["}}, "template_metadata"),
        ({"template_metadata": {"output_regex": 3}}, "template_metadata"),
        ({"responses_create_params": {}}, "responses_create_params.input"),
    ],
)
def test_bad_rows_name_the_field(change: dict[str, Any], field: str) -> None:
    bad = {**row(), **change}
    with pytest.raises(TaskError, match=f"field '{field}"):
        load_tasks([bad], MCQAEnv.task_model)


def test_missing_expected_answer_is_named() -> None:
    bad = row()
    del bad["expected_answer"]
    with pytest.raises(TaskError, match="field 'expected_answer'"):
        MCQAEnv(tasks=[bad])
