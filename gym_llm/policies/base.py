"""What a policy is: an async callable from an observation to an action, bound to an env if it needs one."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping
from typing import Any


class Policy(abc.ABC):
    """``await policy(observation, params)`` returns the model's turn, in any form the env accepts.

    ``params`` are the task row's sampling fields (``temperature``, ``max_output_tokens``, …) that
    the env hands out in ``reset``'s ``info["params"]``, with the run's overrides applied.

    The collection engine calls :meth:`bind` once per env it plays on, awaits the bound policy for
    every turn, and awaits :meth:`aclose` at the end. A policy closes only what it made itself:
    a client handed to it belongs to the caller.

    Example:
        >>> class Echo(Policy):
        ...     async def __call__(self, observation, params=None):
        ...         return "You said: " + str(observation["input"][-1]["content"])
        >>> import asyncio
        >>> asyncio.run(Echo()({"input": ({"role": "user", "content": "hi"},), "tools": ()}))
        'You said: hi'
    """

    def bind(self, env: Any) -> Policy:
        """The policy to play on ``env`` (default: this one; the reference policy binds to the env).

        Returns:
            A policy whose calls act on ``env``'s episodes.
        """
        return self

    @abc.abstractmethod
    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        """The model's next turn for ``observation`` (``{"input": items, "tools": schemas}``).

        Returns:
            The turn as a Responses object or its output items, a chat message, or raw text.
        """

    async def aclose(self) -> None:  # noqa: B027 - most policies hold nothing to release
        """Release the connections this policy opened itself (it may open new ones if used again)."""

    def describe(self) -> dict[str, Any]:
        """What identifies the samples this policy draws: model and sampling fields, never secrets.

        A rollout file records a digest of it, so a resumed run refuses to mix samples of another
        model or other sampling settings into the file. Addresses and keys are left out: resuming
        against the same model on another server is fine.

        Returns:
            A JSON-serialisable dict; ``{"policy": <class name>}`` unless a policy says more.
        """
        return {"policy": type(self).__name__}


class FunctionPolicy(Policy):
    """A policy made of a plain async function ``fn(observation, params) -> action``."""

    def __init__(self, fn: Callable[[Mapping[str, Any], Mapping[str, Any] | None], Awaitable[Any]]) -> None:
        self.fn = fn

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        return await self.fn(observation, params)

    def describe(self) -> dict[str, Any]:
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        return {"policy": "function", "name": f"{getattr(self.fn, '__module__', '')}.{name}"}


def as_policy(policy: Any) -> Policy:
    """``policy`` itself when it is a :class:`Policy`, else a plain async callable wrapped as one.

    Returns:
        A :class:`Policy`.

    Raises:
        TypeError: ``policy`` is neither a :class:`Policy` nor callable.
    """
    if isinstance(policy, Policy):
        return policy
    if callable(policy):
        return FunctionPolicy(policy)
    raise TypeError(f"a policy must be a gym_llm.policies.Policy or an async callable, got {policy!r}")
