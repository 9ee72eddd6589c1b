"""What a judge is: one async call from a prompt to the judge's answer text.

Any object with ``async def __call__(self, prompt) -> str`` is a :class:`Judge`, so an env can take
a judge built on any client (the default, :class:`~gym_llm.judge.HTTPJudge`, speaks HTTP to an
OpenAI-compatible endpoint). A judge raises :class:`JudgeError` when it cannot answer.

Example:
    >>> class Agreeable:
    ...     async def __call__(self, prompt):
    ...         return "Same answer. [[A=B]]"
    >>> isinstance(Agreeable(), Judge)
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from gym_llm.items import content_text

Messages = Sequence[Mapping[str, Any]]
Prompt = str | Messages


class JudgeError(RuntimeError):
    """The judge could not answer: its endpoint failed after retries, it is not configured, or its
    reply carried no text. A verify that meets it gives ``failure_kind="judge_error"`` (masked)."""


@runtime_checkable
class Judge(Protocol):
    """An LLM judge: ``await judge(prompt)`` returns the judge's answer text.

    ``prompt`` is a user prompt (a string) or chat messages (``{"role", "content"}`` dicts, system
    first). Raise :class:`JudgeError` when no answer can be had.
    """

    async def __call__(self, prompt: Prompt) -> str: ...


@runtime_checkable
class JudgePromptReader(Protocol):
    """An env that can read the two answers back out of the judge prompts it writes.

    ``judged_answers(prompt)`` returns the two answers a prompt of this env asks the judge to
    compare, in the prompt's order, or ``None`` for any other prompt. Audits of judge logs use it,
    and so does a judge that plays a correct grader for tests.
    """

    def judged_answers(self, prompt: Prompt) -> tuple[str, str] | None: ...


def as_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """A prompt as chat messages: a string becomes one user message.

    Example:
        >>> as_messages("Compare.")
        [{'role': 'user', 'content': 'Compare.'}]
    """
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(message) for message in prompt]


def prompt_text(prompt: Prompt) -> str:
    """The text of a prompt's last user message (the prompt itself when it is a string).

    Example:
        >>> prompt_text([{"role": "system", "content": "Be fair."}, {"role": "user", "content": "A or B?"}])
        'A or B?'
    """
    if isinstance(prompt, str):
        return prompt
    users = [message for message in prompt if message.get("role") == "user"]
    return content_text(users[-1].get("content")) if users else ""
