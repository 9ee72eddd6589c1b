"""IFEval's ``length_constraints:*`` instructions: sentences, paragraphs, words."""

from __future__ import annotations

import re

from pydantic import model_validator

from .. import text as tx
from ..registry import Args, Count, Phrase, Positive, Relation, compare, registrar

register = registrar("ifeval")


class NumberSentencesArgs(Args):
    num_sentences: Count
    relation: Relation


@register("length_constraints:number_sentences", NumberSentencesArgs, needs=("punkt",))
def number_sentences(text: str, *, num_sentences: int, relation: str) -> bool:
    """Punkt's sentence count compared (a period before a lowercase word still ends a sentence)."""
    return compare(tx.count_sentences(text), relation, num_sentences)


class NumberParagraphsArgs(Args):
    num_paragraphs: Count


_DIVIDER = re.compile(r"\s?\*\*\*\s?")


def divider_paragraphs(text: str) -> int | None:
    """Paragraphs between ``***`` dividers; ``None`` if one in the middle is empty.

    A divider at the very start or end opens no paragraph.

    Example:
        >>> divider_paragraphs("One.\\n***\\nTwo."), divider_paragraphs("One. *** *** Two.")
        (2, None)
    """
    return count_paragraphs(divider_split(text))


def divider_split(text: str) -> list[str]:
    """``text`` split at each ``***`` divider (with one whitespace character either side)."""
    return _DIVIDER.split(text)


def count_paragraphs(parts: list[str]) -> int | None:
    """The non-blank ``parts``; ``None`` if a blank one lies between two others.

    Example:
        >>> count_paragraphs(["", "One.", "Two.", " "]), count_paragraphs(["One.", "", "Two."])
        (2, None)
    """
    count = len(parts)
    for index, part in enumerate(parts):
        if not part.strip():
            if 0 < index < len(parts) - 1:
                return None
            count -= 1
    return count


@register("length_constraints:number_paragraphs", NumberParagraphsArgs)
def number_paragraphs(text: str, *, num_paragraphs: int) -> bool:
    """Exactly ``num_paragraphs`` paragraphs separated by ``***``; no empty paragraph in between."""
    return divider_paragraphs(text) == num_paragraphs


class NumberWordsArgs(Args):
    num_words: Count
    relation: Relation


@register("length_constraints:number_words", NumberWordsArgs)
def number_words(text: str, *, num_words: int, relation: str) -> bool:
    """The ``\\w+`` token count compared."""
    return compare(tx.count_words(text), relation, num_words)


class NthParagraphArgs(Args):
    num_paragraphs: Positive
    nth_paragraph: Positive
    first_word: Phrase

    @model_validator(mode="after")
    def _in_range(self) -> NthParagraphArgs:
        if self.nth_paragraph > self.num_paragraphs:
            raise ValueError(f"nth_paragraph {self.nth_paragraph} > num_paragraphs {self.num_paragraphs}")
        return self


_WORD_END = frozenset(".,?!'\"")


@register("length_constraints:nth_paragraph_first_word", NthParagraphArgs)
def nth_paragraph_first_word(text: str, *, num_paragraphs: int, nth_paragraph: int, first_word: str) -> bool:
    """Exactly ``num_paragraphs`` non-empty ``\\n\\n`` paragraphs, and the nth starts with the word.

    As in IFEval, empty pieces do not count towards the number of paragraphs, but the nth piece
    is the nth of the raw ``\\n\\n`` split: an empty one there fails.
    """
    parts = text.split("\n\n")
    count = sum(1 for part in parts if part.strip())
    if nth_paragraph > count:
        return False
    paragraph = parts[nth_paragraph - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    letters: list[str] = []
    for char in word:
        if char in _WORD_END:
            break
        letters.append(char.lower())
    return count == num_paragraphs and "".join(letters) == first_word.lower()
