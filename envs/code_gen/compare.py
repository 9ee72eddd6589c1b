"""How CodeGen judges a result: the code block of an answer, stdout against the expected output,
a call's return value against the expected one (each as LiveCodeBench / TACO judge them).

Example:
    >>> compare_output("1 2  \\n0.3333333\\n", "1 2\\n0.333333") is None
    True
    >>> returns_match((1, 2), [1, 2], json_text=True), returns_match(0.1 + 0.2, 0.3, json_text=True)
    (True, True)
    >>> returns_match(5, [5], json_text=False), returns_match(5, [5], json_text=True)
    (True, False)
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from .unit_tests import int_keys


def extract_code(text: str) -> str:
    """The lines between the last two lines that contain a code fence (``""`` if fewer than two)."""
    lines = text.split("\n")
    fences = [index for index, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _tokens_close(expected: str, actual: str, want: Decimal, got: Decimal) -> bool:
    if want == got:
        return True
    floating = any("." in token or "e" in token.lower() for token in (expected, actual))
    if not floating or not (want.is_finite() and got.is_finite()):
        return False
    error = abs(want - got)
    return error <= Decimal("1e-6") or error / max(abs(want), Decimal(1)) <= Decimal("1e-6")


def compare_output(actual: str, expected: str) -> str | None:
    """``None`` if ``actual`` matches ``expected`` as LiveCodeBench judges it, else why not."""
    got_lines = [line.strip() for line in actual.strip().split("\n")]
    want_lines = [line.strip() for line in expected.strip().split("\n")]
    if len(got_lines) != len(want_lines):
        return f"expected {len(want_lines)} output lines, got {len(got_lines)}"
    for number, (got, want) in enumerate(zip(got_lines, want_lines, strict=True), 1):
        if got == want:
            continue
        got_numbers, want_numbers = _decimals(got), _decimals(want)
        if (
            got_numbers is not None
            and want_numbers is not None
            and len(got_numbers) == len(want_numbers)
            and all(
                _tokens_close(w, g, wn, gn)
                for w, g, wn, gn in zip(want.split(), got.split(), want_numbers, got_numbers, strict=True)
            )
        ):
            continue
        return f"line {number}: expected {clip(want)!r}, got {clip(got)!r}"
    return None


def clip(text: str, length: int = 200) -> str:
    """``text`` cut to about ``length`` characters, its middle elided, for failure messages.

    Example:
        >>> clip("a" * 10 + "b" * 10, 10)
        'aaaaa ... bbbbb'
    """
    return text if len(text) <= length else text[: length // 2] + " ... " + text[-length // 2 :]


def returns_match(got: Any, expected: Any, *, json_text: bool) -> bool:
    """Whether a call's return value ``got`` matches the expected one, as the reference graders judge.

    A returned tuple counts as a list. LiveCodeBench's JSON-text tests (as NeMo Gym grades them)
    also accept equal JSON encodings and numbers within ``numpy.allclose``'s default tolerance
    (1e-8 + 1e-5 relative). TACO/APPS list-form tests also accept the value of a one-item expected
    list, a list of tuples for a list of lists, and dicts whose string keys are ints (JSON made
    them strings).
    """
    if isinstance(got, tuple):
        got = list(got)
    if json_text:
        return got == expected or _same_json(got, expected) or _close_numbers(got, expected)
    candidates = [expected]
    if isinstance(expected, dict):
        expected = [int_keys(expected)]
        candidates.append(expected)
    if isinstance(expected, list) and expected:
        first = int_keys(expected[0]) if isinstance(expected[0], dict) else expected[0]
        candidates.append(first)
        if isinstance(got, list) and got and isinstance(got[0], tuple):
            if [list(item) if isinstance(item, tuple) else item for item in got] == first:
                return True
    return any(got == candidate for candidate in candidates)


def _same_json(got: Any, expected: Any) -> bool:
    try:
        return json.dumps(got) == json.dumps(expected)
    except (TypeError, ValueError):
        return False


def _close_numbers(got: Any, expected: Any) -> bool:
    try:
        a, b = float(got), float(expected)
    except (TypeError, ValueError, OverflowError):
        return False
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)
