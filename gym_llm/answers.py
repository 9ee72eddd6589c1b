"""Answer grading toolkit shared by the envs: boxed answers, wrapper stripping, numeric comparison.

Every env that reads a final answer out of model text uses these functions, so that ``\\boxed{}``
and its nested braces, ``$…$`` and ``\\text{…}`` mean the same thing everywhere.

Example:
    >>> last_boxed("First \\\\boxed{1}, then \\\\boxed{\\\\frac{1}{2}}.")
    '\\\\frac{1}{2}'
    >>> answers_match("\\\\(0.50\\\\)", "1/2")
    True
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

BOXED = "\\boxed"
FBOX = "\\fbox"

_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")
# Outer math delimiters, longest first so that ``$$x$$`` is not read as ``$`` + ``$x$`` + ``$``.
_MATH_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


def closing_brace(text: str, open_index: int) -> int | None:
    """The index of the ``}`` that closes the ``{`` at ``open_index``, or ``None`` if it never closes.

    Example:
        >>> closing_brace("{a{b}c}d", 0), closing_brace("{a{b}", 0)
        (6, None)
    """
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def last_boxed(text: str, *, commands: Sequence[str] = (BOXED,)) -> str | None:
    """The contents of the last ``\\boxed{…}`` in ``text``, stripped; nested braces are balanced.

    Args:
        text: Model output.
        commands: The box commands to look for (``(BOXED, FBOX)`` also takes ``\\fbox{…}``); the one
            that starts last wins.

    Returns:
        The stripped contents, or ``None`` when there is no box, when the last one never closes
        (an earlier, closed box does not stand in for it) or when it holds only whitespace.

    Example:
        >>> last_boxed("\\\\boxed{\\\\text{a {b}}} and \\\\boxed{ 2 }")
        '2'
        >>> last_boxed("\\\\boxed{1} and finally \\\\boxed{2") is None
        True
        >>> last_boxed("\\\\fbox{C}", commands=(BOXED, FBOX))
        'C'
    """
    starts = [(text.rfind(command + "{"), command) for command in commands]
    start, command = max(starts)
    if start < 0:
        return None
    open_index = start + len(command)
    end = closing_brace(text, open_index)
    if end is None:
        return None
    return text[open_index + 1 : end].strip() or None


def unbox(text: str) -> str:
    """``text`` without a ``\\boxed{…}`` that wraps all of it (stripped); anything else unchanged.

    Example:
        >>> unbox(" \\\\boxed{x+1} "), unbox("\\\\boxed{a} and \\\\boxed{b}")
        ('x+1', '\\\\boxed{a} and \\\\boxed{b}')
    """
    text = text.strip()
    prefix = BOXED + "{"
    if text.startswith(prefix) and closing_brace(text, len(BOXED)) == len(text) - 1:
        return text[len(prefix) : -1].strip()
    return text


def strip_math_delimiters(answer: str) -> str:
    """``answer`` without outer math delimiters: ``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]`` (repeatedly).

    Example:
        >>> [strip_math_delimiters(a) for a in (" $\\\\sqrt{2}$ ", "\\\\(x^2\\\\)", "$$x$$", "$")]
        ['\\\\sqrt{2}', 'x^2', 'x', '$']
    """
    answer = answer.strip()
    while True:
        for opening, closing in _MATH_DELIMITERS:
            fits = len(answer) >= len(opening) + len(closing)
            if fits and answer.startswith(opening) and answer.endswith(closing):
                answer = answer[len(opening) : len(answer) - len(closing)].strip()
                break
        else:
            return answer


def unwrap_text(answer: str) -> str:
    """``answer`` without ``\\text{…}`` wrappers around all of it (repeatedly, stripped).

    Example:
        >>> unwrap_text("\\\\text{ \\\\text{E} }"), unwrap_text("\\\\text{a} + \\\\text{b}")
        ('E', '\\\\text{a} + \\\\text{b}')
    """
    answer = answer.strip()
    prefix = "\\text{"
    while answer.startswith(prefix) and closing_brace(answer, len(prefix) - 1) == len(answer) - 1:
        answer = answer[len(prefix) : -1].strip()
    return answer


def normalize_answer(answer: str) -> str:
    """``answer`` without outer math delimiters and ``\\text{}``, whitespace runs collapsed.

    Example:
        >>> normalize_answer("$\\\\text{ 42  apples }$")
        '42 apples'
    """
    previous = None
    while answer != previous:  # "\\text{$x$}" and "$\\text{x}$" alike
        previous, answer = answer, unwrap_text(strip_math_delimiters(answer))
    return " ".join(answer.split())


def exact_form(text: str) -> str:
    """An answer with only its wrapping removed: an outer ``\\boxed{}``, math delimiters and
    ``\\text{}``, case, whitespace runs and a final period. Two answers with the same exact form are
    the same answer (an env may skip its judge for them).

    Example:
        >>> exact_form(" \\\\boxed{Charles  DARWIN}. "), exact_form("$x+1$")
        ('charles darwin', 'x+1')
        >>> exact_form("C++") == exact_form("C")
        False
    """
    text = text.strip().rstrip(".").rstrip()
    text = normalize_answer(unbox(normalize_answer(text)))
    return " ".join(text.casefold().split()).rstrip(".").rstrip()


def parse_number(text: str) -> float | None:
    """``text`` as a finite number: a decimal (``-2.5``, ``1e3``), with thousands separators
    (``1,000``), or a fraction of two such numbers (``3/4``); else ``None``.

    Example:
        >>> parse_number(" 1,000.5 "), parse_number("-3/4"), parse_number("1,2"), parse_number("1/0")
        (1000.5, -0.75, None, None)
    """
    parts = text.split("/")
    if len(parts) == 2:
        top, bottom = _decimal(parts[0]), _decimal(parts[1])
        return None if top is None or not bottom else top / bottom
    return _decimal(text) if len(parts) == 1 else None


def _decimal(text: str) -> float | None:
    text = text.strip()
    if "," in text:
        if not _THOUSANDS.fullmatch(text):
            return None
        text = text.replace(",", "")
    if "_" in text:  # float() reads "1_000"; an answer does not
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def numbers_match(first: str, second: str, *, rel_tol: float = 1e-6) -> bool:
    """Whether both texts are numbers (:func:`parse_number`) within ``rel_tol`` of ``second``
    (absolute below magnitude 1).

    Example:
        >>> numbers_match("42.0", "42"), numbers_match("0.5", "0.51"), numbers_match("x", "x")
        (True, False, False)
    """
    a, b = parse_number(first), parse_number(second)
    if a is None or b is None:
        return False
    return abs(a - b) <= rel_tol * max(1.0, abs(b))


def answers_match(actual: str | None, expected: str, *, rel_tol: float = 1e-6) -> bool:
    """Whether two answers are equal after :func:`normalize_answer`, or equal as numbers.

    Example:
        >>> answers_match("\\\\(4227\\\\)", "4227"), answers_match("1", "\\\\text{1}")
        (True, True)
        >>> answers_match("0.5", "0.51"), answers_match(None, "1")
        (False, False)
    """
    if actual is None:
        return False
    left, right = normalize_answer(actual), normalize_answer(expected)
    return left == right or numbers_match(left, right, rel_tol=rel_tol)
