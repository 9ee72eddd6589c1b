"""EquivalenceLLMJudge: extraction rules and an LLM judge over real HTTP to the test server."""

from __future__ import annotations

import asyncio
import json
import time

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from gym_llm import TaskError
from gym_llm import items as it
from gym_llm.cli import main as cli_main
from gym_llm.envs.equivalence_llm_judge.env import (
    DEFAULT_PROMPT_TEMPLATE,
    EquivalenceLLMJudgeEnv,
    extract,
    final_answer_text,
)
from gym_llm.policies import make_policy
from gym_llm.rollouts import acollect
from gym_llm.testing import ModelServer, play, play_reference
from gym_llm.testing.model_server import ServerError

ENV_ID = "llm/EquivalenceLLMJudge-v0"
DOWN = "http://127.0.0.1:9/v1"
DARWIN, GOLD, ORGANELLE, JUPITER, HEXAGON, SKY = range(6)  # task indices of the example rows


def judge(url: str) -> dict:
    return {"model": "judge", "base_url": url, "max_retries": 1, "backoff": 0.01}


def make(url: str = DOWN, **kwargs):
    return gymnasium.make(ENV_ID, judge=judge(url), **kwargs)


def replies(*texts):
    pending = list(texts)
    return lambda conversation, tools, request: pending.pop(0)


def prompts(server) -> list[tuple[str, str] | None]:
    reader = EquivalenceLLMJudgeEnv()
    return [reader.judged_answers(r["input"]) for r in server.requests]


def row(**fields) -> dict:
    return {"responses_create_params": {"input": [{"role": "user", "content": "Q?"}]}, **fields}


# ----------------------------------------------------------------------------- judge verdicts
def test_judge_says_equal():
    with ModelServer(script=replies("Darwin is Charles Darwin. [[A=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{Charles Darwin}"], task_index=DARWIN)
    assert (result.reward, result.terminated, result.info["failure_kind"]) == (1.0, True, None)
    assert prompts(server) == [("darwin", "\\boxed{Charles Darwin}")]
    question = server.requests[0]["input"][0]["content"]
    assert "QUESTION:\nAnswer the following question." in question and "natural selection?" in question
    evaluation = result.info["details"]["judge_evaluations"][0]
    assert evaluation["verdict_label"] == "[[A=B]]" and evaluation["output_text"].startswith("Darwin")
    assert result.info["reward_components"] == {"judge_calls": 1.0}


def test_judge_says_different():
    with ModelServer(script=replies("No. [[A!=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{Lamarck}"], task_index=DARWIN)
    assert (result.reward, result.info["failure_kind"]) == (0.0, None)


def test_the_first_label_wins_unless_told_otherwise():
    text = "Not [[A!=B]]... on reflection [[A=B]]"
    with ModelServer(script=replies(text, text)) as server:
        assert play(make(server.base_url), ["Charles Darwin"], task_index=DARWIN).reward == 0.0
        env = make(server.base_url, verdict_label_position="last")
        assert play(env, ["Charles Darwin"], task_index=DARWIN).reward == 1.0


def test_garbage_judge_output_scores_zero():
    with ModelServer(script=replies("The answer is fine, I guess.")) as server:
        result = play(make(server.base_url), ["Charles Darwin"], task_index=DARWIN)
    assert (result.reward, result.info["failure_kind"]) == (0.0, "judge_no_verdict")


def test_swap_check_confirms_or_uses_reward_if_swap_fails():
    with ModelServer(script=replies("[[A=B]]", "[[A=B]]", "[[A=B]]", "[[A!=B]]")) as server:
        env = make(server.base_url, check_twice_swap=True, reward_if_swap_fails=-1.0)
        assert play(env, ["Charles Darwin"], task_index=DARWIN).reward == 1.0
        result = play(env, ["Charles Darwin"], task_index=DARWIN)
    assert result.reward == -1.0 and len(result.info["details"]["judge_evaluations"]) == 2
    # The second call has the two answers swapped.
    assert prompts(server)[2:] == [("darwin", "Charles Darwin"), ("Charles Darwin", "darwin")]


def test_judge_server_error_is_retried():
    with ModelServer(script=replies(ServerError(502), "[[A=B]]")) as server:
        assert play(make(server.base_url), ["Charles Darwin"], task_index=DARWIN).reward == 1.0
    assert server.num_requests == 2


