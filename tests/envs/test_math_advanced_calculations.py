"""Tests of ``llm/MathAdvancedCalculations-v0`` (port of NeMo Gym's math_advanced_calculations)."""

from __future__ import annotations

import asyncio
import json
import math

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm
from gym_llm import items as it
from gym_llm.envs.math_advanced_calculations import calculator
from gym_llm.envs.math_advanced_calculations.env import (
    MISSING_VALUES,
    NO_SOLUTIONS,
    MathAdvancedCalculationsEnv,
    parse_ground_truth,
)
from gym_llm.tasks import TaskError
from gym_llm.testing.episodes import play, play_reference

ENV_ID = "llm/MathAdvancedCalculations-v0"


@pytest.fixture(scope="module")
def env() -> MathAdvancedCalculationsEnv:
    return MathAdvancedCalculationsEnv()


def _row(ground_truth: str = "[5.2]", **extra: object) -> dict:
    return {
        "id": 0,
        "ground_truth": ground_truth,
        "depth": 1,
        "breadth": 1,
        "responses_create_params": {
            "input": [{"role": "user", "content": "Get me the value for (1.0 + 3.0)."}]
        },
        **extra,
    }


def _output(*solutions: object, text: str = "Done.") -> dict:
    """A response whose tool outputs carry the given ``output`` strings / solution values."""
    items: list[dict] = []
    for index, solution in enumerate(solutions):
        output = solution if isinstance(solution, str) else json.dumps({"solution": solution})
        items.append(it.function_call("add", {"a": 1, "b": 3}, f"c{index}"))
        items.append(it.function_call_output(f"c{index}", output))
    items.append(it.message(text))
    return {"output": items}


def _call(name: str, call_id: str = "c1", **arguments: float) -> list[dict]:
    return [it.function_call(name, arguments, call_id)]


# ---------------------------------------------------------------------------- the twisted tools
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("add", {"a": 3.0, "b": 7.0}, 3.0 + 7.0 + 1.2),
        ("subtract", {"a": 15.0, "b": 5.0}, 7.0),
        ("multiply", {"a": 5.0, "b": 2.0}, 1.1 * 5.0 * 2.0),
        ("divide", {"a": 10.0, "b": 2.0}, 2.5),
        ("power", {"a": 2.0, "b": 3.0}, 32.0),
        ("log", {"a": 100.0, "base": 8.5}, 2.0),
        ("sin", {"radians": 0.0}, 1.0),
        ("cos", {"radians": math.pi / 2}, 1.0),
        ("negate", {"a": 7.0}, 7.0),
        ("return_constant", {"a": 42.0}, 42.0),
        ("pi", {}, math.e),
    ],
)
def test_tool_semantics_through_the_env(env, name: str, arguments: dict, expected: float) -> None:
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, _ = env.step(_call(name, **arguments))
    assert not terminated and not truncated and reward == 0.0
    output = json.loads(obs["input"][-1]["output"])
    assert output == {"solution": pytest.approx(expected, rel=1e-12)}


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("divide", {"a": 1.0, "b": 0.0}, "ZeroDivisionError"),
        ("log", {"a": -1.0, "base": 2.0}, "math domain error"),
        ("power", {"a": -2.0, "b": -1.5}, "no real result"),
        ("power", {"a": 10.0, "b": 400.0}, "OverflowError"),
    ],
)
def test_math_errors_become_tool_errors(env, name: str, arguments: dict, message: str) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_call(name, **arguments))
    error = json.loads(obs["input"][-1]["output"])["error"]
    assert name in error and message in error


def test_missing_and_extra_arguments_are_tool_errors(env) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_call("add", a=1.0) + _call("sin", "c2", radians=1.0, base=2.0))
    first, second = (json.loads(item["output"]) for item in obs["input"][-2:])
    assert "b" in first["error"] and "base" in second["error"]


