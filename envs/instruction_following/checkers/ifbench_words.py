"""IFBench's ``words:*`` instructions."""

from __future__ import annotations

import collections
import itertools
import string

from .. import text as tx
from ..registry import Args, Count, Phrase, Positive, registrar
from ..tagger import first_token_tag

register = registrar("ifbench")
_STRIP = string.punctuation + " "
_ALPHABET = string.ascii_lowercase


@register("words:alphabet")
def alphabet(text: str) -> bool:
    """Words (punctuation removed) start with consecutive letters, ``z`` wrapping to ``a``."""
    tokens = tx.remove_punctuation(text).strip(_STRIP).split()
    if not tokens or tokens[0][0].lower() not in _ALPHABET:
        return False
    letter = tokens[0][0].lower()
    for word in tokens[1:]:
        word = word.strip(_STRIP).lower()
        if not word:
            continue
        letter = _ALPHABET[(_ALPHABET.index(letter) + 1) % 26]
        if word[0] != letter:
            return False
    return True


@register("words:vowel")
def vowel(text: str) -> bool:
    """A single line using at most three of the vowels ``a e i o u``."""
    lines = text.strip().split("\n")
    return len(lines) == 1 and len(set(lines[0].lower()) & set("aeiou")) <= 3


_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxyz")


@register("words:consonants")
def consonants(text: str) -> bool:
    """Every whitespace word has two ASCII consonants in a row."""
    for word in text.lower().split():
        if not any(a in _CONSONANTS and b in _CONSONANTS for a, b in itertools.pairwise(word)):
            return False
    return True


@register("words:palindrome")
def palindrome(text: str) -> bool:
    """At least 10 palindromic words of 5 or more characters (punctuation removed, any case)."""
    tokens = tx.remove_punctuation(text).lower().split()
    return sum(1 for word in tokens if len(word) >= 5 and word == word[::-1]) >= 10


_PRIMES = frozenset(n for n in range(2, 98) if all(n % d for d in range(2, n)))  # IFBench lists those to 97


@register("words:prime_lengths")
def prime_lengths(text: str) -> bool:
    """Every word (punctuation removed) has a prime number of characters (up to 97)."""
    return all(len(word) in _PRIMES for word in tx.remove_punctuation(text).split())


@register("words:start_verb", needs=("punkt", "tagger"))
def start_verb(text: str) -> bool:
    """The first NLTK token is tagged as a verb (``VB``, ``VBD``, ``VBG``, ...); see :mod:`..tagger`."""
    tag = first_token_tag(tx.first_sentence_tokens(text))
    return tag is not None and "VB" in tag


class SmallNArgs(Args):
    small_n: Count


@register("words:repeats", SmallNArgs)
def repeats(text: str, *, small_n: int) -> bool:
    """No word (lowercased, punctuation removed) occurs more than ``small_n`` times."""
    counts = collections.Counter(tx.remove_punctuation(text.lower()).split())
    return all(count <= small_n for count in counts.values())


@register("words:odd_even_syllables")
def odd_even_syllables(text: str) -> bool:
    """Consecutive words alternate between odd and even syllable counts (``syllapy``)."""
    import syllapy

    parities = [syllapy.count(word) % 2 for word in tx.remove_punctuation(text).lower().split()]
    return all(a != b for a, b in itertools.pairwise(parities))


@register("words:last_first", needs=("punkt",))
def last_first(text: str) -> bool:
    """Each Punkt sentence's last word is the next sentence's first word (any case)."""
    found = tx.sentences(text)
    for current, following in itertools.pairwise(found):
        last = current.rstrip(_STRIP).split()
        first = following.lstrip(_STRIP).split()
        if not last or not first or last[-1].lower() != first[0].lower():
            return False
    return True


@register("words:paragraph_last_first")
def paragraph_last_first(text: str) -> bool:
    """Each non-empty line ends with the word it starts with (any case, outer punctuation stripped)."""
    for line in text.split("\n"):
        tokens = line.strip().lower().strip(_STRIP).split()
        if tokens and tokens[0] != tokens[-1]:
            return False
    return True


@register("words:no_consecutive")
def no_consecutive(text: str) -> bool:
    """No two consecutive words (punctuation removed) start with the same letter (any case)."""
    tokens = tx.remove_punctuation(text.lower()).split()
    return all(a[0] != b[0] for a, b in itertools.pairwise(tokens))


class PositionArgs(Args):
    keyword: Phrase
    n: Positive
    m: Positive


@register("words:keywords_specific_position", PositionArgs, needs=("punkt",))
def keywords_specific_position(text: str, *, keyword: str, n: int, m: int) -> bool:
    """The ``m``th word of the ``n``th Punkt sentence is the keyword (NLTK tokens with a letter or
    digit; any case)."""
    found = tx.sentences(text)
    if len(found) < n:
        return False
    tokens = [token for token in tx.word_tokens(found[n - 1]) if any(char.isalnum() for char in token)]
    return len(tokens) >= m and tokens[m - 1].lower() == keyword.strip().lower()


class KeywordArgs(Args):
    keyword: Phrase


@register("words:words_position", KeywordArgs, needs=("punkt",))
def words_position(text: str, *, keyword: str) -> bool:
    """The second and the second-to-last word are the keyword (NLTK tokens; a final punctuation
    token is skipped; any case)."""
    tokens = tx.word_tokens(text)
    wanted = keyword.strip().lower()
    if len(tokens) < 2:
        return False
    if tokens[-1] in string.punctuation:  # a substring test, as in IFBench
        return len(tokens) >= 3 and tokens[1].lower() == tokens[-3].lower() == wanted
    return tokens[1].lower() == tokens[-2].lower() == wanted
