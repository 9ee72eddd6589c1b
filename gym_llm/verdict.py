"""The result of verifying one finished episode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Verdict:
    """A verified reward.

    Attributes:
        reward: The scalar reward.
        components: Named parts of the reward or extra metrics (averaged in summaries).
        details: Fields added to the rollout record, like NeMo Gym's ``extracted_answer``.
        failure_kind: Why the attempt failed, when it did for a reason worth counting.
    """

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    failure_kind: str | None = None