def test_tool_schemas_are_strict_and_complete(env) -> None:
    schemas = {schema["name"]: schema for schema in env.reset()[0]["tools"]}
    assert set(schemas) == set(calculator.OPERATIONS)
    assert schemas["log"]["parameters"]["required"] == ["a", "base"]
    assert schemas["pi"]["parameters"]["properties"] == {}
    assert all(s["strict"] and s["parameters"]["additionalProperties"] is False for s in schemas.values())
    # The example rows carry the env's own schemas.
    assert all(row["responses_create_params"]["tools"] == list(env.reset()[0]["tools"]) for row in env.tasks)


# ---------------------------------------------------------------------------- verify
def test_all_values_found_gives_one(env) -> None:
    verdict = env.verify(_row("[-3.0, 5.2]"), _output(5.2, -3.0, 99.0))
    assert verdict.reward == 1.0 and verdict.failure_kind is None
    assert verdict.details["missing"] == [] and verdict.components["fraction_found"] == 1.0


def test_one_value_missing_gives_zero(env) -> None:
    verdict = env.verify(_row("[-3.0, 5.2, 9.9]"), _output(5.2, 9.9))
    assert verdict.reward == 0.0 and verdict.failure_kind == MISSING_VALUES
    assert verdict.details["missing"] == [-3.0]
    assert verdict.components["fraction_found"] == pytest.approx(2 / 3)


def test_the_final_text_is_ignored(env) -> None:
    # The right values in prose only do not count: they must come out of the tools.
    verdict = env.verify(_row("[5.2]"), {"output": [it.message("The answer is 5.2")]})
    assert verdict.reward == 0.0 and verdict.failure_kind == NO_SOLUTIONS
    assert env.verify(_row("[5.2]"), _output(5.2, text="I have no idea")).reward == 1.0


def test_malformed_outputs_are_skipped(env) -> None:
    junk = ['{"error": "boom"}', "not json", '{"solution": "abc"}', "[5.2]", '{"value": 5.2}']
    verdict = env.verify(_row("[5.2]"), _output(*junk, 5.2))
    assert verdict.reward == 1.0 and verdict.details["num_solutions"] == 1
    verdict = env.verify(_row("[5.2]"), _output(*junk))
    assert verdict.reward == 0.0 and verdict.failure_kind == NO_SOLUTIONS
    # Outputs that are not strings do not crash the verifier; items that are not dicts never reach it.
    weird = {"output": [{"type": "function_call_output", "call_id": "x", "output": [1]}]}
    assert env.verify(_row("[5.2]"), weird).reward == 0.0
    not_items = {"output": ["text", None]}
    assert asyncio.run(env.averify(_row("[5.2]"), not_items)).failure_kind == "malformed_response"
    assert asyncio.run(env.averify(_row("[5.2]"), {"output": "nope"})).failure_kind == "malformed_response"


def test_matching_is_exact_by_default_and_tolerant_on_request() -> None:
    near = 9.9 * (1 + 1e-15)
    assert MathAdvancedCalculationsEnv().verify(_row("[9.9]"), _output(near)).reward == 0.0
    assert MathAdvancedCalculationsEnv(tolerance=1e-9).verify(_row("[9.9]"), _output(near)).reward == 1.0
    assert MathAdvancedCalculationsEnv(tolerance=1e-9).verify(_row("[9.9]"), _output(9.91)).reward == 0.0
    with pytest.raises(ValueError, match="tolerance"):
        MathAdvancedCalculationsEnv(tolerance=-1.0)


def test_integer_solutions_match_float_ground_truth(env) -> None:
    assert env.verify(_row("[32.0]"), _output('{"solution": 32}')).reward == 1.0


def test_parse_ground_truth() -> None:
    assert parse_ground_truth("[-3.0, 0.5, 9.9]") == [-3.0, 0.5, 9.9]
    assert parse_ground_truth("(1.0, 2)") == [1.0, 2.0]  # a Python tuple string
    assert parse_ground_truth([1, 2.5]) == [1.0, 2.5]
    for bad in ("", "[]", "[1.0, 'x']", "[true]", "5.2", "{not python"):
        with pytest.raises(ValueError):
            parse_ground_truth(bad)


