"""IFEval's ``combination:*``, ``startend:*`` and ``punctuation:no_comma`` instructions."""

from __future__ import annotations

from ..registry import Args, Phrase, registrar

register = registrar("ifeval")


@register("combination:two_responses")
def two_responses(text: str) -> bool:
    """Two different responses separated by ``******`` (and nothing else in between)."""
    parts = text.split("******")
    responses = []
    for index, part in enumerate(parts):
        if part.strip():
            responses.append(part.strip())
        elif 0 < index < len(parts) - 1:
            return False
    return len(responses) == 2 and responses[0] != responses[1]


class RepeatPromptArgs(Args):
    prompt_to_repeat: Phrase


@register("combination:repeat_prompt", RepeatPromptArgs)
def repeat_prompt(text: str, *, prompt_to_repeat: str) -> bool:
    """The response starts with the request repeated word for word (case-insensitive)."""
    return text.strip().lower().startswith(prompt_to_repeat.strip().lower())


class EndArgs(Args):
    end_phrase: Phrase


@register("startend:end_checker", EndArgs)
def end_checker(text: str, *, end_phrase: str) -> bool:
    """The response ends with the phrase (case-insensitive; closing quote marks are ignored)."""
    return text.strip().strip('"').lower().endswith(end_phrase.strip().lower())


@register("startend:quotation")
def quotation(text: str) -> bool:
    """The whole response is wrapped in double quotation marks."""
    body = text.strip()
    return len(body) > 1 and body[0] == '"' and body[-1] == '"'


@register("punctuation:no_comma")
def no_comma(text: str) -> bool:
    """No ``,`` anywhere."""
    return "," not in text
