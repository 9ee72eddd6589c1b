"""open-instruct's IFEvalG counting instructions: ``count:*`` and ``letters:*``."""

from __future__ import annotations

import re

from .. import text as tx
from ..registry import Args, Count, Phrase, Relation, compare, count_pattern, registrar
from .ifeval_keywords import LetterFrequencyArgs, keywords_letter_frequency
from .ifeval_length import count_paragraphs, divider_split

register = registrar("ifevalg")


class MaxCountArgs(Args):
    N: Count


@register("count:lowercase_counting", MaxCountArgs)
def lowercase_counting(text: str, *, N: int) -> bool:
    """At most ``N`` all-lowercase ASCII words (``\\b[a-z]+\\b``) in the whole response."""
    return len(re.findall(r"\b[a-z]+\b", text)) <= N


class LetterCountingArgs(Args):
    N: Count
    relation: Relation


@register("letters:letter_counting", LetterCountingArgs)
def letter_counting(text: str, *, N: int, relation: str) -> bool:
    """The number of ASCII letters compared: ``less than``/``at least`` ``N``."""
    return compare(len(re.findall(r"[a-zA-Z]", text)), relation, N)


@register("letters:letter_counting2", LetterFrequencyArgs)
def letter_counting2(text: str, *, letter: str, let_frequency: int, let_relation: str) -> bool:
    """IFEval's ``keywords:letter_frequency`` under another id."""
    return keywords_letter_frequency(
        text, letter=letter, let_frequency=let_frequency, let_relation=let_relation
    )


class CompositionArgs(Args):
    n_sent: Count
    n_words: Count




@register("count:counting_composition", CompositionArgs, needs=("punkt",))
def counting_composition(text: str, *, n_sent: int, n_words: int) -> bool:
    """Three ``***`` paragraphs of ``n_sent`` sentences of ``n_words`` NLTK tokens each.

    Sentences are rule-based; tokens include punctuation (``Hi there.`` is three). As in the
    reference, an empty piece before a leading or after a trailing divider is still checked for
    ``n_sent`` sentences, so a leading or trailing ``***`` fails unless ``n_sent`` is 0.
    """
    parts = divider_split(text)
    if count_paragraphs(parts) != 3:
        return False
    for part in parts:
        sentences = tx.rule_sentences(part)
        if len(sentences) != n_sent:
            return False
        if any(len(tx.word_tokens(sentence)) != n_words for sentence in sentences):
            return False
    return True


@register("count:count_unique", needs=("punkt",))
def count_unique(text: str) -> bool:
    """No NLTK token repeats (case-sensitive; punctuation tokens count, so two ``.`` fail)."""
    tokens = tx.word_tokens(text)
    return len(tokens) == len(set(tokens))


class IncrementArgs(Args):
    keyword1: Phrase
    keyword2: Phrase


@register("count:count_increment_word", IncrementArgs)
def count_increment_word(text: str, *, keyword1: str, keyword2: str) -> bool:
    """Pattern ``keyword1`` matches once and ``keyword2`` twice (case-insensitive)."""
    return count_pattern(keyword1.strip(), text) == 1 and count_pattern(keyword2.strip(), text) == 2