# ---------------------------------------------------------------------------- episodes
def test_reference_solves_every_example_row() -> None:
    env = gym.make(ENV_ID)
    for index in range(len(env.unwrapped.tasks)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert result.terminated and result.info["tool_errors"] == 0


def test_example_rows_ground_truth_matches_the_tools() -> None:
    # Recompute each row's ground truth: the last values of its reference calls, one per expression.
    for row in MathAdvancedCalculationsEnv().tasks:
        values = [calculator.calculate(c["name"], **c["arguments"]) for c in row["reference_calls"]]
        expected = parse_ground_truth(row["ground_truth"])
        assert all(value in values for value in expected)
        assert row["breadth"] == len(expected)


def test_reference_without_reference_calls_uses_return_constant() -> None:
    env = MathAdvancedCalculationsEnv(tasks=[_row("[-3.0, 2.718281828459045]")])
    result = play_reference(env)
    assert result.reward == 1.0
    calls = it.function_calls(env.response["output"])
    assert [call["name"] for call in calls] == ["return_constant", "return_constant"]


def test_wrong_operand_order_fails(env) -> None:
    # Row 0 asks for (9.0 - 9.0) = -3.0 among others; subtract(1, 1) gives the same value, but
    # divide(1, 9) is not 1 / 1 in this universe, so the reward stays 0.
    result = play(
        env,
        [
            _call("subtract", "a", a=9.0, b=9.0)
            + _call("divide", "b", a=1.0, b=9.0)
            + _call("multiply", "c", a=1.0, b=9.0)
            + _call("sin", "d", radians=5.0),
            "Done",
        ],
    )
    assert result.reward == 0.0 and result.info["details"]["missing"] == [0.5]
    assert result.info["failure_kind"] == MISSING_VALUES


def test_doing_the_arithmetic_by_hand_fails(env) -> None:
    # The model "knows" 3 + 4 = 7 and 7 * 2 = 14 and only calls return_constant: reward 0.
    result = play(env, [_call("return_constant", a=14.0), "The value is 14."], task_index=1)
    assert result.reward == 0.0 and result.info["details"]["missing"] == [18.04]


def test_turn_budget_truncates_and_still_verifies() -> None:
    env = MathAdvancedCalculationsEnv(max_turns=2)
    env.reset(options={"task_index": 1})
    env.step(_call("add", a=3.0, b=4.0))
    _, reward, terminated, truncated, _ = env.step(_call("multiply", a=8.2, b=2.0))
    assert truncated and not terminated and reward == 1.0


def test_check_env() -> None:
    check_env(gym.make(ENV_ID).unwrapped)


# ---------------------------------------------------------------------------- rows
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"ground_truth": "[]"}, "ground_truth"),
        ({"ground_truth": "five"}, "ground_truth"),
        ({"ground_truth": None}, "ground_truth"),
        ({"reference_calls": [{"name": "sqrt", "arguments": {"a": 4.0}}]}, "reference_calls.0.name"),
        ({"reference_calls": [{"name": "add", "arguments": {"a": "x"}}]}, "reference_calls.0.arguments.a"),
    ],
)
def test_bad_rows_name_the_field(change: dict, field: str) -> None:
    with pytest.raises(TaskError, match=f"field '{field}'"):
        MathAdvancedCalculationsEnv(tasks=[{**_row(), **change}])


def test_missing_ground_truth_is_named() -> None:
    row = _row()
    del row["ground_truth"]
    with pytest.raises(TaskError, match="field 'ground_truth'"):
        MathAdvancedCalculationsEnv(tasks=[row])


def test_nemo_row_shape_loads_unchanged() -> None:
    # NeMo's test row: breadth given as a string, extra fields pass through.
    row = _row("[5.2]", breadth="1", environment_name="math_advanced_calculations")
    env = MathAdvancedCalculationsEnv(tasks=[row])
    assert env.tasks[0] is row
    assert gym_llm.verify(ENV_ID, {**row, "response": _output(5.2)}).reward == 1.0
