"""IFBench's ``ratio:*`` instructions."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .. import text as tx
from ..registry import Args, registrar

register = registrar("ifbench")

# NLTK's English stop words that a ``\w+`` token can equal (its entries with an apostrophe never do).
STOPWORDS = frozenset(
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her "
    "hers herself it its itself they them their theirs themselves what which who whom this that these "
    "those am is are was were be been being have has had having do does did doing a an the and but if "
    "or because as until while of at by for with about against between into through during before after "
    "above below to from up down in out on off over under again further then once here there when where "
    "why how all any both each few more most other some such no nor not only own same so than too very "
    "s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma "
    "mightn mustn needn shan shouldn wasn weren won wouldn".split()
)


class PercentageArgs(Args):
    percentage: Annotated[int, Field(ge=0)]


@register("ratio:stop_words", PercentageArgs)
def stop_words(text: str, *, percentage: int) -> bool:
    """Stop words are at most ``percentage`` % of the ``\\w+`` words (no words: not followed)."""
    tokens = tx.words(text)
    if not tokens:
        return False
    stop = sum(1 for token in tokens if token.lower() in STOPWORDS)
    return stop / len(tokens) * 100 <= percentage


def _endings(text: str) -> tuple[int, int, int]:
    """How many Punkt sentences end in ``.``, in ``?`` and in ``!``."""
    found = tx.sentences(text)
    declarative, interrogative, exclamatory = (sum(1 for s in found if s.endswith(mark)) for mark in ".?!")
    return declarative, interrogative, exclamatory


@register("ratio:sentence_type", needs=("punkt",))
def sentence_type(text: str) -> bool:
    """Twice as many Punkt sentences ending in ``.`` as ending in ``?``."""
    declarative, interrogative, _ = _endings(text)
    return declarative == 2 * interrogative


@register("ratio:sentence_balance", needs=("punkt",))
def sentence_balance(text: str) -> bool:
    """As many Punkt sentences ending in ``.`` as in ``?`` and as in ``!``."""
    declarative, interrogative, exclamatory = _endings(text)
    return declarative == interrogative == exclamatory


class OverlapArgs(Args):
    reference_text: str
    percentage: Annotated[int, Field(ge=0)]


def _trigrams(text: str) -> set[str]:
    return {text[index : index + 3] for index in range(len(text) - 2)}


@register("ratio:overlap", OverlapArgs)
def overlap(text: str, *, reference_text: str, percentage: int) -> bool:
    """The share of the response's character trigrams found in the reference is ``percentage`` ± 2 %."""
    grams = _trigrams(text)
    if not grams:
        return False
    share = len(grams & _trigrams(reference_text)) / len(grams) * 100
    return percentage - 2 <= share <= percentage + 2


@register("ratio:sentence_words", needs=("punkt",))
def sentence_words(text: str) -> bool:
    """Exactly three Punkt sentences of the same length in characters (words are not compared)."""
    found = tx.sentences(text)
    return len(found) == 3 and len({len(sentence.strip()) for sentence in found}) == 1
