"""open-instruct's IFEvalG format additions: ``paragraphs:*``, ``punctuation:*`` and three
``detectable_format:*`` ids."""

from __future__ import annotations

from .. import text as tx
from ..registry import registrar
from .ifeval_length import count_paragraphs, divider_paragraphs

register = registrar("ifevalg")


@register("paragraphs:paragraphs")
def paragraphs(text: str) -> bool:
    """Exactly two paragraphs separated by the markdown divider ``***``."""
    return divider_paragraphs(text) == 2


@register("paragraphs:paragraphs2")
def paragraphs2(text: str) -> bool:
    """Exactly two paragraphs separated by ``\\n\\n``; an empty one in between fails."""
    return count_paragraphs(text.split("\n\n")) == 2


@register("punctuation:punctuation_dot")
def punctuation_dot(text: str) -> bool:
    """No ``.`` anywhere."""
    return "." not in text


@register("punctuation:punctuation_exclamation")
def punctuation_exclamation(text: str) -> bool:
    """No ``!`` anywhere."""
    return "!" not in text


@register("detectable_format:sentence_hyphens")
def sentence_hyphens(text: str) -> bool:
    """Sentences joined by ``-`` with no spaces around them.

    The ``-`` pieces are compared, pairwise, with the rule-based sentences of the text with
    hyphens read as spaces; a piece with outer whitespace or unlike its sentence fails.
    """
    gold = tx.rule_sentences(text.replace("-", " "))
    pieces = text.split("-")
    return all(piece == piece.strip() and piece == want for piece, want in zip(pieces, gold, strict=False))


@register("detectable_format:square_brackets")
def square_brackets(text: str) -> bool:
    """Every whitespace-separated word is wrapped in ``[`` ``]``."""
    return all(word.startswith("[") and word.endswith("]") for word in text.split())


@register("detectable_format:bigram_wrapping")
def bigram_wrapping(text: str) -> bool:
    """Words pair up as ``<<first second>>``: each even word opens ``<<``, the next closes ``>>``."""
    tokens = text.split()
    return all(
        tokens[index].startswith("<<") and tokens[index + 1].endswith(">>")
        for index in range(0, len(tokens) - 1, 2)
    )
