"""The 25 IFEval verifiable instructions: argument models and checkers, keyed by IFEval's ids.

Each instruction is a checker ``check(text, **kwargs) -> bool`` and a pydantic model of its
``kwargs`` (IFEval's ``build_description`` arguments, same names). Rows are validated against the
models when tasks load, so a bad id or argument is reported then, not scored as a silent zero.

Example:
    >>> check_instruction("punctuation:no_comma", {}, "No commas here.")
    True
    >>> check_instruction("length_constraints:number_words", {"num_words": 3, "relation": "at least"}, "Hi")
    False
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from . import text as tx

Relation = Literal["less than", "at least"]
Count = Annotated[int, Field(ge=0)]
Phrase = Annotated[str, Field(min_length=1)]


class Args(BaseModel):
    """Arguments of an instruction; unknown names are refused (IFEval would raise a TypeError)."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


@dataclass(frozen=True)
class Instruction:
    """One verifiable instruction: its id, argument model and checker."""

    id: str
    args: type[Args]
    check: Callable[..., bool]


INSTRUCTIONS: dict[str, Instruction] = {}


def _register(instruction_id: str, args: type[Args] = NoArgs) -> Callable[[Callable[..., bool]], Callable]:
    def add(check: Callable[..., bool]) -> Callable[..., bool]:
        INSTRUCTIONS[instruction_id] = Instruction(instruction_id, args, check)
        return check

    return add


def _compare(actual: int, relation: str, threshold: int) -> bool:
    return actual < threshold if relation == "less than" else actual >= threshold


