"""Every supported instruction, registered: IFEval (25), IFEvalG additions (29), IFBench (58).

Importing this module imports each checker module of :mod:`.checkers`, which fills
:data:`INSTRUCTIONS`. The calls to run a checker live in :mod:`.registry` and are re-exported here.

Example:
    >>> check_instruction("punctuation:no_comma", {}, "No commas here.")
    True
    >>> check_instruction("length_constraints:number_words", {"num_words": 3, "relation": "at least"}, "Hi")
    False
    >>> sorted({spec.source for spec in INSTRUCTIONS.values()})
    ['ifbench', 'ifeval', 'ifevalg']
"""

from __future__ import annotations

from collections.abc import Iterable

from . import text as tx
from .checkers import (  # noqa: F401  (each import registers its checkers)
    ifbench_count,
    ifbench_custom,
    ifbench_format,
    ifbench_ratio,
    ifbench_repeat,
    ifbench_sentence,
    ifbench_words,
    ifeval_format,
    ifeval_keywords,
    ifeval_language_case,
    ifeval_length,
    ifeval_structure,
    ifevalg_copy,
    ifevalg_count,
    ifevalg_first_last,
    ifevalg_format,
    ifevalg_keywords,
)
from .language import detect_language
from .registry import (
    INSTRUCTIONS,
    Instruction,
    InvalidPattern,
    check_instruction,
    describe_kwargs_error,
    parse_kwargs,
)

__all__ = [
    "INSTRUCTIONS",
    "Instruction",
    "InvalidPattern",
    "check_instruction",
    "describe_kwargs_error",
    "needed_resources",
    "parse_kwargs",
    "warm_up",
]


def needed_resources(instruction_ids: Iterable[str]) -> frozenset[str]:
    """The models (``"punkt"``, ``"langdetect"``, ``"tagger"``) the given instructions load.

    Example:
        >>> sorted(needed_resources(["language:response_language", "punctuation:no_comma"]))
        ['langdetect']
    """
    needs: set[str] = set()
    for instruction_id in instruction_ids:
        spec = INSTRUCTIONS.get(instruction_id)
        if spec is not None:
            needs |= spec.needs
    return frozenset(needs)


def warm_up(resources: Iterable[str]) -> None:
    """Load the models named (``"punkt"``, ``"langdetect"``, ``"tagger"``) now, not in a first verify."""
    from .tagger import first_token_tag

    wanted = set(resources)
    if "punkt" in wanted:
        tx.word_tokens("Warm up.")
    if "langdetect" in wanted:
        detect_language("warm up")
    if "tagger" in wanted:
        first_token_tag(["Warm"])
