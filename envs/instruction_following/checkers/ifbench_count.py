"""IFBench's ``count:*`` instructions."""

from __future__ import annotations

import re
import string

from .. import text as tx
from ..registry import Args, Count, Phrase, Positive, registrar

register = registrar("ifbench")
_STRIP = string.punctuation + " "


class RangeArgs(Args):
    min_words: Count
    max_words: Count


@register("count:word_count_range", RangeArgs)
def word_count_range(text: str, *, min_words: int, max_words: int) -> bool:
    """Between ``min_words`` and ``max_words`` ``\\w+`` words, both included."""
    return min_words <= tx.count_words(text) <= max_words


class AtLeastArgs(Args):
    N: Count


@register("count:unique_word_count", AtLeastArgs)
def unique_word_count(text: str, *, N: int) -> bool:
    """At least ``N`` distinct lowercase whitespace words, outer punctuation stripped."""
    return len({word.strip(_STRIP) for word in text.lower().split()}) >= N


CONJUNCTIONS = frozenset({"and", "but", "for", "nor", "or", "so", "yet"})


class SmallNArgs(Args):
    small_n: Count


@register("count:conjunctions", SmallNArgs)
def conjunctions(text: str, *, small_n: int) -> bool:
    """At least ``small_n`` distinct coordinating conjunctions.

    As in IFBench, distinct means distinct as written: ``and``, ``And`` and ``and,`` are three.
    """
    found = {word for word in text.split() if word.strip(_STRIP).lower() in CONJUNCTIONS}
    return len(found) >= small_n


PERSON_NAMES = (
    "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia "
    "Benjamin Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob "
    "Scarlett Nathan Victoria Elijah Layla Nicholas Audrey David Hannah Christopher Penelope Thomas Nora "
    "Andrew Aria Joseph Claire Ryan Stella Jonathan"
).split()


@register("count:person_names", AtLeastArgs)
def person_names(text: str, *, N: int) -> bool:
    """At least ``N`` different names from IFBench's list of 50, as whole words (case-sensitive)."""
    found = sum(1 for name in PERSON_NAMES if re.search(rf"\b{re.escape(name)}\b", text))
    return found >= N


class ExactArgs(Args):
    N: Count


@register("count:numbers", ExactArgs)
def numbers(text: str, *, N: int) -> bool:
    """Exactly ``N`` digit runs once punctuation is removed (``3.14`` and ``1,000`` are one each)."""
    return len(re.findall(r"\d+", tx.remove_punctuation(text))) == N


_MARKS = frozenset(".,!?;:")


@register("count:punctuation")
def punctuation(text: str) -> bool:
    """Uses ``. , ! ? ; :`` and an interrobang (``?!``, ``!?`` or ``‽``).

    One ``?!`` (else one ``!?``) is taken out before the other marks are looked for, as in IFBench.
    """
    if not ("!?" in text or "?!" in text or "‽" in text):
        return False
    rest = text.replace("?!", "", 1)
    if len(rest) == len(text):
        rest = text.replace("!?", "", 1)
    return _MARKS <= set(rest)


class EveryNthArgs(Args):
    N: Positive


_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@register("count:words_japanese", EveryNthArgs)
def words_japanese(text: str, *, N: int) -> bool:
    """Every ``N``th whitespace word (punctuation stripped; numbers exempt) has Japanese characters."""
    for index, word in enumerate(text.split(), start=1):
        word = word.strip(_STRIP)
        if index % N == 0 and word and not word.isdigit() and not _JAPANESE.search(word):
            return False
    return True


PRONOUNS = frozenset(
    "i me we us you he him she her it they them "
    "my mine our ours your yours his hers its their theirs "
    "myself ourselves yourself yourselves himself herself itself themselves "
    "this that these those who whom whose which what whoever whomever whatever whichever "
    "anybody anyone anything everybody everyone everything nobody nothing somebody someone something "
    "each either neither both all some any none".split()
)


@register("count:pronouns", AtLeastArgs, needs=("punkt",))
def pronouns(text: str, *, N: int) -> bool:
    """At least ``N`` pronoun tokens (NLTK tokens of the lowercased text, ``/`` read as a space)."""
    tokens = tx.word_tokens(text.replace("/", " ").lower())
    return sum(1 for token in tokens if token in PRONOUNS) >= N


class KeywordsMultipleArgs(Args):
    keyword1: Phrase
    keyword2: Phrase
    keyword3: Phrase
    keyword4: Phrase
    keyword5: Phrase


_TIMES = (1, 2, 3, 5, 7)


@register("count:keywords_multiple", KeywordsMultipleArgs)
def keywords_multiple(text: str, **keywords: str) -> bool:
    """``keyword1`` … ``keyword5`` occur exactly 1, 2, 3, 5 and 7 times (substrings, any case)."""
    lowered = text.lower()
    ordered = [keywords[f"keyword{index}"] for index in range(1, 6)]
    return all(
        lowered.count(word.strip().lower()) == times for word, times in zip(ordered, _TIMES, strict=True)
    )
