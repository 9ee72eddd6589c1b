"""The reference policy: plays the env's reference solution (the task's ground truth), offline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ReferencePolicy:
    """Plays ``env.reference_action(task, observation)``; no model, no network.

    Example:
        >>> policy = ReferencePolicy(env)  # doctest: +SKIP
        >>> action = await policy(obs)
    """

    def __init__(self, env: Any = None) -> None:
        self.env = env.unwrapped if env is not None else None

    def for_env(self, env: Any) -> ReferencePolicy:
        return ReferencePolicy(env)

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        if self.env is None:
            raise RuntimeError("ReferencePolicy needs an env: ReferencePolicy(env) or policy.for_env(env)")
        return self.env.reference_action(self.env.task, observation)
