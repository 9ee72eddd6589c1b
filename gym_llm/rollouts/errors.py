"""The one error a collection run raises for what the user must act on."""

from __future__ import annotations

from typing import Any


class CollectError(RuntimeError):
    """A run that cannot start or cannot go on: the output file exists, it holds another run's
    rollouts, the model server answered none of the first rollouts, or every Ray worker was lost.

    The message says what happened and what to do. ``result`` is the
    :class:`~gym_llm.rollouts.CollectResult` of what was written before the run stopped (None when
    it stopped before writing anything).
    """

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result
