"""The result of verifying one finished episode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gym_llm.failures import is_masked


@dataclass(slots=True)
class Verdict:
    """A verified reward.

    Attributes:
        reward: The scalar reward.
        components: Named parts of the reward or extra metrics (averaged in summaries).
        details: Fields added to the rollout record, like NeMo Gym's ``extracted_answer``.
        failure_kind: Why the attempt failed, when it did for a reason worth counting.
        masked: The failure lies outside the model's answer (a broken task row, say), for an env's
            own failure kinds; the core's kinds (``gym_llm.failures.MASKED_KINDS``) need no flag.
    """

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    failure_kind: str | None = None
    masked: bool = False

    @property
    def mask_sample(self) -> bool:
        """Whether the rollout must stay out of training data (its failure is not the model's)."""
        return self.masked or is_masked(self.failure_kind)
