"""The reference policy: plays the env's reference solution (the task's ground truth), offline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_llm.policies.base import Policy


class ReferencePolicy(Policy):
    """Plays ``env.reference_action(task, observation)``; no model, no network.

    Example:
        >>> import asyncio, gymnasium, gym_llm
        >>> env = gymnasium.make("llm/Weather-v0").unwrapped
        >>> policy = ReferencePolicy().bind(env)
        >>> obs, info = env.reset(options={"task_index": 0})
        >>> asyncio.run(policy(obs))[0]["name"]
        'get_weather'
    """

    def __init__(self, env: Any = None) -> None:
        self.env = env.unwrapped if env is not None else None

    def bind(self, env: Any) -> ReferencePolicy:
        """A reference policy that plays ``env``'s current task.

        Returns:
            A new :class:`ReferencePolicy` bound to ``env``.
        """
        return ReferencePolicy(env)

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        if self.env is None:
            raise RuntimeError("ReferencePolicy needs an env: ReferencePolicy(env) or policy.bind(env)")
        return self.env.reference_action(self.env.task, observation)

    def describe(self) -> dict[str, Any]:
        return {"policy": "reference"}
