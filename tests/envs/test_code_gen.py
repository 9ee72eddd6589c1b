"""CodeGen: the last code block must pass every unit test (stdin or call-based) in the sandbox."""

from __future__ import annotations

import json

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from gym_llm.envs.code_gen.env import (
    compare_output,
    extract_code,
    pack_unit_tests,
    returns_match,
    unpack_unit_tests,
)
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
    forms = [row["verifier_metadata"]["unit_tests"] for row in rows]
    assert any("packed" in tests for tests in forms)
    assert any(tests.get("fn_name") and isinstance(tests["inputs"][0], str) for tests in forms)
    assert any(tests.get("fn_name") and isinstance(tests["inputs"][0], list) for tests in forms)
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
        (answer("x = " + "-" * 100_000 + "1"), "syntax_error"),  # MemoryError in the compiler
        (answer("x = " + "1+" * 200_000 + "1"), "syntax_error"),  # RecursionError in the compiler
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
    assert info["mask_sample"]  # the row's tests are broken, not the answer


def test_bad_rows_name_the_field():
    base = {"responses_create_params": {"input": "Add two numbers."}}
    with pytest.raises(TaskError, match="verifier_metadata"):
        gymnasium.make("llm/CodeGen-v0", tasks=[base])
    uneven = {**base, "verifier_metadata": {"unit_tests": {"inputs": ["1"], "outputs": []}}}
    with pytest.raises(TaskError, match="unit_tests"):
        gymnasium.make("llm/CodeGen-v0", tasks=[uneven])


def test_check_env(env):
    check_env(env.unwrapped)


def call_row(env, unit_tests: dict) -> dict:
    return {**env.unwrapped.tasks[0], "verifier_metadata": {"unit_tests": unit_tests}}


TWO_SUM = {
    "inputs": ["[2,7,11,15]\n9", "[3,2,4]\n6", "[3,3]\n6"],
    "outputs": ["[0, 1]", "[1, 2]", "[0, 1]"],
    "fn_name": "twoSum",
}
TWO_SUM_CODE = """class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return seen[target - x], i
            seen[x] = i
"""


@pytest.mark.parametrize(
    ("code", "kind", "passed"),
    [
        (TWO_SUM_CODE, None, 3),  # a Solution method; a tuple counts as a list
        (
            "def twoSum(nums, target):\n    print('debug')\n    return [0, 1] if target == 9 else [0, 0]",
            "wrong_answer",
            1,
        ),
        (TWO_SUM_CODE.replace("seen[target - x], i", "i, seen[target - x]"), "wrong_answer", 0),
        ("def two_sum(nums, target):\n    return [0, 1]", "runtime_error", 0),
        ("class Solution:\n    def twoSum(self, nums, target):\n        return nums[99]", "runtime_error", 0),
        ("class Solution:\n    def twoSum(self, nums, target):\n        while True: pass", "time_limit", 0),
    ],
)
def test_call_based_tests_run_the_function(env, code, kind, passed):
    env.reset(options={"task": call_row(env, TWO_SUM)})
    *_, info = env.step(answer(code))
    assert info["failure_kind"] == kind, info["details"]["first_failure"]
    assert info["details"]["tests_passed"] == passed


def test_call_based_failures_say_why(env):
    env.reset(options={"task": call_row(env, TWO_SUM)})
    *_, info = env.step(answer("def two_sum(nums, target):\n    return [0, 1]"))
    assert "no function or Solution method named 'twoSum'" in info["details"]["first_failure"]
    env.reset(options={"task": call_row(env, TWO_SUM)})
    *_, info = env.step(answer(TWO_SUM_CODE.replace("seen[target - x], i", "i, seen[target - x]")))
    assert info["details"]["first_failure"] == "test 1: wrong answer: expected [0, 1], got (1, 0)"
    assert info["details"]["result"] == [-2]


def test_a_return_value_that_claims_to_equal_everything_fails(env):
    cheat = "class Yes:\n    def __eq__(self, other):\n        return True\n\ndef twoSum(nums, target):\n"
    cheat += "    return Yes()"
    env.reset(options={"task": call_row(env, TWO_SUM)})
    *_, info = env.step(answer(cheat))
    assert (
        info["failure_kind"] == "wrong_answer"
        and "got <solution.Yes object" in info["details"]["first_failure"]
    )


def test_taco_style_call_based_rows(env):
    tests = {"inputs": [[[1, 2, 3]], [[5]]], "outputs": [[6], [5]], "fn_name": "total"}
    for code, reward in [
        ("def total(xs):\n    return sum(xs)", 1.0),
        ("def total(xs):\n    return len(xs)", 0.0),
    ]:
        env.reset(options={"task": call_row(env, tests)})
        _obs, got, *_ = env.step(answer(code))
        assert got == reward, code
    keyed = {"inputs": [[{"1": "a", "2": "b"}]], "outputs": [[{"2": "b", "1": "a"}]], "fn_name": "same"}
    env.reset(options={"task": call_row(env, keyed)})
    _obs, got, *_ = env.step(answer("def same(mapping):\n    assert 1 in mapping\n    return dict(mapping)"))
    assert got == 1.0  # JSON's string keys become ints again, as TACO's grader does


def test_returned_values_are_compared_as_the_reference_graders_do():
    assert returns_match((1, 2), [1, 2], json_text=True)
    assert returns_match([(1, 2)], [[1, 2]], json_text=True)  # equal JSON
    assert returns_match(0.30000001, 0.3, json_text=True) and not returns_match(0.31, 0.3, json_text=True)
    assert not returns_match([1, 2], [2, 1], json_text=True) and not returns_match({1}, [1], json_text=True)
    assert returns_match(7, [7], json_text=False) and returns_match([(1, 2)], [[[1, 2]]], json_text=False)
    assert not returns_match(7, [7], json_text=True) and not returns_match(8, [7], json_text=False)


def test_bad_call_based_tests_are_reported(env):
    env.reset(options={"task": call_row(env, {**TWO_SUM, "outputs": ["[0, 1", "[1, 2]", "[0, 1]"]})})
    *_, info = env.step(answer(TWO_SUM_CODE))
    assert (
        info["failure_kind"] == "bad_tests"
        and "call-based test 1 is not valid JSON" in info["details"]["first_failure"]
    )
    mixed = {**TWO_SUM, "inputs": ["[1]\n2", [[1], 2], "[3]\n4"]}
    with pytest.raises(TaskError, match="all be JSON text or all be argument lists"):
        gymnasium.make("llm/CodeGen-v0", tasks=[call_row(env, mixed)])


def test_sandbox_failures_are_masked_sandbox_errors(broken_unshare):
    done = broken_unshare(
        """
        import json
        import gymnasium
        import gym_llm

        env = gymnasium.make("llm/CodeGen-v0")
        for index in (0, 6):  # a stdin row and a call-based row
            env.reset(options={"task_index": index})
            row = env.unwrapped.task
            _, reward, _, _, info = env.step(f"```python\\n{row['reference_solution']}\\n```")
            failure = info["details"]["first_failure"]
            print(json.dumps([reward, info["failure_kind"], info["mask_sample"], failure]))
        """
    )
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        reward, kind, masked, reason = json.loads(line)
        assert (reward, kind, masked) == (0.0, "sandbox_error", True)
        assert reason.startswith("test 1: sandbox error:") and "No space left on device" in reason
