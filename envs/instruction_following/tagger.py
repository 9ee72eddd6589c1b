"""Part-of-speech tag of a response's first word, for IFBench's ``words:start_verb``.

IFBench tags NLTK's word tokens with NLTK's averaged-perceptron tagger, whose model is a run-time
download. We tag the same tokens with TextBlob's bundled Penn-Treebank tagger instead (Brill's
lexicon plus contextual rules, shipped in the ``textblob`` wheel): same tag set, offline, but a
different model, so a rare ambiguous first word can be tagged differently.
"""

from __future__ import annotations

import functools
from typing import Any

# Enough neighbours for the contextual rules to see the first word's surroundings.
_CONTEXT_TOKENS = 12


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from textblob.en import parser

    return parser


def first_token_tag(tokens: list[str]) -> str | None:
    """The Penn Treebank tag of ``tokens[0]`` in context, or ``None`` for no tokens.

    Example:
        >>> first_token_tag(["Write", "a", "poem", "."]), first_token_tag(["The", "cat"])
        ('VB', 'DT')
    """
    if not tokens:
        return None
    tagged = _parser().find_tags(tokens[:_CONTEXT_TOKENS])
    return str(tagged[0][1])
