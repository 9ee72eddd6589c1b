"""LLM-as-a-judge: the :class:`Judge` protocol, its HTTP implementation and verdict parsing.

A judge is any object with ``async def __call__(self, prompt) -> str``: the prompt is a string or
chat messages, the result is the judge's answer text, and :class:`JudgeError` says it could not
answer. Judge envs take ``judge=`` as a constructor keyword (:func:`make_judge` reads it):

- a :class:`Judge` object, used as is: ``gym.make("llm/MathWithJudge-v0", judge=my_judge)``;
- a :class:`JudgeConfig` or a dict of its fields, for an :class:`HTTPJudge` (any OpenAI-compatible
  endpoint, Responses or Chat Completions API): ``judge={"model": "m", "base_url": "http://…/v1"}``;
- ``None``: an :class:`HTTPJudge` configured by environment variables alone.

==========================  =================================================================
``GYM_LLM_JUDGE_MODEL``     model name (default ``gpt-4.1-mini``)
``GYM_LLM_JUDGE_BASE_URL``  base URL (default ``$OPENAI_BASE_URL``, then ``https://api.openai.com/v1``)
``GYM_LLM_JUDGE_API_KEY``   API key (default ``$OPENAI_API_KEY``)
``GYM_LLM_JUDGE_API``       ``responses`` (default) or ``chat``
==========================  =================================================================

With none of these and no key, no judge is configured: building the env works (many answers never
need the judge), and each verify that needs it fails at once, without a network call, with
``failure_kind="judge_error"`` (a masked rollout) and a message that says how to configure one.

Example:
    >>> judge = make_judge({"model": "judge", "base_url": "http://127.0.0.1:8000/v1"})
    >>> text = await ask(judge, "Is 0.5 equal to 1/2? Answer [[A=B]] or [[A!=B]].")  # doctest: +SKIP
    >>> parse_verdict("Both are one half. [[A=B]]")
    ('[[A=B]]', [])
"""

from gym_llm.judge.config import DEFAULT_BASE_URL, DEFAULT_MODEL, JudgeConfig, judge_configured_in_env
from gym_llm.judge.http import HTTPJudge
from gym_llm.judge.prompts import template_fields
from gym_llm.judge.protocol import (
    Judge,
    JudgeError,
    JudgePromptReader,
    Messages,
    Prompt,
    as_messages,
    prompt_text,
)
from gym_llm.judge.resolve import JudgeArgument, ask, make_judge
from gym_llm.judge.verdicts import ask_for_verdict, parse_verdict

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "HTTPJudge",
    "Judge",
    "JudgeArgument",
    "JudgeConfig",
    "JudgeError",
    "JudgePromptReader",
    "Messages",
    "Prompt",
    "as_messages",
    "ask",
    "ask_for_verdict",
    "judge_configured_in_env",
    "make_judge",
    "parse_verdict",
    "prompt_text",
    "template_fields",
]
