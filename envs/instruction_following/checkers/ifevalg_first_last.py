"""open-instruct's IFEvalG ``first_word:*`` and ``last_word:*`` instructions."""

from __future__ import annotations

import re

from .. import text as tx
from ..registry import Args, Phrase, WordOrList, registrar

register = registrar("ifevalg")
_NOT_WORD = re.compile(r"[^\w\s]")


class FirstWordListArgs(Args):
    first_word: WordOrList


class FirstWordArgs(Args):
    first_word: Phrase


@register("first_word:first_word_sent", FirstWordListArgs)
def first_word_sent(text: str, *, first_word: str) -> bool:
    """Every rule-based sentence starts with the word (compared with its punctuation, any case)."""
    wanted = first_word.strip().lower()
    for sentence in tx.rule_sentences(text):
        if not sentence.strip() or sentence.split()[0].lower() != wanted:
            return False
    return True


@register("first_word:first_word_answer", FirstWordArgs)
def first_word_answer(text: str, *, first_word: str) -> bool:
    """The response starts with the word (compared with its punctuation, any case)."""
    tokens = text.split()
    return bool(tokens) and tokens[0].lower() == first_word.strip().lower()


class LastWordListArgs(Args):
    last_word: WordOrList


class LastWordArgs(Args):
    last_word: Phrase


def _bare(word: str) -> str:
    return _NOT_WORD.sub("", word).lower()


@register("last_word:last_word_sent", LastWordListArgs)
def last_word_sent(text: str, *, last_word: str) -> bool:
    """Every rule-based sentence ends with the word, punctuation removed (any case)."""
    wanted = last_word.strip().lower()
    for sentence in tx.rule_sentences(text):
        if not sentence.strip() or _bare(sentence.split()[-1]) != wanted:
            return False
    return True


@register("last_word:last_word_answer", LastWordArgs)
def last_word_answer(text: str, *, last_word: str) -> bool:
    """The response's last word, punctuation removed, is the word (any case)."""
    tokens = text.split()
    return bool(tokens) and _bare(tokens[-1]) == last_word.strip().lower()
