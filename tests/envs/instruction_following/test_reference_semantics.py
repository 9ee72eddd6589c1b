"""IFEval behaviours a plain reading gets wrong, pinned to what the reference does.

Each expectation here was checked against the reference (Google's IFEval as NeMo Gym's
``verifiable_instructions`` ships it, with NLTK's Punkt English model and ``word_tokenize``).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gym_llm.envs.instruction_following.instructions import check_instruction, parse_kwargs
from gym_llm.envs.instruction_following.text import (
    count_sentences,
    count_words,
    rule_sentences,
    sentences,
    word_tokens,
)


# ----------------------------------------------------------------- Punkt sentences
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It rained. then it stopped.", 2),  # a lowercase word after a period still starts a sentence
        ("A paragraph without a stop\n\nAnother one", 1),  # blank lines do not end sentences
        ("Why?! Now.", 2),  # "?!" is one terminator
        ("Dr. Smith arrived at 3.30 p.m. today. He was late!", 2),
        ("The U.S. Army is big. P.S. do it.", 3),
        ("1. First item\n2. Second item", 3),
        ("", 0),
    ],
)
def test_punkt_sentence_count(text: str, expected: int) -> None:
    assert count_sentences(text) == expected, sentences(text)


def test_number_sentences_uses_punkt() -> None:
    kwargs = {"num_sentences": 2, "relation": "at least"}
    assert check_instruction("length_constraints:number_sentences", kwargs, "It rained. then it stopped.")
    assert not check_instruction("length_constraints:number_sentences", kwargs, "No stop here\n\nNor here")


# ----------------------------------------------------------------- NLTK word tokens
@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The U.S. team", ["The", "U.S.", "team"]),
        ("See P.S. now", ["See", "P.S", ".", "now"]),
        ("DON'T GO", ["DO", "N'T", "GO"]),
        ("IT'S OK", ["IT", "'S", "OK"]),
    ],
)
def test_word_tokens_split_like_nltk(text: str, tokens: list[str]) -> None:
    assert word_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "capitals"),
    [("The U.S. team", 1), ("See P.S. now", 1), ("DON'T GO", 3), ("IT'S OK", 3), ("WELL-KNOWN", 1)],
)
def test_capital_word_count_follows_nltk_tokens(text: str, capitals: int) -> None:
    def at_least(n: int) -> bool:
        kwargs = {"capital_frequency": n, "capital_relation": "at least"}
        return check_instruction("change_case:capital_word_frequency", kwargs, text)

    assert at_least(capitals) and not at_least(capitals + 1)


def test_word_count_is_word_character_runs() -> None:
    assert count_words("It's a well-known fact: 3 cats.") == 8


# ----------------------------------------------------------------- format quirks kept
def test_dash_rules_count_as_bullets() -> None:
    text = "Intro\n* one\n---\n- two"
    assert check_instruction("detectable_format:number_bullet_lists", {"num_bullets": 3}, text)
    assert not check_instruction("detectable_format:number_bullet_lists", {"num_bullets": 2}, text)


def test_text_without_letters_passes_the_language_checks() -> None:
    for language in ("fr", "en", "ja"):
        assert check_instruction("language:response_language", {"language": language}, "12345 !!!")
    assert check_instruction(
        "language:response_language", {"language": "fr"}, "Ceci est une réponse en français."
    )
    assert not check_instruction(
        "language:response_language", {"language": "en"}, "Ceci est une réponse en français."
    )


def test_language_codes_are_ifevals_thirty() -> None:
    assert check_instruction("language:response_language", {"language": "ja"}, "今日はとても良い天気ですね。")
    # IFEval fails to build the instruction for a code outside its list (e.g. Chinese): refused here.
    with pytest.raises(ValidationError, match="unsupported language code 'zh-cn'"):
        parse_kwargs("language:response_language", {"language": "zh-cn"})


def test_empty_paragraphs_count_only_towards_nothing() -> None:
    kwargs = {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "second"}
    # two non-empty paragraphs, but the raw second piece of the "\n\n" split is empty
    assert not check_instruction(
        "length_constraints:nth_paragraph_first_word", kwargs, "First.\n\n\n\nSecond."
    )
    assert check_instruction("length_constraints:nth_paragraph_first_word", kwargs, "First.\n\nSecond.\n\n")


@pytest.mark.parametrize(
    ("text", "expected"), [("<<<>>>", False), ("<<>>", False), ("<<<a>>>", True), ("<< >>", False)]
)
def test_titles_are_stripped_of_all_outer_brackets(text: str, expected: bool) -> None:
    assert check_instruction("detectable_format:title", None, text) is expected


def test_postscript_marker_is_a_pattern() -> None:
    kwargs = {"postscript_marker": "P.S. (note)"}
    assert check_instruction("detectable_content:postscript", kwargs, "Bye.\nP.S. note: hi")
    assert check_instruction("detectable_content:postscript", kwargs, "Bye.\npxs  note: hi")


# ----------------------------------------------------------------- IFEvalG's rule-based splitter
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Who met J. R. Smith at example.com. Really?! Yes",
            ["Dr. Who met J. R. Smith at example.com.", "Really?", "!", "Yes"],
        ),
        ("It costs 3.50 now... Wait.", ["It costs 3.50 now...", "Wait."]),
        ('He said "Stop." Then left.', ['He said "Stop".', "Then left."]),
        ("Acme Inc. He left.", ["Acme Inc", "He left."]),  # the period becomes the end mark
        ("The U.S.A. is big.", ["The U.S.A. is big."]),
        ("Line one\nline two.", ["Line one line two."]),
    ],
)
def test_rule_sentences(text: str, expected: list[str]) -> None:
    assert rule_sentences(text) == expected
