"""MathAdvancedCalculations ("multiverse math"): evaluate expressions with deliberately wrong tools.

Port of NeMo Gym's ``math_advanced_calculations``. The model gets eleven calculator tools whose
names promise ordinary arithmetic but whose results follow the rules of an alternate universe
(see :mod:`.calculator`): ``add`` is ``a + b + 1.2``, ``multiply`` is ``1.1 * a * b``, ``sin`` is
the cosine, ``pi`` is ``e``, and so on. Each tool returns ``{"solution": float}``.

The reward is 1.0 iff every value of the row's ``ground_truth`` appears among the ``solution``
values of the episode's tool outputs (exact float equality, as NeMo); the final text is ignored.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict

from .calculator import OPERATIONS, calculate

# failure_kind values
NO_SOLUTIONS = "no_solutions"
MISSING_VALUES = "missing_values"
INVALID_GROUND_TRUTH = "invalid_ground_truth"


def parse_ground_truth(value: Any) -> list[float]:
    """The ground-truth values of a row: a string holding a JSON (or Python) list of numbers, or a list.

    Raises:
        ValueError: The value is not a non-empty list of numbers.
    """
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            try:
                parsed = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                raise ValueError(f"not a list of numbers: {value[:80]!r}") from None
    if not isinstance(parsed, (list, tuple)) or not parsed:
        raise ValueError("expected a non-empty list of numbers")
    for number in parsed:
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise ValueError(f"expected numbers, got {number!r}")
    return [float(number) for number in parsed]


def tool_solutions(output: list[Any]) -> list[float]:
    """The ``solution`` of every ``function_call_output`` that carries one (others are skipped)."""
    solutions = []
    for item in output:
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        try:
            solutions.append(float(json.loads(item["output"])["solution"]))
        except (KeyError, TypeError, ValueError, OverflowError):
            continue  # a tool error or an output of another shape: NeMo skips it too
    return solutions


class ReferenceCall(BaseModel):
    """One tool call of a row's reference solution (ours, optional)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, float] = {}

    @field_validator("name")
    @classmethod
    def _known_tool(cls, name: str) -> str:
        if name not in OPERATIONS:
            raise ValueError(f"unknown tool {name!r}; expected one of {', '.join(OPERATIONS)}")
        return name


class MathAdvancedCalculationsTask(TaskRow):
    """NeMo's verifier fields (``ground_truth``; ``id``, ``depth``, ``breadth`` are informative)."""

    id: int | str | None = None
    ground_truth: str | list[float]
    depth: int | str | None = None
    breadth: int | str | None = None
    # Ours: the tool calls whose outputs are the ground truth, in order, with literal arguments.
    reference_calls: list[ReferenceCall] | None = None

    @field_validator("ground_truth", mode="before")
    @classmethod
    def _parsable(cls, value: Any) -> Any:
        parse_ground_truth(value)
        return value


