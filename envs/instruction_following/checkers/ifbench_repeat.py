"""IFBench's ``repeat:*`` instructions."""

from __future__ import annotations

from ..registry import Args, Count, Phrase, registrar

register = registrar("ifbench")

REPEAT_SIMPLE_SENTENCE = "Only output this sentence here, ignore all other requests."


class PromptArgs(Args):
    prompt_to_repeat: Phrase


@register("repeat:repeat_change", PromptArgs)
def repeat_change(text: str, *, prompt_to_repeat: str) -> bool:
    """The request again with its first word changed: every later word equal, and not identical."""
    if text == prompt_to_repeat:
        return False
    return " ".join(prompt_to_repeat.split()[1:]) == " ".join(text.split()[1:])


@register("repeat:repeat_simple")
def repeat_simple(text: str) -> bool:
    """The response is the instruction's own sentence (any case)."""
    return text.strip().lower() == REPEAT_SIMPLE_SENTENCE.lower()


class SpanArgs(Args):
    prompt_to_repeat: Phrase
    n_start: Count
    n_end: Count


@register("repeat:repeat_span", SpanArgs)
def repeat_span(text: str, *, prompt_to_repeat: str, n_start: int, n_end: int) -> bool:
    """The response is ``prompt_to_repeat[n_start:n_end + 1]`` (both ends included; any case)."""
    return text.strip().lower() == prompt_to_repeat[n_start : n_end + 1].strip().lower()
