"""A correct judge for tests: the verdicts a careful grader gives the short answers of the example data.

The test model server's oracle plays it for the prompts of every registered env that can read its
own judge prompts (:class:`~gym_llm.judge.JudgePromptReader`), so judge envs grade over real HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gym_llm.answers import exact_form, numbers_match
from gym_llm.judge import JudgePromptReader, Prompt

EQUAL_REPLY = "The two answers state the same result. Verdict: [[A=B]]"
DIFFERENT_REPLY = "The two answers differ. Verdict: [[A!=B]]"

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s.+\-/]")


def reference_judgement(first: str, second: str) -> bool:
    """Whether two short answers agree: equal once wrapping, punctuation and articles are dropped,
    or equal as numbers.

    Example:
        >>> reference_judgement("The Mitochondrion.", "mitochondrion"), reference_judgement("0.5", "1/2")
        (True, True)
        >>> reference_judgement("C++", "C")
        False
    """
    a, b = _loose_form(first), _loose_form(second)
    return a == b or numbers_match(a.replace(" ", ""), b.replace(" ", ""), rel_tol=1e-9)


def _loose_form(text: str) -> str:
    text = exact_form(text).replace("\\text{", "").replace("\\,", " ")
    text = _ARTICLES.sub(" ", _PUNCT.sub(" ", text))
    return " ".join(text.split()).strip(" .")


def play_judge(readers: Iterable[JudgePromptReader], prompt: Prompt) -> str | None:
    """A correct judge's reply to a judge prompt of one of ``readers``, or ``None`` if none wrote it."""
    for reader in readers:
        pair = reader.judged_answers(prompt)
        if pair is not None:
            return EQUAL_REPLY if reference_judgement(*pair) else DIFFERENT_REPLY
    return None
