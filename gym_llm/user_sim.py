"""Multi-turn episodes with a simulated user: the pattern of tau-bench's airline and retail domains.

After every model turn without tool calls, a :class:`UserSimulator` answers as the user, until it
says the conversation is over; ``verify`` then grades the final state. The simulator is injected
like a judge:

- :class:`ScriptedUser` replies with the task row's ``user_script`` lines in order (offline, exact);
- :class:`LLMUser` plays the user with any model: it gets the row's ``user_instructions`` as its
  system prompt and the conversation with the roles swapped, and ends the conversation by saying
  ``###STOP###``. It asks through any ``async (messages) -> text`` callable, e.g. a judge from
  :mod:`gym_llm.judge` pointed at an OpenAI-compatible endpoint.

Example:
    >>> user = ScriptedUser()
    >>> task = {"user_script": ["My order is W1.", "Thanks, bye!"]}
    >>> import asyncio
    >>> conversation = [{"role": "user", "content": "Cancel my order."}, it.message("Which order?")]
    >>> asyncio.run(user(conversation, task))
    'My order is W1.'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from gym_llm import items as it
from gym_llm.env import LLMEnv
from gym_llm.failures import USER_SIM_ERROR
from gym_llm.verdict import Verdict

STOP = "###STOP###"

Ask = Callable[[list[dict[str, Any]]], Awaitable[str]]


@runtime_checkable
class UserSimulator(Protocol):
    """``await user(conversation, task)``: the user's next message, or ``None`` when they are done."""

    async def __call__(self, conversation: Sequence[it.Item], task: Mapping[str, Any]) -> str | None: ...


class ScriptedUser:
    """Replies with the row's ``user_script`` lines, one per model turn; done when they run out."""

    async def __call__(self, conversation: Sequence[it.Item], task: Mapping[str, Any]) -> str | None:
        script = task.get("user_script") or []
        said = sum(1 for item in conversation if _is_message(item, "user")) - 1  # the first is the prompt
        return script[said] if 0 <= said < len(script) else None


class LLMUser:
    """Plays the user with a model, following the row's ``user_instructions``.

    Args:
        ask: ``await ask(messages) -> text`` (chat messages in, the model's answer out).
        max_user_turns: The user gives up after this many messages.
    """

    def __init__(self, ask: Ask, *, max_user_turns: int = 10) -> None:
        self.ask = ask
        self.max_user_turns = max_user_turns

    async def __call__(self, conversation: Sequence[it.Item], task: Mapping[str, Any]) -> str | None:
        messages = user_view(conversation, task)
        if sum(m["role"] == "assistant" for m in messages) >= self.max_user_turns:
            return None
        text = (await self.ask(messages)).strip()
        return None if STOP in text or not text else text


def user_view(conversation: Sequence[it.Item], task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The conversation as the simulated user sees it: their instructions, roles swapped, no tools.

    Example:
        >>> view = user_view([{"role": "user", "content": "Hi"}, it.message("How can I help?")],
        ...                  {"user_instructions": "You want a refund."})
        >>> view[0]["content"].splitlines()[0]
        'You are a user talking to a support agent. You want a refund.'
        >>> view[1:]
        [{'role': 'assistant', 'content': 'Hi'}, {'role': 'user', 'content': 'How can I help?'}]
    """
    system = (
        f"You are a user talking to a support agent. {task.get('user_instructions', '').strip()}\n"
        f"Say one message at a time. When your request is handled or cannot be, say {STOP}."
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for item in conversation:
        if _is_message(item, "user"):
            messages.append({"role": "assistant", "content": it.content_text(item.get("content"))})
        elif _is_message(item, "assistant"):
            text = it.content_text(item.get("content"))
            if text:
                messages.append({"role": "user", "content": text})
    return messages


class UserSimEnv(LLMEnv):
    """An :class:`~gym_llm.env.LLMEnv` whose user answers back: a model turn without tool calls goes
    to the user simulator, whose message comes back in the next observation (and in
    ``info["new_items"]``). The episode ends when the user is done, or at ``max_turns``.

    Args:
        tasks: Task rows, as for :class:`~gym_llm.env.LLMEnv`.
        user: A :class:`UserSimulator`, or a dict of :class:`~gym_llm.judge.JudgeConfig` fields for an
            :class:`LLMUser` over an OpenAI-compatible endpoint (``{"model": ..., "base_url": ...}``);
            default: :class:`ScriptedUser`, which needs ``user_script`` rows.
        **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
    """

    def __init__(
        self, tasks: Any = None, *, user: UserSimulator | Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(tasks, **kwargs)
        self.user = make_user(user)

    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, tuple], dict[str, Any]]:
        self.user_error: str | None = None  # why the simulated user could not answer, if it could not
        return await super().areset(seed=seed, options=options)

    async def user_turn(self) -> list[dict[str, Any]] | None:
        assert self.task is not None
        try:
            text = await self.user(tuple(self._conversation), self.task)
        except Exception as exc:  # the user's side failed, not the model: end, and mask the rollout
            self.user_error = f"{type(exc).__name__}: {exc}"
            return None
        return None if text is None else [{"type": "message", "role": "user", "content": text}]

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """As :meth:`LLMEnv.averify`; an episode whose user could not answer: ``user_sim_error`` (masked)."""
        if getattr(self, "user_error", None) is not None and self.is_live_response(task, response):
            failed = Verdict(0.0, failure_kind=USER_SIM_ERROR, details={"error": self.user_error})
            return self._completed(failed)
        return await super().averify(task, response)


def make_user(user: UserSimulator | Mapping[str, Any] | None) -> UserSimulator:
    """A user simulator from an env's ``user`` argument (see :class:`UserSimEnv`).

    Raises:
        ValueError: ``user`` is neither a simulator, nor a dict of endpoint fields, nor ``None``.
    """
    if user is None:
        return ScriptedUser()
    if isinstance(user, Mapping):
        from gym_llm.judge import make_judge

        return LLMUser(make_judge(dict(user)))
    if not callable(user):
        raise ValueError(
            f"user must be a user simulator (an async callable) or a dict, got {type(user).__name__}"
        )
    return user


def _is_message(item: Mapping[str, Any], role: str) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == role
