"""Why an episode failed: the ``failure_kind`` values the core sets, and which of them mask a rollout.

A rollout whose failure lies outside the model's answer (the model server, the judge or the sandbox
could not be reached, ``verify`` itself crashed) says nothing about the policy: it is written with
``mask_sample: true``, counted apart in the metrics and retried on resume, never kept as a false zero.
Envs add their own kinds for answers that are wrong in a way worth counting (``no_boxed_answer``, …);
those are the model's failures and are not masked.

Example:
    >>> is_masked(JUDGE_ERROR), is_masked(MAX_TURNS), is_masked(None)
    (True, False, False)
"""

from __future__ import annotations

# The model's own failures (the reward stands).
INVALID_ACTION = "invalid_action"  # the action is no model turn in any accepted form
MAX_TURNS = "max_turns"  # the turn budget ran out without a rewarded answer

# Failures outside the model's answer (the rollout is masked).
MALFORMED_RESPONSE = "malformed_response"  # a recorded response whose output is no list of items
MODEL_ERROR = "model_error"  # the model server failed for good (after retries)
VERIFY_ERROR = "verify_error"  # verify() raised
JUDGE_ERROR = "judge_error"  # the LLM judge could not be reached, or answered without text
SANDBOX_ERROR = "sandbox_error"  # the sandbox could not run the code (not the code's own failure)
CHECKER_ERROR = "checker_error"  # a grading library crashed or timed out on the answer
USER_SIM_ERROR = "user_sim_error"  # the simulated user could not answer (its model unreachable, …)

MASKED_KINDS = frozenset(
    {MALFORMED_RESPONSE, MODEL_ERROR, VERIFY_ERROR, JUDGE_ERROR, SANDBOX_ERROR, CHECKER_ERROR, USER_SIM_ERROR}
)


def is_masked(failure_kind: str | None) -> bool:
    """Whether a rollout that failed this way must be masked out of training data."""
    return failure_kind in MASKED_KINDS
