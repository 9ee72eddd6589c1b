"""From an env's ``judge=`` argument to a :class:`~gym_llm.judge.Judge`, and asking one safely."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gym_llm.judge.config import JudgeConfig
from gym_llm.judge.http import HTTPJudge
from gym_llm.judge.protocol import Judge, JudgeError, Prompt

JudgeArgument = Judge | JudgeConfig | Mapping[str, Any] | None


def make_judge(value: JudgeArgument) -> Judge:
    """The judge an env's ``judge`` argument names.

    Args:
        value: A :class:`~gym_llm.judge.Judge` (any async callable ``prompt -> text``), used as is;
            a :class:`~gym_llm.judge.JudgeConfig` or a dict of its fields (the rest from the
            ``GYM_LLM_JUDGE_*`` variables); or ``None`` (all from the variables). The last three
            give an :class:`~gym_llm.judge.HTTPJudge`.

    Returns:
        The judge. Building it never touches the network.

    Raises:
        ValueError: A dict with an unknown field or a bad value (the message names it), a callable
            that is not async, or a value of another type.

    Example:
        >>> make_judge({"model": "m", "base_url": "http://127.0.0.1:8000/v1"}).config.model
        'm'
    """
    if value is None or isinstance(value, (JudgeConfig, Mapping)):
        return HTTPJudge(JudgeConfig.coerce(value))
    if callable(value) and not isinstance(value, type):
        if not (inspect.iscoroutinefunction(value) or inspect.iscoroutinefunction(value.__call__)):
            raise ValueError(
                f"judge must be async: `async def __call__(self, prompt) -> str` ({type(value).__name__})"
            )
        return value
    raise ValueError(
        "judge must be a Judge (an async callable), a JudgeConfig, a dict or None, "
        f"got {type(value).__name__}"
    )


async def ask(judge: Judge | JudgeConfig, prompt: Prompt) -> str:
    """Ask a judge and return its answer text; whatever goes wrong is a :class:`JudgeError`.

    Args:
        judge: A judge, or a config for an :class:`~gym_llm.judge.HTTPJudge`.
        prompt: A user prompt, or a list of ``{"role", "content"}`` messages (system first, …).

    Returns:
        The judge's answer text.

    Raises:
        JudgeError: The judge could not answer: it raised (any exception of a custom judge is
            wrapped), or it returned something other than text.
    """
    if isinstance(judge, JudgeConfig):
        judge = HTTPJudge(judge)
    try:
        text = await judge(prompt)
    except JudgeError:
        raise
    except Exception as exc:  # a custom judge's client error: the judge failed, not the answer
        raise JudgeError(f"judge {judge!r} failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise JudgeError(f"judge {judge!r} returned {type(text).__name__}, not text")
    return text
