"""IFEval's ``keywords:*`` instructions. Keywords are regular expressions, as in the reference."""

from __future__ import annotations

import collections
from typing import Annotated

from pydantic import Field, field_validator

from ..registry import Args, Count, Phrase, Relation, compare, count_pattern, registrar, search_all

register = registrar("ifeval")


class KeywordsArgs(Args):
    keywords: Annotated[list[Phrase], Field(min_length=1)]


@register("keywords:existence", KeywordsArgs)
def keywords_existence(text: str, *, keywords: list[str]) -> bool:
    """Every keyword pattern matches somewhere (case-insensitive)."""
    return all(search_all(keyword, text) for keyword in keywords)


class KeywordFrequencyArgs(Args):
    keyword: Phrase
    frequency: Count
    relation: Relation


@register("keywords:frequency", KeywordFrequencyArgs)
def keywords_frequency(text: str, *, keyword: str, frequency: int, relation: str) -> bool:
    """The keyword pattern matches ``less than``/``at least`` ``frequency`` times (case-insensitive)."""
    return compare(count_pattern(keyword.strip(), text), relation, frequency)


class ForbiddenWordsArgs(Args):
    forbidden_words: Annotated[list[Phrase], Field(min_length=1)]


@register("keywords:forbidden_words", ForbiddenWordsArgs)
def keywords_forbidden_words(text: str, *, forbidden_words: list[str]) -> bool:
    """No ``\\b<word>\\b`` pattern matches (case-insensitive)."""
    return not any(search_all(r"\b" + word + r"\b", text) for word in forbidden_words)


class LetterFrequencyArgs(Args):
    letter: Annotated[str, Field(min_length=1, max_length=1)]
    let_frequency: Count
    let_relation: Relation

    @field_validator("letter")
    @classmethod
    def _visible(cls, value: str) -> str:
        if value.isspace():
            raise ValueError("the letter must be a single non-whitespace character")
        return value


@register("keywords:letter_frequency", LetterFrequencyArgs)
def keywords_letter_frequency(text: str, *, letter: str, let_frequency: int, let_relation: str) -> bool:
    """The character occurs ``less than``/``at least`` ``let_frequency`` times (case-insensitive)."""
    return compare(collections.Counter(text.lower())[letter.lower()], let_relation, let_frequency)
