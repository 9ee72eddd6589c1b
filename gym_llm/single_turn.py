"""``SingleTurnEnv``: the base of graded single-turn envs (math, multiple choice, judged answers).

One model turn is the whole episode: it is verified as it is, and tool calls in it are recorded
and graded, never run (NeMo Gym's ``execute_tools: false``).

Example:
    >>> from gym_llm import SingleTurnEnv, Verdict
    >>> from gym_llm import items as it
    >>> class Echo(SingleTurnEnv):
    ...     def verify(self, task, response):
    ...         return Verdict(float(it.last_assistant_text(response["output"]) == "hi"))
    >>> env = Echo(tasks=[{"responses_create_params": {"input": "Say hi."}}])
    >>> _ = env.reset(seed=0)
    >>> env.step("hi")[1:3]
    (1.0, True)
"""

from __future__ import annotations

from typing import ClassVar

from gym_llm.env import LLMEnv


class SingleTurnEnv(LLMEnv):
    """An :class:`~gym_llm.env.LLMEnv` whose episode is one graded turn: ``max_turns = 1``,
    ``execute_tools = False``. Subclasses provide ``task_model``, ``verify`` and ``reference_action``."""

    max_turns = 1
    execute_tools: ClassVar[bool] = False
