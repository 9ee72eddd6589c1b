"""Run one episode with a policy and turn it into a rollout record (NeMo Gym's rollout row + ours)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from gym_llm.env import LLMEnv
from gym_llm.failures import MODEL_ERROR, is_masked

_USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


async def run_episode(
    env: LLMEnv,
    policy: Any,
    *,
    task_index: int,
    repeat_index: int = 0,
    env_id: str | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Play task ``task_index`` to the end and return its rollout record.

    A policy that fails (after its own retries) ends the episode with ``failure_kind:
    "model_error"``. Such a record, and any whose verdict failed outside the model's answer
    (:data:`gym_llm.failures.MASKED_KINDS`: judge, sandbox, verify errors), is kept with
    ``mask_sample: true`` and reward 0, so nothing is dropped silently and nothing counts as a
    false zero.

    Returns:
        The record: the task row, the verdict's details, ``response``, ``reward``,
        ``mask_sample``, ``failure_kind``, ``failure_reason``, ``env_id``, ``task_index``,
        ``repeat_index``, ``num_turns``, ``tool_errors``, ``reward_components`` and ``timings``.
    """
    start = time.perf_counter()
    model_seconds = 0.0
    usage = dict.fromkeys(_USAGE_KEYS, 0)
    meta: dict[str, Any] = {}
    obs, info = await env.areset(options={"task_index": task_index})
    params = {**info["params"], **(overrides or {})}
    reward, failure_reason = 0.0, None
    final_info: dict[str, Any] = {}
    while True:
        call_start = time.perf_counter()
        try:
            action = await policy(obs, params)
        except Exception as exc:
            failure_reason = f"{type(exc).__name__}: {exc}"
            break
        finally:
            model_seconds += time.perf_counter() - call_start
        _add_usage(usage, meta, action)
        obs, reward, terminated, truncated, final_info = await env.astep(action)
        if terminated or truncated:
            break

    task = env.task or {}
    details = final_info.get("details") or {}
    failure_kind = MODEL_ERROR if failure_reason is not None else final_info.get("failure_kind")
    masked = is_masked(failure_kind) or bool(final_info.get("mask_sample"))
    if masked and failure_reason is None:
        failure_reason = str(details.get("error") or details.get("failure_reason") or failure_kind)
    record: dict[str, Any] = dict(task)
    record.update(details)
    record["response"] = {
        "id": meta.get("id"),
        "object": "response",
        "model": meta.get("model"),
        "output": env.response["output"],
        "usage": usage,
    }
    record.update(
        reward=0.0 if masked else float(reward),
        mask_sample=masked,
        failure_kind=failure_kind,
        failure_reason=failure_reason,
        env_id=env_id,
        task_index=task_index,
        repeat_index=repeat_index,
        num_turns=env.num_turns,
        tool_errors=final_info.get("tool_errors", 0),
        reward_components=final_info.get("reward_components", {}),
        timings={"total_s": round(time.perf_counter() - start, 6), "model_s": round(model_seconds, 6)},
    )
    return record


def _add_usage(usage: dict[str, int], meta: dict[str, Any], action: Any) -> None:
    """Sum token usage and keep the model name/id when the action is a response (dict or SDK object)."""
    if isinstance(action, Mapping):
        got, model, response_id = action.get("usage"), action.get("model"), action.get("id")
    else:
        got = getattr(action, "usage", None)
        model, response_id = getattr(action, "model", None), getattr(action, "id", None)
    if got is not None and not isinstance(got, Mapping):
        got = got.model_dump() if hasattr(got, "model_dump") else None
    if got:
        for key in _USAGE_KEYS:
            usage[key] += int(got.get(key) or 0)
    if model:
        meta["model"] = model
    if response_id:
        meta["id"] = response_id
