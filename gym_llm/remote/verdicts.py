"""A verify reply (NeMo Gym's verify response shape) back into a :class:`~gym_llm.verdict.Verdict`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gym_llm.failures import VERIFY_ERROR, is_masked
from gym_llm.verdict import Verdict

# verify reply fields that are not the verifier's record fields
VERDICT_FIELDS = frozenset(
    {"response", "reward", "reward_components", "mask_sample", "failure_kind", "failure_reason"}
)


def verdict_from_reply(
    reply: Mapping[str, Any], task: Mapping[str, Any], reward_components: Sequence[str]
) -> Verdict:
    """The verdict a verify reply reports.

    Args:
        reply: The reply: the echoed row plus ``reward``, ``reward_components``, ``mask_sample``,
            ``failure_kind``, ``failure_reason`` and the verifier's record fields.
        task: The row that was sent (its fields are not the verifier's).
        reward_components: The component names to keep; other components go to the details as
            ``remote_<name>``.

    Returns:
        The verdict. A reply that masks the sample for a failure kind gym_llm does not mask keeps
        it masked here: its kind becomes ``verify_error`` (the server's in ``remote_failure_kind``).

    Example:
        >>> verdict_from_reply({"reward": 1.0, "extracted_answer": "4"}, {}, ()).details
        {'extracted_answer': '4'}
    """
    components = reply.get("reward_components") or {}
    details = {key: value for key, value in reply.items() if key not in task and key not in VERDICT_FIELDS}
    details.update(
        {f"remote_{name}": value for name, value in components.items() if name not in reward_components}
    )
    if reply.get("failure_reason"):
        details["failure_reason"] = reply["failure_reason"]
    failure_kind = reply.get("failure_kind")
    if reply.get("mask_sample") and not is_masked(failure_kind):
        details["remote_failure_kind"] = failure_kind
        failure_kind = VERIFY_ERROR
    return Verdict(
        float(reply["reward"]),
        {name: float(components.get(name, 0.0)) for name in reward_components},
        details,
        failure_kind,
    )
