"""Async policies: ``await policy(observation, params) -> action``, all subclasses of :class:`Policy`.

- :class:`ReferencePolicy`: the env's reference solution, offline (the default of ``gym-llm collect``).
- :class:`ResponsesPolicy`: the Responses API over plain JSON (OpenAI, vLLM's ``/v1/responses``).
- :class:`ChatPolicy`: Chat Completions over plain JSON (vLLM, SGLang, any OpenAI-compatible server).
- :class:`OpenAIClientPolicy`: a user-supplied ``openai.AsyncOpenAI`` client.

A plain async function ``fn(observation, params)`` becomes a policy with :func:`as_policy`.
"""

from typing import Any

from gym_llm.policies.base import FunctionPolicy, Policy, as_policy
from gym_llm.policies.chat import ChatPolicy
from gym_llm.policies.http import JSONClient, ModelCallError
from gym_llm.policies.openai_sdk import OpenAIClientPolicy
from gym_llm.policies.reference import ReferencePolicy
from gym_llm.policies.responses import ResponsesPolicy

__all__ = [
    "ChatPolicy",
    "FunctionPolicy",
    "JSONClient",
    "ModelCallError",
    "OpenAIClientPolicy",
    "Policy",
    "ReferencePolicy",
    "ResponsesPolicy",
    "as_policy",
    "make_policy",
]


def make_policy(
    model: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api: str = "responses",
    return_token_ids: bool = False,
    **sampling: Any,
) -> Policy:
    """A policy from command-line style settings; no model means the reference policy.

    Returns:
        A :class:`ReferencePolicy` without ``model``, else a :class:`ResponsesPolicy` or
        :class:`ChatPolicy` (``api``) with ``sampling`` as its overrides.

    Raises:
        ValueError: ``api`` is neither ``"responses"`` nor ``"chat"``.
    """
    if model is None:
        return ReferencePolicy()
    url = base_url or "https://api.openai.com/v1"
    sampling = {key: value for key, value in sampling.items() if value is not None}
    if api == "responses":
        return ResponsesPolicy(model, url, api_key, return_token_ids=return_token_ids, **sampling)
    if api == "chat":
        return ChatPolicy(model, url, api_key, return_token_ids=return_token_ids, **sampling)
    raise ValueError(f"api must be 'responses' or 'chat', got {api!r}")
