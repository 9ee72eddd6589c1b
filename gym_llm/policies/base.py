"""What a policy is: an async callable from an observation to an action."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """``await policy(observation, params)`` returns the model's turn, in any form the env accepts.

    ``params`` are the task row's sampling fields (``temperature``, ``max_output_tokens``, …) that
    the env hands out in ``reset``'s ``info["params"]``. A policy may also define
    ``for_env(env) -> Policy`` to bind itself to one env (the reference policy does), and
    ``aclose()`` to release connections.
    """

    async def __call__(
        self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None
    ) -> Any: ...
