"""open-instruct's IFEvalG ``keywords:*`` additions. Keywords are regular expressions, as there."""

from __future__ import annotations

import itertools

from .. import text as tx
from ..registry import Args, Phrase, Positive, WordOrList, count_pattern, registrar
from .ifeval_keywords import KeywordFrequencyArgs, keywords_frequency

register = registrar("ifevalg")


class KeywordArgs(Args):
    keyword: Phrase


@register("keywords:word_once", KeywordArgs)
def word_once(text: str, *, keyword: str) -> bool:
    """The keyword pattern matches exactly once (case-insensitive)."""
    return count_pattern(keyword.strip(), text) == 1


# The same check as IFEval's keywords:frequency, under IFEvalG's name.
register("keywords:word_count_different_numbers", KeywordFrequencyArgs)(keywords_frequency)


class ExcludeWordArgs(Args):
    keyword: Phrase
    instruction: str | None = None  # the reference draws a keyword from it when none is given


@register("keywords:exclude_word_harder", ExcludeWordArgs)
def exclude_word_harder(text: str, *, keyword: str, instruction: str | None) -> bool:
    """The keyword never occurs with a space on each side (case-sensitive)."""
    return f" {keyword.strip()} " not in text


@register("keywords:no_adjacent_consecutive")
def no_adjacent_consecutive(text: str) -> bool:
    """No two adjacent words start with consecutive letters of the alphabet (``a`` then ``b``)."""
    tokens = text.split()
    for word, following in itertools.pairwise(tokens):
        first, second = word[0].lower(), following[0].lower()
        if len(first) != 1 or len(second) != 1:
            return False  # a letter whose lowercase is two characters, as the reference has it
        if ord(second) - ord(first) == 1:
            return False
    return True


@register("keywords:palindrome")
def palindrome(text: str) -> bool:
    """Some whitespace-separated word reads the same backwards (case-sensitive; ``a`` counts)."""
    return any(word == word[::-1] for word in text.split())


class SpecificPositionArgs(Args):
    keyword: WordOrList
    n: Positive
    m: Positive


@register("keywords:keyword_specific_position", SpecificPositionArgs, needs=("punkt",))
def keyword_specific_position(text: str, *, keyword: str, n: int, m: int) -> bool:
    """The mth NLTK token of the nth rule-based sentence is the keyword (case-sensitive)."""
    sentences = tx.rule_sentences(text)
    if len(sentences) < n:
        return False
    tokens = tx.word_tokens(sentences[n - 1])
    return len(tokens) >= m and tokens[m - 1] == keyword.strip()


@register("keywords:start_end", needs=("punkt",))
def start_end(text: str) -> bool:
    """The first and last NLTK tokens are the same word (case-insensitive; a final ``.`` is a token)."""
    tokens = tx.word_tokens(text)
    return len(tokens) >= 2 and tokens[0].lower() == tokens[-1].lower()
