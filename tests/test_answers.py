"""The shared answer-grading toolkit: boxed answers, wrappers, numbers; and the envs that use it."""

from __future__ import annotations

import math

import pytest

from gym_llm import items as it
from gym_llm.answers import (
    BOXED,
    FBOX,
    answers_match,
    closing_brace,
    exact_form,
    last_boxed,
    normalize_answer,
    numbers_match,
    parse_number,
    strip_math_delimiters,
    unbox,
    unwrap_text,
)
from gym_llm.envs.math_with_code.env import extract_answer
from gym_llm.envs.mcqa.env import MCQAEnv


@pytest.mark.parametrize(
    ("text", "boxed"),
    [
        ("so \\boxed{42}.", "42"),
        ("\\boxed{1} then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\text{a {nested} b}}", "\\text{a {nested} b}"),
        ("\\boxed{ 7 }", "7"),
        ("\\boxed{1} and finally \\boxed{2", None),  # the last box never closes
        ("\\boxed{  }", None),
        ("\\boxed 5", None),
        ("no box here", None),
        ("", None),
        ("\\boxed{}}", None),
    ],
)
def test_last_boxed(text, boxed):
    assert last_boxed(text) == boxed


def test_last_boxed_with_fbox_takes_the_box_that_starts_last():
    assert last_boxed("\\fbox{A} \\boxed{B}", commands=(BOXED, FBOX)) == "B"
    assert last_boxed("\\boxed{B} \\fbox{A}", commands=(BOXED, FBOX)) == "A"
    assert last_boxed("\\fbox{A}") is None


def test_closing_brace():
    assert closing_brace("x{a}", 1) == 3
    assert closing_brace("{{}", 0) is None
    # Escaped braces count too: they come in pairs in a set answer, as in \boxed{\{1, 2\}}.
    assert closing_brace("{\\{1, 2\\}}", 0) == 9
    assert last_boxed("\\boxed{\\{1, 2\\}}") == "\\{1, 2\\}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\boxed{x}", "x"),
        ("\\boxed{{a}{b}}", "{a}{b}"),
        ("\\boxed{a}.", "\\boxed{a}."),
        ("\\boxed{a} \\boxed{b}", "\\boxed{a} \\boxed{b}"),
        ("\\boxed{unclosed", "\\boxed{unclosed"),
    ],
)
def test_unbox(text, expected):
    assert unbox(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$x$", "x"),
        ("$$ x $$", "x"),
        ("\\(x\\)", "x"),
        ("\\[x\\]", "x"),
        ("$\\(x\\)$", "x"),
        ("$a$ and $b$", "a$ and $b"),  # the outer pair only, as NeMo strips it
        ("$", "$"),
        ("$$", ""),
    ],
)
def test_strip_math_delimiters(text, expected):
    assert strip_math_delimiters(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\text{E}", "E"),
        ("\\text{ \\text{ E } }", "E"),
        ("\\text{a {b} c}", "a {b} c"),
        ("\\text{a} + \\text{b}", "\\text{a} + \\text{b}"),
        ("\\textbf{a}", "\\textbf{a}"),
    ],
)
def test_unwrap_text(text, expected):
    assert unwrap_text(text) == expected


def test_normalize_answer_unwraps_in_any_order():
    assert normalize_answer("\\text{$x$}") == normalize_answer("$\\text{x}$") == "x"
    assert normalize_answer("  a \n b ") == "a b"


def test_exact_form():
    assert exact_form(" \\boxed{Charles  DARWIN}. ") == "charles darwin"
    assert exact_form("$\\boxed{\\text{Darwin}}$") == exact_form("darwin")
    assert exact_form("\\boxed{a} and \\boxed{b}") == "\\boxed{a} and \\boxed{b}"
    assert exact_form("C++") != exact_form("C")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42.0),
        (" -2.5 ", -2.5),
        ("+1e3", 1000.0),
        ("12,345,678", 12345678.0),
        ("3/4", 0.75),
        ("1,000/4", 250.0),
        ("1,23", None),
        ("1_000", None),
        ("1/0", None),
        ("1/2/3", None),
        ("inf", None),
        ("nan", None),
        ("1e999", None),
        ("", None),
        ("x", None),
    ],
)
def test_parse_number(text, value):
    parsed = parse_number(text)
    assert parsed == value and (parsed is None or math.isfinite(parsed))


def test_numbers_match_is_relative_above_one_and_absolute_below():
    assert numbers_match("1000000", "1000000.9") and not numbers_match("1000000", "1000002")
    assert numbers_match("0.0000001", "0") and not numbers_match("0.00001", "0")
    assert numbers_match("0.5", "0.6", rel_tol=0.2)


def test_answers_match():
    assert answers_match("42.0", "42") and answers_match("\\(4227\\)", "4227")
    assert answers_match("1", "\\text{1}") and answers_match("$0.5$", "1/2")
    assert answers_match("x + 1", "x  +  1") and not answers_match("x+1", "1+x")
    assert not answers_match("0.5", "0.51") and not answers_match(None, "1")


# ----------------------------------------------------------------------------- envs on the toolkit
TRICKY = "First \\boxed{A}, but finally \\boxed{\\text{ {C} }}"


def test_the_envs_read_boxes_alike():
    """The toolkit's rules hold in every env that reads a box: the last box, braces balanced."""
    assert extract_answer([it.message(TRICKY)]) == last_boxed(TRICKY) == "\\text{ {C} }"
    mcqa = MCQAEnv()
    task = mcqa.tasks[0]
    verdict = mcqa.verify(task, {"output": [it.message("\\boxed{A} then \\boxed{\\text{ [B] }}")]})
    assert verdict.details["extracted_answer"] == "B"
    unclosed = mcqa.verify(task, {"output": [it.message("\\boxed{B} then \\boxed{C")]})
    assert unclosed.details["extracted_answer"] is None and unclosed.failure_kind == "no_answer"
