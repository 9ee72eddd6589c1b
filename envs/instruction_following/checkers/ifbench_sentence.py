"""IFBench's ``sentence:*`` instructions."""

from __future__ import annotations

import itertools
import re
import string

from .. import text as tx
from ..registry import Args, Count, Phrase, Positive, registrar

register = registrar("ifbench")
_STRIP = string.punctuation + " "


def _alliteration(sentence: str) -> int:
    """Words in runs of consecutive words sharing their first letter (a run of k counts k)."""
    initials = [word.lstrip(_STRIP)[0] for word in sentence.lower().split() if word.lstrip(_STRIP)]
    total, in_run = 0, False
    for current, following in itertools.pairwise(initials):
        if current == following:
            total += 1 if in_run else 2
            in_run = True
        else:
            in_run = False
    return total


@register("sentence:alliteration_increment", needs=("punkt",))
def alliteration_increment(text: str) -> bool:
    """Each Punkt sentence has more alliterating words than the one before."""
    previous = -1
    for sentence in tx.sentences(text):
        current = _alliteration(sentence)
        if current <= previous:
            return False
        previous = current
    return True


class KeywordSentenceArgs(Args):
    word: Phrase
    N: Positive


@register("sentence:keyword", KeywordSentenceArgs, needs=("punkt",))
def keyword(text: str, *, word: str, N: int) -> bool:
    """The ``N``th Punkt sentence contains the word, as a whole word (case-insensitive)."""
    found = tx.sentences(text)
    return len(found) >= N and re.search(rf"\b{re.escape(word)}\b", found[N - 1], re.IGNORECASE) is not None


class IncrementArgs(Args):
    small_n: Count


@register("sentence:increment", IncrementArgs, needs=("punkt",))
def increment(text: str, *, small_n: int) -> bool:
    """Each Punkt sentence has exactly ``small_n`` more words (punctuation removed) than the last."""
    counts = [len(tx.remove_punctuation(sentence).split()) for sentence in tx.sentences(text)]
    if not counts:
        return False
    return all(following == current + small_n for current, following in itertools.pairwise(counts))