def parse_kwargs(instruction_id: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated arguments for ``instruction_id``; ``None`` values are dropped, as NeMo Gym does.

    Raises:
        KeyError: The instruction id is unknown.
        pydantic.ValidationError: An argument is missing, unknown or of the wrong type.
    """
    spec = INSTRUCTIONS[instruction_id]
    given = {key: value for key, value in (kwargs or {}).items() if value is not None}
    return spec.args.model_validate(given).model_dump()


def check_instruction(instruction_id: str, kwargs: Mapping[str, Any] | None, response: str) -> bool:
    """Whether ``response`` follows the instruction (raises on a bad id or bad arguments)."""
    return INSTRUCTIONS[instruction_id].check(response, **parse_kwargs(instruction_id, kwargs))


def describe_kwargs_error(index: int, instruction_id: str, exc: ValidationError) -> str:
    """A one-line message naming the instruction and the offending argument."""
    err = exc.errors()[0]
    name = ".".join(str(part) for part in err["loc"])
    where = f"argument {name!r}" if name else "arguments"
    return f"kwargs[{index}] for {instruction_id!r}: {where}: {err['msg']}"


# ----------------------------------------------------------------- keywords
class KeywordsArgs(Args):
    keywords: Annotated[list[Phrase], Field(min_length=1)]


@_register("keywords:existence", KeywordsArgs)
def keywords_existence(text: str, *, keywords: list[str]) -> bool:
    """Every keyword occurs somewhere (case-insensitive substring)."""
    lowered = text.lower()
    return all(keyword.lower() in lowered for keyword in keywords)


class KeywordFrequencyArgs(Args):
    keyword: Phrase
    frequency: Count
    relation: Relation


@_register("keywords:frequency", KeywordFrequencyArgs)
def keywords_frequency(text: str, *, keyword: str, frequency: int, relation: str) -> bool:
    """The keyword occurs ``less than``/``at least`` ``frequency`` times (case-insensitive)."""
    count = len(re.findall(re.escape(keyword.strip()), text, flags=re.IGNORECASE))
    return _compare(count, relation, frequency)


class ForbiddenWordsArgs(Args):
    forbidden_words: Annotated[list[Phrase], Field(min_length=1)]


@_register("keywords:forbidden_words", ForbiddenWordsArgs)
def keywords_forbidden_words(text: str, *, forbidden_words: list[str]) -> bool:
    """No forbidden word occurs as a whole word (case-insensitive)."""
    return not any(
        re.search(r"\b" + re.escape(word) + r"\b", text, flags=re.IGNORECASE) for word in forbidden_words
    )


class LetterFrequencyArgs(Args):
    letter: Annotated[str, Field(min_length=1, max_length=1, pattern=r"^[^\W\d_]$")]
    let_frequency: Count
    let_relation: Relation


@_register("keywords:letter_frequency", LetterFrequencyArgs)
def keywords_letter_frequency(text: str, *, letter: str, let_frequency: int, let_relation: str) -> bool:
    """The letter occurs ``less than``/``at least`` ``let_frequency`` times (case-insensitive)."""
    return _compare(text.lower().count(letter.lower()), let_relation, let_frequency)


# ----------------------------------------------------------------- language
class LanguageArgs(Args):
    language: str

    @field_validator("language")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in tx.supported_languages():
            known = ", ".join(sorted(tx.supported_languages()))
            raise ValueError(f"unsupported language code {value!r}; langdetect knows: {known}")
        return value


@_register("language:response_language", LanguageArgs)
def response_language(text: str, *, language: str) -> bool:
    """The whole response is detected as ``language`` (langdetect; ``zh`` matches ``zh-cn``/``zh-tw``)."""
    detected = tx.detect_language(text)
    return detected is not None and (detected == language or detected.split("-")[0] == language)


# ----------------------------------------------------------------- length constraints
class NumberSentencesArgs(Args):
    num_sentences: Count
    relation: Relation


@_register("length_constraints:number_sentences", NumberSentencesArgs)
def number_sentences(text: str, *, num_sentences: int, relation: str) -> bool:
    return _compare(tx.count_sentences(text), relation, num_sentences)


class NumberParagraphsArgs(Args):
    num_paragraphs: Count


@_register("length_constraints:number_paragraphs", NumberParagraphsArgs)
def number_paragraphs(text: str, *, num_paragraphs: int) -> bool:
    """Exactly ``num_paragraphs`` paragraphs separated by ``***``; no empty paragraph in between."""
    parts = re.split(r"\s?\*\*\*\s?", text)
    count = len(parts)
    for index, part in enumerate(parts):
        if not part.strip():
            if 0 < index < len(parts) - 1:
                return False
            count -= 1  # a divider at the very start or end does not open a paragraph
    return count == num_paragraphs


class NumberWordsArgs(Args):
    num_words: Count
    relation: Relation


@_register("length_constraints:number_words", NumberWordsArgs)
def number_words(text: str, *, num_words: int, relation: str) -> bool:
    return _compare(tx.count_words(text), relation, num_words)


class NthParagraphArgs(Args):
    num_paragraphs: Annotated[int, Field(ge=1)]
    nth_paragraph: Annotated[int, Field(ge=1)]
    first_word: Phrase

    @model_validator(mode="after")
    def _in_range(self) -> NthParagraphArgs:
        if self.nth_paragraph > self.num_paragraphs:
            raise ValueError(f"nth_paragraph {self.nth_paragraph} > num_paragraphs {self.num_paragraphs}")
        return self


_WORD_END = re.compile(r"[.,?!'\"]")


@_register("length_constraints:nth_paragraph_first_word", NthParagraphArgs)
def nth_paragraph_first_word(text: str, *, num_paragraphs: int, nth_paragraph: int, first_word: str) -> bool:
    """Exactly ``num_paragraphs`` paragraphs (split on blank lines), the nth starting with ``first_word``."""
    paragraphs = [part.strip() for part in text.split("\n\n") if part.strip()]
    if len(paragraphs) != num_paragraphs or nth_paragraph > len(paragraphs):
        return False
    word = paragraphs[nth_paragraph - 1].split()[0].lstrip("'\"")
    word = _WORD_END.split(word, maxsplit=1)[0]
    return word.lower() == first_word.strip().lower()


# ----------------------------------------------------------------- detectable content
class PlaceholdersArgs(Args):
    num_placeholders: Count


@_register("detectable_content:number_placeholders", PlaceholdersArgs)
def number_placeholders(text: str, *, num_placeholders: int) -> bool:
    """At least ``num_placeholders`` square-bracket placeholders such as ``[address]``."""
    return len(re.findall(r"\[.*?\]", text)) >= num_placeholders


class PostscriptArgs(Args):
    postscript_marker: Phrase


@_register("detectable_content:postscript", PostscriptArgs)
def postscript(text: str, *, postscript_marker: str) -> bool:
    """A postscript starting with the marker; ``P.S.``/``P.P.S`` also match without inner spaces."""
    marker = postscript_marker.strip()
    if marker == "P.P.S":
        pattern = r"p\.\s?p\.\s?s"
    elif marker == "P.S.":
        pattern = r"p\.\s?s\."
    else:
        pattern = re.escape(marker.lower())
    return re.search(pattern, text.lower()) is not None


# ----------------------------------------------------------------- detectable format
class BulletsArgs(Args):
    num_bullets: Count


_STAR_BULLET = re.compile(r"^\s*\*[^*].*$", re.MULTILINE)
_DASH_BULLET = re.compile(r"^\s*-.*$", re.MULTILINE)
_RULE = re.compile(r"^\s*-[\s-]*$")


@_register("detectable_format:number_bullet_lists", BulletsArgs)
def number_bullet_lists(text: str, *, num_bullets: int) -> bool:
    """Exactly ``num_bullets`` markdown bullet lines (``*`` or ``-``); ``---`` rules do not count."""
    dashes = [line for line in _DASH_BULLET.findall(text) if not _RULE.match(line)]
    return len(_STAR_BULLET.findall(text)) + len(dashes) == num_bullets


CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@_register("detectable_format:constrained_response")
def constrained_response(text: str) -> bool:
    """The response contains one of IFEval's three fixed answers."""
    return any(option in text for option in CONSTRAINED_RESPONSES)


class HighlightsArgs(Args):
    num_highlights: Count


@_register("detectable_format:number_highlighted_sections", HighlightsArgs)
def number_highlighted_sections(text: str, *, num_highlights: int) -> bool:
    """At least ``num_highlights`` non-empty ``*highlighted*`` spans (``**bold**`` counts too)."""
    single = [span for span in re.findall(r"\*[^\n*]*\*", text) if span.strip("*").strip()]
    double = [span for span in re.findall(r"\*\*[^\n*]*\*\*", text) if span[2:-2].strip()]
    return len(single) + len(double) >= num_highlights


class SectionsArgs(Args):
    section_spliter: Phrase
    num_sections: Count


@_register("detectable_format:multiple_sections", SectionsArgs)
def multiple_sections(text: str, *, section_spliter: str, num_sections: int) -> bool:
    """At least ``num_sections`` sections, each opened by ``<section_spliter> <number>``."""
    pattern = r"\s?" + re.escape(section_spliter.strip()) + r"\s?\d+\s?"
    return len(re.split(pattern, text)) - 1 >= num_sections


@_register("detectable_format:json_format")
def json_format(text: str) -> bool:
    """The whole response parses as JSON, optionally inside a markdown code fence."""
    body = text.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        if body.startswith(fence):
            body = body[len(fence) :]
            break
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


@_register("detectable_format:title")
def title(text: str) -> bool:
    """A non-empty title in double angular brackets, such as ``<<poem of joy>>``."""
    return any(found[2:-2].strip() for found in re.findall(r"<<[^\n]+>>", text))


# ----------------------------------------------------------------- combination
@_register("combination:two_responses")
def two_responses(text: str) -> bool:
    """Two different responses separated by ``******`` (and nothing else in between)."""
    parts = text.split("******")
    responses = []
    for index, part in enumerate(parts):
        if part.strip():
            responses.append(part.strip())
        elif 0 < index < len(parts) - 1:
            return False
    return len(responses) == 2 and responses[0] != responses[1]


class RepeatPromptArgs(Args):
    prompt_to_repeat: Phrase


@_register("combination:repeat_prompt", RepeatPromptArgs)
def repeat_prompt(text: str, *, prompt_to_repeat: str) -> bool:
    """The response starts with the request repeated word for word (case-insensitive)."""
    return text.strip().lower().startswith(prompt_to_repeat.strip().lower())


# ----------------------------------------------------------------- start / end
class EndArgs(Args):
    end_phrase: Phrase


@_register("startend:end_checker", EndArgs)
def end_checker(text: str, *, end_phrase: str) -> bool:
    """The response ends with the phrase (case-insensitive; a closing quote mark is ignored)."""
    return text.strip().strip('"').lower().endswith(end_phrase.strip().lower())


@_register("startend:quotation")
def quotation(text: str) -> bool:
    """The whole response is wrapped in double quotation marks."""
    body = text.strip()
    return len(body) > 1 and body[0] == '"' and body[-1] == '"'


# ----------------------------------------------------------------- change case
class CapitalFrequencyArgs(Args):
    capital_frequency: Count
    capital_relation: Relation


@_register("change_case:capital_word_frequency", CapitalFrequencyArgs)
def capital_word_frequency(text: str, *, capital_frequency: int, capital_relation: str) -> bool:
    """Words in all capital letters occur ``less than``/``at least`` ``capital_frequency`` times."""
    capitals = sum(1 for token in tx.word_tokens(text) if token.isupper())
    return _compare(capitals, capital_relation, capital_frequency)


@_register("change_case:english_capital")
def english_capital(text: str) -> bool:
    """The response is English and in all capital letters."""
    return text.isupper() and tx.detect_language(text) == "en"


@_register("change_case:english_lowercase")
def english_lowercase(text: str) -> bool:
    """The response is English and in all lowercase letters."""
    return text.islower() and tx.detect_language(text) == "en"


# ----------------------------------------------------------------- punctuation
@_register("punctuation:no_comma")
def no_comma(text: str) -> bool:
    return "," not in text