class MathAdvancedCalculationsEnv(LLMEnv):
    """Eleven twisted calculator tools; reward 1.0 iff every ground-truth value was computed."""

    task_model = MathAdvancedCalculationsTask
    max_turns = 20
    reward_components = ("fraction_found",)

    def __init__(self, tasks: Any = None, *, tolerance: float = 0.0, **kwargs: Any) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            tolerance: Relative and absolute tolerance when matching a ground-truth value to a tool
                output. NeMo compares floats exactly (the default, 0.0); a small tolerance such as
                ``1e-9`` forgives an operand order that changes the last bit of a product.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if tolerance < 0:
            raise ValueError(f"tolerance must not be negative, got {tolerance}")
        self.tolerance = tolerance
        super().__init__(tasks, **kwargs)

    # ------------------------------------------------------------------ tools
    @tool
    def add(self, a: float, b: float) -> dict[str, float]:
        """Add two numbers; a + b.

        Args:
            a: First number to add.
            b: Second number to add.
        """
        return {"solution": calculate("add", a=a, b=b)}

    @tool
    def subtract(self, a: float, b: float) -> dict[str, float]:
        """Subtract two numbers; a - b.

        Args:
            a: Number to subtract from.
            b: Number to subtract.
        """
        return {"solution": calculate("subtract", a=a, b=b)}

    @tool
    def multiply(self, a: float, b: float) -> dict[str, float]:
        """Multiply two numbers; a * b.

        Args:
            a: First number to multiply.
            b: Second number to multiply.
        """
        return {"solution": calculate("multiply", a=a, b=b)}

    @tool
    def divide(self, a: float, b: float) -> dict[str, float]:
        """Divide two numbers; a / b. Division is neither commutative nor associative.

        Args:
            a: Numerator.
            b: Denominator.
        """
        return {"solution": calculate("divide", a=a, b=b)}

    @tool
    def power(self, a: float, b: float) -> dict[str, float]:
        """Raise a number to a power; a ** b.

        Args:
            a: Base number.
            b: Exponent.
        """
        return {"solution": calculate("power", a=a, b=b)}

    @tool
    def log(self, a: float, base: float) -> dict[str, float]:
        """Take the log of a number; log(a, base). The base is always positive in this alternate universe.

        Args:
            a: Number to take the logarithm of.
            base: Base of the logarithm.
        """
        return {"solution": calculate("log", a=a, base=base)}

    @tool
    def sin(self, radians: float) -> dict[str, float]:
        """The sine of an angle in radians.

        Args:
            radians: Angle in radians.
        """
        return {"solution": calculate("sin", radians=radians)}

    @tool
    def cos(self, radians: float) -> dict[str, float]:
        """The cosine of an angle in radians.

        Args:
            radians: Angle in radians.
        """
        return {"solution": calculate("cos", radians=radians)}

    @tool
    def negate(self, a: float) -> dict[str, float]:
        """Negate a number; -a.

        Args:
            a: Number to negate.
        """
        return {"solution": calculate("negate", a=a)}

    @tool
    def return_constant(self, a: float) -> dict[str, float]:
        """Return a constant number: a with no modifications.

        Args:
            a: Number to return.
        """
        return {"solution": calculate("return_constant", a=a)}

    @tool
    def pi(self) -> dict[str, float]:
        """Returns a precise value of PI for this alternate universe."""
        return {"solution": calculate("pi")}

    # ------------------------------------------------------------------ grading
    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        try:
            expected = parse_ground_truth(task.get("ground_truth"))
        except ValueError as exc:
            return Verdict(0.0, failure_kind=INVALID_GROUND_TRUTH, details={"error": str(exc)})
        solutions = tool_solutions(response["output"])
        found = [value for value in expected if self._computed(value, solutions)]
        missing = [value for value in expected if not self._computed(value, solutions)]
        failure_kind = None
        if not solutions:
            failure_kind = NO_SOLUTIONS
        elif missing:
            failure_kind = MISSING_VALUES
        return Verdict(
            0.0 if missing else 1.0,
            components={"fraction_found": len(found) / len(expected)},
            details={"found": found, "missing": missing, "num_solutions": len(solutions)},
            failure_kind=failure_kind,
        )

    def _computed(self, value: float, solutions: list[float]) -> bool:
        if not self.tolerance:
            return value in solutions  # NeMo: exact float equality
        return any(math.isclose(value, s, rel_tol=self.tolerance, abs_tol=self.tolerance) for s in solutions)

    # ------------------------------------------------------------------ reference solution
    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """First turn: the row's ``reference_calls`` (or ``return_constant`` of each ground-truth
        value when the row has none); second turn: a message listing the values."""
        if not any(item.get("type") == "function_call_output" for item in observation["input"]):
            calls = task.get("reference_calls") or [
                {"name": "return_constant", "arguments": {"a": value}}
                for value in parse_ground_truth(task["ground_truth"])
            ]
            return [
                it.function_call(call["name"], call.get("arguments", {}), f"call_ref_{index}")
                for index, call in enumerate(calls)
            ]
        values = ", ".join(repr(value) for value in parse_ground_truth(task["ground_truth"]))
        return [it.message(f"The values are: {values}.")]
