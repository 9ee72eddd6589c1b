"""MathWithJudge: math-verify in the process pool, then a two-way LLM judge over real HTTP."""

from __future__ import annotations

import time

import gymnasium
import openai
import pytest
from gymnasium.utils.env_checker import check_env

from gym_llm import TaskError
from gym_llm import items as it
from gym_llm.envs.math_with_judge.env import JUDGE_SYSTEM_MESSAGE, MathWithJudgeEnv, judge_messages
from gym_llm.judge import HTTPJudge
from gym_llm.testing import ModelServer, play, play_reference
from gym_llm.testing.model_server import ServerError

ENV_ID = "llm/MathWithJudge-v0"
DOWN = "http://127.0.0.1:9/v1"
THURSDAY = 6  # task index: expected answer \text{Thursday}
HALF = 1  # task index: expected answer \frac{1}{2}


@pytest.fixture(autouse=True)
def no_judge_in_environment(monkeypatch):
    for name in ("GYM_LLM_JUDGE_MODEL", "GYM_LLM_JUDGE_BASE_URL", "GYM_LLM_JUDGE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def make(judge_url: str | None = None, **kwargs):
    if judge_url is not None:
        kwargs["judge"] = {"model": "judge", "base_url": judge_url, "max_retries": 1, "backoff": 0.01}
    return gymnasium.make(ENV_ID, **kwargs)


def judge_replies(*replies):
    """A judge script that answers with ``replies`` in turn."""
    pending = list(replies)
    return lambda conversation, tools, request: pending.pop(0)


# ----------------------------------------------------------------------------- math-verify
@pytest.mark.parametrize(
    ("index", "answer", "reward"),
    [
        (HALF, "The fraction is \\boxed{0.5}.", 1.0),
        (HALF, "\\boxed{\\frac{2}{4}}", 1.0),
        (2, "Expanding gives \\boxed{1+x}", 1.0),
        (3, "\\boxed{2^{1/2}}", 1.0),
        (0, "\\boxed{61}", 0.0),
        (2, "\\boxed{x+2}", 0.0),
    ],
)
def test_math_verify_equivalences(index, answer, reward):
    result = play(make(), [answer], task_index=index)
    assert (result.reward, result.terminated) == (reward, True)
    assert result.info["details"]["library_reward"] == reward
    assert result.info["details"]["judge_evaluations"] is None
    assert result.info["failure_kind"] is None


def test_the_assistant_text_is_concatenated_across_messages():
    turn = [it.message("I think the result is \\boxed{"), it.message("60}")]
    result = play(make(), [turn], task_index=0)
    assert result.reward == 1.0 and result.info["details"]["extracted_answer"] == "60"


@pytest.mark.parametrize("answer", ["The answer is 60.", "\\boxed{60", "\\boxed{  }", ""])
def test_no_complete_boxed_answer_scores_zero(answer):
    result = play(make(), [answer], task_index=0)
    assert result.reward == 0.0
    assert result.info["failure_kind"] == "no_boxed_answer"
    assert result.info["details"]["extracted_answer"] is None


def test_a_tool_call_ends_the_episode_without_running():
    result = play(make(), ['<tool_call>{"name": "python", "arguments": {"code": "1"}}</tool_call>'])
    assert (result.reward, result.terminated, result.info["tool_errors"]) == (0.0, True, 0)
    assert result.info["failure_kind"] == "no_boxed_answer"


def test_a_math_verify_timeout_is_a_masked_checker_error_and_the_next_answer_is_graded():
    env = make(library_verifier_timeout_seconds=0.5)
    result = play(env, ["\\boxed{9^{9^{9^{9^{9}}}}}"], task_index=0)
    assert result.reward == 0.0 and result.info["failure_kind"] == "checker_error"
    assert result.info["mask_sample"] is True
    assert "more than 0.5 s" in result.info["details"]["checker_error"]
    assert play(env, ["\\boxed{60}"], task_index=0).reward == 1.0


def test_an_expected_answer_math_verify_cannot_read_is_a_checker_error_unless_the_judge_grades():
    row = {"responses_create_params": {"input": "q"}, "question": "q", "expected_answer": "\\text{}"}
    result = play(make(tasks=[row]), ["\\boxed{1}"])
    assert result.reward == 0.0 and result.info["failure_kind"] == "checker_error"
    assert result.info["mask_sample"] is True
    assert "math-verify failed" in result.info["details"]["checker_error"]
    with ModelServer(script=judge_replies("[[A!=B]]")) as server:
        judged = play(make(server.base_url, tasks=[row]), ["\\boxed{1}"])
    assert (judged.reward, judged.info["failure_kind"], judged.info["mask_sample"]) == (0.0, None, False)
    assert "checker_error" in judged.info["details"]


# ----------------------------------------------------------------------------- the judge
def test_the_judge_is_off_unless_configured():
    assert make().unwrapped.should_use_judge is False
    assert make(DOWN).unwrapped.should_use_judge is True
    assert make(DOWN, should_use_judge=False).unwrapped.should_use_judge is False


def test_the_judge_env_variables_turn_it_on(monkeypatch):
    monkeypatch.setenv("GYM_LLM_JUDGE_BASE_URL", DOWN)
    env = make()
    assert env.unwrapped.should_use_judge is True and env.unwrapped.judge.config.base_url == DOWN


def test_judge_rescues_an_answer_math_verify_rejects_asking_both_orders():
    with ModelServer(script=judge_replies("Same day. [[A=B]]", "Same. [[A=B]]")) as server:
        result = play(
            make(server.base_url), ["\\boxed{\\text{the day after Wednesday}}"], task_index=THURSDAY
        )
    assert result.reward == 1.0 and result.info["failure_kind"] is None
    details = result.info["details"]
    assert details["library_reward"] == 0.0
    assert [e["verdict_label"] for e in details["judge_evaluations"]] == ["[[A=B]]", "[[A=B]]"]
    first, second = (r["input"] for r in server.requests)
    assert first[0] == {"role": "system", "content": JUDGE_SYSTEM_MESSAGE}
    # Expected answer first, then the boxed answer first.
    env = MathWithJudgeEnv()
    assert env.judged_answers(first) == ("\\text{Thursday}", "\\text{the day after Wednesday}")
    assert env.judged_answers(second) == ("\\text{the day after Wednesday}", "\\text{Thursday}")
    assert "Today is Monday" in first[1]["content"]
    assert result.info["reward_components"] == {"library_reward": 0.0, "judge_calls": 2.0}


def test_judge_says_different_after_one_call():
    with ModelServer(script=judge_replies("Different. [[A!=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{Friday}"], task_index=THURSDAY)
    assert result.reward == 0.0 and server.num_requests == 1 and result.info["failure_kind"] is None


def test_swap_disagreement_scores_zero():
    with ModelServer(script=judge_replies("[[A=B]]", "[[A!=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{Friday}"], task_index=THURSDAY)
    assert result.reward == 0.0 and server.num_requests == 2


def test_garbage_judge_output_counts_as_different():
    with ModelServer(script=judge_replies("I'd rather not say.")) as server:
        result = play(make(server.base_url), ["\\boxed{Friday}"], task_index=THURSDAY)
    assert result.reward == 0.0 and result.info["failure_kind"] == "judge_no_verdict"
    assert result.info["details"]["judge_evaluations"][0]["parsing_issues"] == ["no_verdict"]


def test_judge_server_error_is_retried():
    with ModelServer(script=judge_replies(ServerError(500), "[[A=B]]", "[[A=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{\\text{Thursday.}}"], task_index=THURSDAY)
    assert result.reward == 1.0 and server.num_requests == 3


def test_judge_down_is_a_masked_judge_error_not_a_crash():
    result = play(make(DOWN), ["\\boxed{Friday}"], task_index=THURSDAY)
    assert result.reward == 0.0 and result.info["failure_kind"] == "judge_error"
    assert result.info["mask_sample"] is True
    assert "gave up" in result.info["details"]["judge_evaluations"][0]["error"]


def test_a_judge_turned_on_but_never_configured_fails_fast_only_where_needed():
    env = make(should_use_judge=True)  # no judge argument, no variables, no key
    assert isinstance(env.unwrapped.judge, HTTPJudge) and not env.unwrapped.judge.config.usable
    assert play(env, ["\\boxed{60}"], task_index=0).reward == 1.0  # math-verify decides: no judge needed
    start = time.perf_counter()
    results = [play(env, ["\\boxed{Friday}"], task_index=THURSDAY) for _ in range(10)]
    assert time.perf_counter() - start < 5.0  # no network call and no retry backoff
    assert {(r.reward, r.info["failure_kind"], r.info["mask_sample"]) for r in results} == {
        (0.0, "judge_error", True)
    }
    error = results[0].info["details"]["judge_evaluations"][0]["error"]
    assert "no judge is configured" in error and "GYM_LLM_JUDGE_BASE_URL" in error


class SDKJudge:
    """A judge object of the caller's own, on the openai SDK's chat client."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    async def __call__(self, prompt) -> str:
        async with openai.AsyncOpenAI(base_url=self.base_url, api_key="x", max_retries=0) as client:
            reply = await client.chat.completions.create(model="judge", messages=list(prompt))
        return reply.choices[0].message.content


def test_a_judge_object_is_used_as_given():
    with ModelServer() as server:
        env = gymnasium.make(ENV_ID, judge=SDKJudge(server.base_url))
        assert env.unwrapped.should_use_judge is True
        assert play(env, ["\\boxed{\\text{Thursday.}}"], task_index=THURSDAY).reward == 1.0
        assert play(env, ["\\boxed{Friday}"], task_index=THURSDAY).reward == 0.0
    assert [r["api"] for r in server.requests] == ["chat", "chat", "chat"]
    assert server.requests[0]["messages"][0] == {"role": "system", "content": JUDGE_SYSTEM_MESSAGE}


def test_no_judge_call_when_math_verify_accepts():
    with ModelServer(script=judge_replies()) as server:
        assert play(make(server.base_url), ["\\boxed{0.5}"], task_index=HALF).reward == 1.0
    assert server.num_requests == 0


def test_the_oracle_server_plays_a_correct_judge():
    with ModelServer() as server:
        env = make(server.base_url)
        assert play(env, ["\\boxed{\\text{thursday}.}"], task_index=THURSDAY).reward == 1.0
        assert play(env, ["\\boxed{\\text{Friday}}"], task_index=THURSDAY).reward == 0.0


def test_judge_prompt_round_trip():
    env = MathWithJudgeEnv()
    assert env.judged_answers(judge_messages("Q?", "a\n\n<|Answer B|>\nb", "c")) == (
        "a\n\n<|Answer B|>\nb",
        "c",
    )
    assert env.judged_answers("unrelated") is None


# ----------------------------------------------------------------------------- env contract
@pytest.mark.parametrize("index", range(8))
def test_reference_scores_one_on_every_row(index):
    assert play_reference(make(), task_index=index).reward == 1.0


def test_check_env():
    check_env(make(DOWN).unwrapped, skip_render_check=True)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"responses_create_params": {"input": "q"}, "question": "q"}, "expected_answer"),
        ({"responses_create_params": {"input": "q"}, "expected_answer": "1"}, "question"),
        ({"question": "q", "expected_answer": "1"}, "responses_create_params"),
        (
            {"responses_create_params": {"input": "q"}, "question": "q", "expected_answer": 1},
            "expected_answer",
        ),
    ],
)
def test_bad_rows_name_the_field(row, field):
    with pytest.raises(TaskError, match=f"field '{field}"):
        make(tasks=[row])


def test_bad_arguments():
    with pytest.raises(ValueError, match="library_verifier_timeout_seconds"):
        make(library_verifier_timeout_seconds=0)
    with pytest.raises(ValueError, match="'modle'"):
        make(judge={"modle": "x"})
    with pytest.raises(ValueError, match="must be async"):
        make(judge=lambda prompt: "[[A=B]]")
