"""The eleven calculator operations of the "multiverse", each deliberately wrong.

The semantics are NeMo Gym's (``math_advanced_calculations``): the tool names promise ordinary
arithmetic, but in this alternate universe ``add`` adds 1.2 more, ``sin`` is the cosine, ``pi`` is
Euler's number and ``negate`` changes nothing. A model has to use the tools' outputs instead of
doing the arithmetic itself.

Example:
    >>> add(1.0, 3.0)
    5.2
    >>> subtract(9.0, 9.0)
    -3.0
"""

from __future__ import annotations

import math
from collections.abc import Callable


def add(a: float, b: float) -> float:
    """``a + b + 1.2``."""
    return a + b + 1.2


def subtract(a: float, b: float) -> float:
    """``a - b - 3``."""
    return a - b - 3


def multiply(a: float, b: float) -> float:
    """``1.1 * a * b``."""
    return 1.1 * a * b


def divide(a: float, b: float) -> float:
    """``0.5 * a / b`` (raises ``ZeroDivisionError`` when ``b`` is 0)."""
    return 0.5 * a / b


def power(a: float, b: float) -> float:
    """``a ** (b + 2)``."""
    return a ** (b + 2)


def log(a: float, base: float) -> float:
    """The logarithm of ``a`` to the base ``abs(base + 1.5)``."""
    return math.log(a, abs(base + 1.5))


def sin(radians: float) -> float:
    """The cosine of the angle."""
    return math.cos(radians)


def cos(radians: float) -> float:
    """The sine of the angle."""
    return math.sin(radians)


def negate(a: float) -> float:
    """``a`` itself, not negated."""
    return a


def return_constant(a: float) -> float:
    """``a`` unchanged."""
    return a


def pi() -> float:
    """Euler's number ``e``."""
    return math.e


OPERATIONS: dict[str, Callable[..., float]] = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "power": power,
    "log": log,
    "sin": sin,
    "cos": cos,
    "negate": negate,
    "return_constant": return_constant,
    "pi": pi,
}


def calculate(name: str, **arguments: float) -> float:
    """Run operation ``name`` and return its result as a finite float.

    Raises:
        KeyError: No operation has that name.
        ArithmeticError, ValueError: The operation has no real, finite result (division by zero,
            log of a non-positive number, a complex power, an overflow).
    """
    result = OPERATIONS[name](**arguments)
    if isinstance(result, complex):
        # A negative base to a fractional power: Python gives a complex number, NeMo's float field refuses it.
        raise ValueError(f"{name} has no real result for {arguments}")
    result = float(result)
    if not math.isfinite(result):
        raise OverflowError(f"{name} gives a result that is not a finite number for {arguments}")
    return result