def test_judge_down_is_a_masked_judge_error_not_a_crash():
    result = play(make(DOWN), ["Charles Darwin"], task_index=DARWIN)
    assert (result.reward, result.terminated, result.info["failure_kind"]) == (0.0, True, "judge_error")
    assert result.info["mask_sample"] is True
    assert "gave up" in result.info["details"]["judge_error"]


@pytest.fixture
def no_judge_configured(monkeypatch):
    for name in (
        "GYM_LLM_JUDGE_MODEL",
        "GYM_LLM_JUDGE_BASE_URL",
        "GYM_LLM_JUDGE_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def test_without_a_judge_every_judged_answer_fails_fast_and_masked(no_judge_configured):
    env = gymnasium.make(ENV_ID)  # building the env never needs the judge
    assert play(env, ["\\boxed{Darwin}"], task_index=DARWIN).reward == 1.0  # the shortcut needs none
    start = time.perf_counter()
    results = [play(env, ["Lamarck"], task_index=DARWIN) for _ in range(30)]
    assert time.perf_counter() - start < 5.0  # no network call and no retry backoff (was ~3 s each)
    assert {(r.reward, r.info["failure_kind"], r.info["mask_sample"]) for r in results} == {
        (0.0, "judge_error", True)
    }
    message = results[0].info["details"]["judge_error"]
    assert "no judge is configured" in message and "judge=" in message and "GYM_LLM_JUDGE_BASE_URL" in message


def test_a_judge_object_that_fails_gives_a_masked_judge_error():
    class Broken:
        async def __call__(self, prompt):
            raise ConnectionResetError("the judge's socket closed")

    result = play(gymnasium.make(ENV_ID, judge=Broken()), ["Lamarck"], task_index=DARWIN)
    assert (result.reward, result.info["failure_kind"], result.info["mask_sample"]) == (
        0.0,
        "judge_error",
        True,
    )
    assert "ConnectionResetError: the judge's socket closed" in result.info["details"]["judge_error"]


def test_custom_prompt_system_message_and_labels():
    with ModelServer(script=replies("Judgement: yes")) as server:
        env = make(
            server.base_url,
            judge_system_message="Be strict.",
            judge_prompt_template="Q={question}|E={expected_answer}|G={generated_answer}",
            judge_equal_label="Judgement: yes",
            judge_not_equal_label="Judgement: no",
            question_extract_regex=r"\n\n(.*)$",
        )
        assert play(env, ["Charles Darwin"], task_index=DARWIN).reward == 1.0
    assert server.requests[0]["input"] == [
        {"role": "system", "content": "Be strict."},
        {
            "role": "user",
            "content": "Q=Who proposed the theory of evolution by natural selection?"
            "|E=darwin|G=Charles Darwin",
        },
    ]


def test_exact_matches_skip_the_judge_unless_disabled():
    with ModelServer(script=replies("[[A=B]]")) as server:
        result = play(make(server.base_url), ["\\boxed{Darwin}."], task_index=DARWIN)
        assert result.reward == 1.0 and server.num_requests == 0
        assert result.info["details"]["judge_evaluations"][0]["shortcut"] == "exact_match"
        assert (
            play(make(server.base_url, exact_match_shortcut=False), ["Darwin"], task_index=DARWIN).reward
            == 1.0
        )
        assert server.num_requests == 1


# ----------------------------------------------------------------------------- extraction
def test_empty_final_answer_skips_the_judge():
    with ModelServer(script=replies()) as server:
        env = make(server.base_url, check_twice_swap=True)
        for turn in ["", "   \n", [it.message("Earlier answer"), it.message("")], [it.reasoning("42")]]:
            result = play(env, [turn], task_index=DARWIN)
            assert (result.reward, result.info["failure_kind"]) == (0.0, "empty_final_answer")
            assert result.info["details"]["failure_reason"] == "empty_final_answer"
    assert server.num_requests == 0


def test_max_answer_chars_counts_the_last_message_before_extraction():
    with ModelServer(script=replies("[[A=B]]")) as server:
        env = make(server.base_url, max_answer_chars=20)
        result = play(env, ["x" * 15 + "\nAnswer: mitochondria"], task_index=ORGANELLE)
        assert (result.reward, result.info["failure_kind"]) == (0.0, "final_answer_too_long")
        assert result.info["details"]["failure_reason"] == "final_answer_too_long: 36 characters exceeds 20"
        assert server.num_requests == 0
        turn = [it.message("a long earlier message " * 10), it.message("Answer: mitochondria")]
        assert play(env, [turn], task_index=ORGANELLE).reward == 1.0


def test_per_record_regex_extracts_the_answer():
    with ModelServer(script=replies("[[A=B]]")) as server:
        result = play(make(server.base_url), ["It makes ATP.\nAnswer: mitochondria"], task_index=ORGANELLE)
    assert result.reward == 1.0 and result.info["details"]["extracted_answer"] == "mitochondria"
    assert prompts(server) == [("the mitochondrion", "mitochondria")]


def test_failed_extraction_falls_back_to_the_whole_answer_for_half_credit():
    text = "The powerhouse of the cell: mitochondria"
    with ModelServer(script=replies("[[A!=B]]", "[[A=B]]", "[[A!=B]]", "[[A!=B]]", "[[A!=B]]")) as server:
        env = make(server.base_url)
        result = play(env, [text], task_index=ORGANELLE)
        assert result.reward == 0.5 and len(result.info["details"]["judge_evaluations"]) == 2
        assert play(env, [text], task_index=ORGANELLE).reward == 0.0
        no_rescue = make(server.base_url, check_full_generation_on_fail=False)
        assert play(no_rescue, [text], task_index=ORGANELLE).reward == 0.0
    assert server.num_requests == 5


def test_no_rescue_without_a_per_record_regex():
    with ModelServer(script=replies("[[A!=B]]")) as server:
        assert play(make(server.base_url), ["Lamarck"], task_index=DARWIN).reward == 0.0
    assert server.num_requests == 1


def test_long_expected_answers_skip_the_regex_rescue_and_swap():
    with ModelServer(script=replies("[[A!=B]]", "[[A=B]]")) as server:
        env = make(server.base_url, check_twice_swap=True)
        answer = "Blue light scatters more.\nAnswer: Rayleigh scattering"
        assert play(env, [answer], task_index=SKY).reward == 0.0
        result = play(env, [answer], task_index=SKY)
    assert result.reward == 1.0 and server.num_requests == 2
    assert prompts(server)[0][1] == answer  # the whole text, not the regex match


def test_response_extract_regex_and_expected_answer_in_metadata():
    with ModelServer(script=replies("[[A=B]]")) as server:
        env = make(server.base_url, response_extract_regex=r"\\boxed\{(.*?)\}")
        result = play(env, ["I'd say \\boxed{Saturn} no, \\boxed{the planet Jupiter}"], task_index=JUPITER)
    assert result.reward == 1.0
    assert prompts(server) == [("Jupiter", "the planet Jupiter")]


@pytest.mark.parametrize(
    ("text", "regex", "expected"),
    [
        ("a\nAnswer: x\nAnswer: y", r"Answer:\s*([^\n]+)", "y"),
        ("a\nAnswer: x\nAnswer: y", r"Answer:\s*(.+)", "x\nAnswer: y"),  # DOTALL, as in NeMo
        ("no match", r"Answer:\s*(.+)", "no match"),
        ("The end", r"(?=The)", ""),
        ("A: 1 B: 2", r"(A): (\d)|(B): (\d)", "B"),
        ("[bad", r"[", "[bad"),
    ],
)
def test_extract(text, regex, expected):
    assert extract(text, regex) == expected


def test_final_answer_text_joins_the_parts_of_the_last_message():
    message = it.message("a")
    message["content"].append({"type": "output_text", "text": "b", "annotations": []})
    assert final_answer_text([it.message("old"), message, it.reasoning("r")]) == "a\nb"
    assert final_answer_text([{"type": "message", "role": "assistant", "content": " s "}]) == "s"
    assert final_answer_text([]) == ""


# ----------------------------------------------------------------------------- env contract
@pytest.mark.parametrize("index", range(7))
def test_reference_scores_one_on_every_row(index, oracle_server):
    # Without the exact-match shortcut every reference answer goes to the (oracle-played) judge.
    env = make(oracle_server.base_url, exact_match_shortcut=False)
    result = play_reference(env, task_index=index)
    assert result.reward == 1.0 and result.info["reward_components"]["judge_calls"] >= 1


@pytest.mark.parametrize("index", range(7))
def test_reference_scores_one_offline(index):
    assert play_reference(make(DOWN), task_index=index).reward == 1.0


def test_check_env():
    check_env(make(DOWN).unwrapped, skip_render_check=True)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (row(), "expected_answer"),
        (row(expected_answer=""), "expected_answer"),
        (row(metadata={"other": 1}), "expected_answer"),
        (row(expected_answer="x", template_metadata={"output_regex": "(unclosed"}), "template_metadata"),
        (row(expected_answer="x", template_metadata={"output_regex": 3}), "template_metadata"),
        ({"expected_answer": "x"}, "responses_create_params"),
    ],
)
def test_bad_rows_name_the_field(bad, field):
    with pytest.raises(TaskError, match=f"field '{field}"):
        make(tasks=[bad])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"response_extract_regex": "("}, "response_extract_regex"),
        ({"judge_prompt_template": "{question} {answer}"}, "judge_prompt_template"),
        ({"judge_equal_label": "X", "judge_not_equal_label": "X"}, "labels"),
        ({"max_answer_chars": 0}, "max_answer_chars"),
        ({"verdict_label_position": "middle"}, "verdict_label_position"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


def test_prompt_template_file(tmp_path):
    path = tmp_path / "template.txt"
    path.write_text("E={expected_answer} G={generated_answer} Q={question}\n")
    with ModelServer(script=replies("[[A=B]]")) as server:
        env = make(server.base_url, judge_prompt_template_fpath=path)
        assert play(env, ["Charles Darwin"], task_index=DARWIN).reward == 1.0
    assert server.requests[0]["input"][0]["content"].startswith("E=darwin G=Charles Darwin Q=")


def test_default_template_round_trip():
    prompt = DEFAULT_PROMPT_TEMPLATE.format(question="q", expected_answer="e\n\nf", generated_answer="g")
    assert EquivalenceLLMJudgeEnv().judged_answers(prompt) == ("e\n\nf", "g")


# ----------------------------------------------------------------------------- end to end
def test_collect_with_the_cli_and_the_judge_on_the_test_server(oracle_server, tmp_path, monkeypatch):
    monkeypatch.setenv("GYM_LLM_JUDGE_BASE_URL", oracle_server.base_url)
    monkeypatch.setenv("GYM_LLM_JUDGE_MODEL", "judge")
    out = tmp_path / "rollouts.jsonl"
    argv = [
        "collect",
        ENV_ID,
        "-o",
        str(out),
        "--model",
        "m",
        "--base-url",
        oracle_server.base_url,
        "--no-progress",
    ]
    assert cli_main(argv) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 7 and all(r["reward"] == 1.0 for r in records)
    # A recorded rollout re-verifies to the same reward.
    verifier = make(oracle_server.base_url, exact_match_shortcut=False).unwrapped
    assert verifier.verify_row(records[DARWIN]).reward == 1.0

    # The same through the Python API, with every answer sent to the judge.
    result = asyncio.run(
        acollect(
            ENV_ID,
            tmp_path / "judged.jsonl",
            policy=make_policy("m", base_url=oracle_server.base_url),
            env_kwargs={"judge": judge(oracle_server.base_url), "exact_match_shortcut": False},
        )
    )
    assert result.summary["mean_reward"] == 1.0
    assert result.summary["mean_reward_components"]["judge_calls"] >= 1.0


def test_collect_with_the_judge_given_in_env_kwargs(oracle_server, tmp_path, no_judge_configured):
    out = tmp_path / "rollouts.jsonl"
    env_kwargs = {"judge": judge(oracle_server.base_url), "exact_match_shortcut": False}
    argv = ["collect", ENV_ID, "-o", str(out), "--model", "test", "--base-url", oracle_server.base_url]
    assert cli_main([*argv, "--env-kwargs", json.dumps(env_kwargs), "--no-progress"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 7 and all(r["reward"] == 1.0 and not r["mask_sample"] for r in records)
    assert all(r["reward_components"]["judge_calls"] >= 1 for r in records)
