"""Every registered instruction follows and fails on a known text; the registry's shape and arguments.

The case tables (``cases_*.py``) were checked against the reference implementations (Google's IFEval
as NeMo Gym's ``verifiable_instructions`` ships it, open-instruct's IFEvalG, IFBench): each "follows"
text passes there and each "does not" text fails there, except ``words:start_verb``, whose reference
tagger is a download.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from cases_ifbench import IFBENCH_CASES
from cases_ifeval import IFEVAL_CASES
from cases_ifevalg import IFEVALG_CASES
from pydantic import ValidationError

from gym_llm.envs.instruction_following.instructions import (
    INSTRUCTIONS,
    InvalidPattern,
    check_instruction,
    needed_resources,
    parse_kwargs,
)

ALL_CASES = [*IFEVAL_CASES, *IFEVALG_CASES, *IFBENCH_CASES]


def test_registry_counts_per_source() -> None:
    assert Counter(spec.source for spec in INSTRUCTIONS.values()) == {
        "ifeval": 25,
        "ifevalg": 29,
        "ifbench": 58,
    }
    assert len(INSTRUCTIONS) == 112


@pytest.mark.parametrize(
    ("source", "cases"), [("ifeval", IFEVAL_CASES), ("ifevalg", IFEVALG_CASES), ("ifbench", IFBENCH_CASES)]
)
def test_every_instruction_has_a_case(source: str, cases: list) -> None:
    registered = {key for key, spec in INSTRUCTIONS.items() if spec.source == source}
    assert {case[0] for case in cases} == registered


def test_nemo_training_ids_are_supported() -> None:
    for instruction_id in (
        "count:lowercase_counting",
        "letters:letter_counting",
        "paragraphs:paragraphs",
        "first_word:first_word_sent",
        "last_word:last_word_answer",
    ):
        assert INSTRUCTIONS[instruction_id].source == "ifevalg"


@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "good", "bad"), ALL_CASES, ids=[c[0] for c in ALL_CASES]
)
def test_checker_passes_and_fails(instruction_id: str, kwargs: dict | None, good: str, bad: str) -> None:
    assert check_instruction(instruction_id, kwargs, good) is True
    assert check_instruction(instruction_id, kwargs, bad) is False


# ----------------------------------------------------------------- arguments
def test_none_values_are_dropped_as_nemo_does() -> None:
    kwargs = {"num_words": 3, "relation": "at least", "language": None, "keywords": None}
    assert check_instruction("length_constraints:number_words", kwargs, "one two three")


@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "field"),
    [
        ("length_constraints:number_words", {"num_words": 5}, "relation"),
        ("length_constraints:number_words", {"num_words": 5, "relation": "at most"}, "relation"),
        (
            "keywords:letter_frequency",
            {"letter": " ", "let_frequency": 1, "let_relation": "at least"},
            "letter",
        ),
        (
            "keywords:letter_frequency",
            {"letter": "ab", "let_frequency": 1, "let_relation": "at least"},
            "letter",
        ),
        ("count:words_japanese", {"N": 0}, "N"),
        ("count:keywords_multiple", {"keyword1": "a", "keyword2": "b"}, "keyword3"),
        ("ratio:overlap", {"percentage": 10}, "reference_text"),
        ("format:options", {}, "options"),
        ("first_word:first_word_answer", {"first_word": ["a"]}, "first_word"),
        ("punctuation:no_comma", {"colour": "red"}, "colour"),
    ],
)
def test_bad_arguments_are_refused(instruction_id: str, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_kwargs(instruction_id, kwargs)
    assert field in str(caught.value)


def test_word_arguments_may_be_lists_where_open_instruct_takes_the_first() -> None:
    assert check_instruction("first_word:first_word_sent", {"first_word": ["we", "they"]}, "We came. We saw.")
    assert check_instruction("last_word:last_word_sent", {"last_word": ["now"]}, "Go now. Come now.")
    assert check_instruction(
        "keywords:keyword_specific_position", {"keyword": ["sky"], "n": 1, "m": 2}, "The sky is blue."
    )


def test_ifbench_custom_instructions_ignore_any_arguments() -> None:
    assert check_instruction("custom:character_reverse", {"anything": 1}, "elgae dlab")
    with pytest.raises(ValidationError):
        parse_kwargs("repeat:repeat_simple", {"anything": 1})  # its reference takes no **kwargs


def test_letter_frequency_takes_any_visible_character() -> None:
    kwargs = {"letter": ".", "let_frequency": 2, "let_relation": "at least"}
    assert check_instruction("keywords:letter_frequency", kwargs, "One. Two.")
    assert not check_instruction("keywords:letter_frequency", kwargs, "One. Two")
    assert check_instruction(
        "letters:letter_counting2", {"letter": "E", "let_frequency": 2, "let_relation": "at least"}, "eE"
    )


def test_needed_resources() -> None:
    assert needed_resources(["words:start_verb", "punctuation:no_comma"]) == {"punkt", "tagger"}
    assert needed_resources(["change_case:english_lowercase"]) == {"langdetect"}
    assert needed_resources(["made:up"]) == frozenset()


# ----------------------------------------------------------------- patterns
@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "text", "expected"),
    [
        # keywords and markers are regular expressions in the reference
        ("keywords:existence", {"keywords": ["colou?r"]}, "A color.", True),
        ("keywords:frequency", {"keyword": "a.c", "frequency": 2, "relation": "at least"}, "abc axc", True),
        ("keywords:forbidden_words", {"forbidden_words": ["ca."]}, "A cat.", False),
        ("detectable_content:postscript", {"postscript_marker": "Note.?"}, "Bye. NOTE: call", True),
        (
            "detectable_format:multiple_sections",
            {"section_spliter": "Part|Step", "num_sections": 2},
            "Part 1 a Step 2 b",
            True,
        ),
        ("keywords:word_once", {"keyword": "r.n"}, "I ran.", True),
        ("count:count_increment_word", {"keyword1": "x", "keyword2": "y+"}, "x yy y", True),
        ("copy:repeat_phrase", {"phrase": "a b c", "small_n": 1}, "a x c", True),
    ],
)
def test_keywords_are_regular_expressions(
    instruction_id: str, kwargs: dict[str, Any], text: str, expected: bool
) -> None:
    assert check_instruction(instruction_id, kwargs, text) is expected


@pytest.mark.parametrize(
    ("instruction_id", "kwargs"),
    [
        ("keywords:existence", {"keywords": ["*star"]}),
        ("keywords:frequency", {"keyword": "(", "frequency": 1, "relation": "at least"}),
        ("detectable_format:multiple_sections", {"section_spliter": "[", "num_sections": 1}),
    ],
)
def test_a_broken_pattern_is_a_clear_error(instruction_id: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidPattern, match="not a valid regular expression"):
        check_instruction(instruction_id, kwargs, "C++ (and [more])")


def test_ifbench_literal_keywords_stay_literal() -> None:
    # IFBench escapes its keywords; "C++" and "a.c" mean themselves there.
    assert check_instruction("sentence:keyword", {"word": "a.c", "N": 1}, "See a.c now.")
    assert not check_instruction("sentence:keyword", {"word": "a.c", "N": 1}, "See abc now.")
    kwargs = {f"keyword{n}": f"k{n}+" for n in range(1, 6)}
    text = "k1+ " + "k2+ " * 2 + "k3+ " * 3 + "k4+ " * 5 + "k5+ " * 7
    assert check_instruction("count:keywords_multiple", kwargs, text)
