"""open-instruct's IFEvalG copying instructions: ``copy:*`` and ``new:copy_span_idx``."""

from __future__ import annotations

from ..registry import Args, Count, Phrase, Positive, registrar, search_all

register = registrar("ifevalg")


class RepeatPhraseArgs(Args):
    phrase: Phrase
    small_n: Positive


@register("copy:repeat_phrase", RepeatPhraseArgs)
def repeat_phrase(text: str, *, phrase: str, small_n: int) -> bool:
    """The phrase occurs ``small_n`` times, each with exactly one word changed.

    Occurrences are the shortest ``<first word> ... <last word>`` spans (a regular expression, as
    in the reference); each must have the phrase's word count and differ in exactly one word.
    """
    reference = phrase.strip().split()
    found = search_all(rf"{reference[0]} .*? {reference[-1]}", text, flags=0)
    if len(found) != small_n:
        return False
    for occurrence in found:
        candidate = occurrence.split() if isinstance(occurrence, str) else []
        if len(candidate) != len(reference):
            return False
        if sum(1 for got, want in zip(candidate, reference, strict=True) if got != want) != 1:
            return False
    return True


class PromptArgs(Args):
    prompt_to_repeat: Phrase


def _same(text: str, expected: str) -> bool:
    return text.strip().lower() == expected.strip().lower()


@register("copy:copy", PromptArgs)
def copy(text: str, *, prompt_to_repeat: str) -> bool:
    """The response is the instruction text, verbatim (case-insensitive, outer whitespace ignored)."""
    return _same(text, prompt_to_repeat)


@register("copy:copying_simple", PromptArgs)
def copying_simple(text: str, *, prompt_to_repeat: str) -> bool:
    """The response is the request, verbatim (case-insensitive, outer whitespace ignored)."""
    return _same(text, prompt_to_repeat)


class CopyingMultipleArgs(Args):
    prompt_to_repeat: Phrase
    N: Positive


@register("copy:copying_multiple", CopyingMultipleArgs)
def copying_multiple(text: str, *, prompt_to_repeat: str, N: int) -> bool:
    """The request, ``N`` times, separated by ``******``, and nothing else."""
    copies = text.split("******")
    return len(copies) == N and all(_same(part, prompt_to_repeat) for part in copies)


class CopySpanArgs(Args):
    prompt_to_repeat: Phrase
    n_start: Count
    n_end: Count


@register("new:copy_span_idx", CopySpanArgs)
def copy_span_idx(text: str, *, prompt_to_repeat: str, n_start: int, n_end: int) -> bool:
    """The response is ``prompt_to_repeat[n_start:n_end]`` (end excluded; case-insensitive)."""
    return _same(text, prompt_to_repeat[n_start:n_end])
