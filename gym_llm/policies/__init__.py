"""Async policies: ``await policy(observation, params) -> action``.

- :class:`ReferencePolicy`: the env's reference solution, offline (the default of ``gym-llm collect``).
- :class:`ResponsesPolicy`: the Responses API over plain JSON (OpenAI, vLLM's ``/v1/responses``).
- :class:`ChatPolicy`: Chat Completions over plain JSON (vLLM, SGLang, any OpenAI-compatible server).
- :class:`OpenAIClientPolicy`: a user-supplied ``openai.AsyncOpenAI`` client.
"""

from gym_llm.policies.base import Policy
from gym_llm.policies.chat import ChatPolicy
from gym_llm.policies.http import JSONClient, ModelCallError
from gym_llm.policies.openai_sdk import OpenAIClientPolicy
from gym_llm.policies.reference import ReferencePolicy
from gym_llm.policies.responses import ResponsesPolicy

__all__ = [
    "ChatPolicy",
    "JSONClient",
    "ModelCallError",
    "OpenAIClientPolicy",
    "Policy",
    "ReferencePolicy",
    "ResponsesPolicy",
    "make_policy",
]


def make_policy(
    model: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    api: str = "responses",
    **sampling: object,
) -> Policy:
    """A policy from command-line style settings; no model means the reference policy."""
    if model is None:
        return ReferencePolicy()
    url = base_url or "https://api.openai.com/v1"
    sampling = {key: value for key, value in sampling.items() if value is not None}
    if api == "responses":
        return ResponsesPolicy(model, url, api_key, **sampling)
    if api == "chat":
        return ChatPolicy(model, url, api_key, **sampling)
    raise ValueError(f"api must be 'responses' or 'chat', got {api!r}")
