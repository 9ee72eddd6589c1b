"""CodeGen: the last code block must pass every stdin/stdout unit test in the sandbox."""

from __future__ import annotations

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from gym_llm.envs.code_gen.env import compare_output, extract_code, pack_unit_tests, unpack_unit_tests
from gym_llm.tasks import TaskError
from gym_llm.testing import play, play_reference

SUM_PAIRS = "t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(a + b)"


@pytest.fixture
def env():
    env = gymnasium.make("llm/CodeGen-v0", unit_test_timeout=1.0)
    yield env
    env.close()


def answer(code: str) -> str:
    return f"Here you go:\n```python\n{code}\n```"


def test_reference_scores_one_on_every_row(env):
    rows = env.unwrapped.tasks
    assert any("packed" in row["verifier_metadata"]["unit_tests"] for row in rows)
    for index in range(len(rows)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)


def test_right_code_scores_one_with_details(env):
    result = play(env, [answer(SUM_PAIRS)])
    assert result.reward == 1.0 and result.info["failure_kind"] is None
    details = result.info["details"]
    assert details["extracted_model_code"] == SUM_PAIRS
    assert details["tests_passed"] == details["tests_total"] == 2 and details["result"] == [True, True]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("The answer is to add the numbers.", "no_code_block"),
        ("", "empty_response"),
        (answer("def solve(:\n    pass"), "syntax_error"),
        (answer("while True:\n    pass"), "time_limit"),
        (answer("print(1 / 0)"), "runtime_error"),
        (answer("print(3)\nprint(30)\nprint(1)"), "wrong_answer"),
        (answer("import socket\nsocket.create_connection(('127.0.0.1', 80), timeout=1)"), "runtime_error"),
    ],
)
def test_bad_answers_score_zero(env, text, kind):
    result = play(env, [text])
    assert result.reward == 0.0 and result.info["failure_kind"] == kind, result.info
    assert result.info["details"]["first_failure"]


def test_stops_at_the_first_failing_test(env):
    code = "t = int(input())\nif t == 1:\n    print(0)\nelse:\n    print(3)\n    print(30)\n    print(0)"
    result = play(env, [answer(code)])
    assert result.info["details"]["tests_passed"] == 1 and result.info["details"]["result"] == [True, -2]
    assert result.info["details"]["first_failure"].startswith("test 2: wrong answer")


def test_the_last_code_block_is_graded(env):
    text = f"First try:\n```python\nprint('no')\n```\nBetter:\n{answer(SUM_PAIRS)}"
    assert play(env, [text]).reward == 1.0
    assert extract_code("```\na\n```\ntext\n```python\nb\n```") == "b"


def test_output_comparison_is_whitespace_and_float_tolerant():
    assert compare_output("1 2  \n3\n\n", "1 2\n3") is None
    assert compare_output("0.3333333", "0.333333") is None
    assert compare_output("2", "2.0") is None
    assert compare_output("3", "4") is not None and compare_output("1\n2", "1") is not None
    assert compare_output("100000000000000001", "100000000000000000") is not None


def test_packed_tests_round_trip_and_corruption_is_a_failure(env):
    packed = pack_unit_tests(["1\n2 3\n"], ["5\n"])
    assert unpack_unit_tests({"packed": packed}) == {
        "inputs": ["1\n2 3\n"],
        "outputs": ["5\n"],
        "fn_name": None,
    }
    row = dict(env.unwrapped.tasks[0])
    row["verifier_metadata"] = {"unit_tests": {"packed": "not base64!"}}
    env.reset(options={"task": row})
    *_, info = env.step(answer(SUM_PAIRS))
    assert info["failure_kind"] == "bad_tests"


def test_bad_rows_name_the_field():
    base = {"responses_create_params": {"input": "Add two numbers."}}
    with pytest.raises(TaskError, match="verifier_metadata"):
        gymnasium.make("llm/CodeGen-v0", tasks=[base])
    uneven = {**base, "verifier_metadata": {"unit_tests": {"inputs": ["1"], "outputs": []}}}
    with pytest.raises(TaskError, match="unit_tests"):
        gymnasium.make("llm/CodeGen-v0", tasks=[uneven])


def test_check_env(env):
    check_env(env.unwrapped)
