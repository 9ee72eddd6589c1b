"""Offline text helpers for the instruction checkers: words, sentences and language id.

IFEval counts sentences with NLTK's punkt model and capital words with NLTK's word tokenizer,
both of which need a download at run time. These regex splitters stand in for them; they agree
with punkt on ordinary prose (abbreviations, initials, decimals, numbered list markers).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

_WORD = re.compile(r"\w+")
# Hyphenated and apostrophe words stay one token ("WELL-KNOWN", "DON'T"), as in NLTK's tokenizer.
_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*")
# A sentence ends at a run of terminators, optionally closed by quotes or brackets.
_TERMINATOR = re.compile(r"[.!?…]+[\"'”’)\]]*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_LAST_WORD = re.compile(r"(\S+)$")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie inc ltd co corp fig approx dept est "
    "no vol pp ca cf al gen col lt sgt capt rev u.s u.k a.m p.m ph.d".split()
)


def count_words(text: str) -> int:
    """The number of ``\\w+`` tokens (IFEval's word count)."""
    return len(_WORD.findall(text))


def word_tokens(text: str) -> list[str]:
    """Word tokens; hyphens and apostrophes inside a word do not split it."""
    return _TOKEN.findall(text)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences.

    A boundary is a run of ``.``/``!``/``?`` followed by whitespace (or the end) and then by
    something that does not start with a lowercase letter. A period after a known abbreviation,
    a single-letter initial or a numbered-list marker at the start of a line is not a boundary.
    Blank lines always end a sentence.

    Example:
        >>> split_sentences("Dr. Smith arrived at 3.30 p.m. today. He was late!")
        ['Dr. Smith arrived at 3.30 p.m. today.', 'He was late!']
    """
    sentences: list[str] = []
    for block in _BLANK_LINE.split(text):
        start = 0
        for match in _TERMINATOR.finditer(block):
            end = match.end()
            if end < len(block) and not block[end].isspace():
                continue  # "3.14", "example.com", "e.g.x"
            rest = block[end:].lstrip()
            if rest and rest[0].islower():
                continue
            if match.group().rstrip("\"'”’)]") == "." and _is_abbreviation(block, start, match.start()):
                continue
            sentence = block[start:end].strip()
            if sentence:
                sentences.append(sentence)
            start = end
        tail = block[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences


def _is_abbreviation(block: str, start: int, dot: int) -> bool:
    """Whether the period at ``dot`` closes an abbreviation, an initial or a list number."""
    found = _LAST_WORD.search(block, start, dot)
    if found is None:
        return False
    word = found.group(1).lstrip("(\"'“‘").lower()
    if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return True
    if word.isdigit() and len(word) <= 3:
        line_start = block.rfind("\n", 0, found.start()) + 1
        return not block[line_start : found.start()].strip()  # "1. First item"
    return False


def count_sentences(text: str) -> int:
    return len(split_sentences(text))


# ----------------------------------------------------------------- language identification
@functools.lru_cache(maxsize=1)
def supported_languages() -> frozenset[str]:
    """The language codes langdetect knows (ISO 639-1, ``zh-cn``, ``zh-tw``), and ``zh`` for either."""
    from langdetect.detector_factory import PROFILES_DIRECTORY

    return frozenset(os.listdir(PROFILES_DIRECTORY)) | {"zh"}


@functools.lru_cache(maxsize=1)
def _detector_factory() -> Any:
    # Our own factory with a fixed seed: langdetect samples n-grams at random, and the module-level
    # ``detect`` would need the global ``DetectorFactory.seed`` set to be reproducible.
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.seed = 0
    return factory


def detect_language(text: str) -> str | None:
    """The most probable language code of ``text`` (langdetect), or ``None`` if it has no letters."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detector_factory().create()
    detector.append(text)
    try:
        return detector.detect()
    except LangDetectException:
        return None
