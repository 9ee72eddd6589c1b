"""Policy over Chat Completions (``POST /chat/completions``): vLLM, SGLang, any OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_llm.chat_format import assistant_items, to_chat_messages, to_chat_tools
from gym_llm.policies.http import JSONClient

# Responses request fields and their Chat Completions names; fields with no equivalent are dropped.
CHAT_PARAM_NAMES = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "max_tokens": "max_tokens",
    "seed": "seed",
    "stop": "stop",
    "parallel_tool_calls": "parallel_tool_calls",
    "tool_choice": "tool_choice",
    "top_k": "top_k",
    "logprobs": "logprobs",
}


class ChatPolicy:
    """Send the conversation as chat messages; return the reply as a Responses-shaped dict.

    Args:
        model: The model name.
        base_url: e.g. ``http://localhost:8000/v1`` for vLLM.
        api_key: Bearer token (default: none).
        client: A :class:`JSONClient` to share between policies.
        extra_body: Extra request fields passed through unchanged (e.g. vLLM's ``chat_template_kwargs``).
        **sampling: Request fields that override the task row's, in Responses names.
    """

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        *,
        client: JSONClient | None = None,
        extra_body: Mapping[str, Any] | None = None,
        **sampling: Any,
    ) -> None:
        self.model = model
        self.client = client or JSONClient(base_url, api_key)
        self.sampling = sampling
        self.extra_body = dict(extra_body or {})

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        payload: dict[str, Any] = {
            CHAT_PARAM_NAMES[key]: value
            for key, value in {**(params or {}), **self.sampling}.items()
            if key in CHAT_PARAM_NAMES and value is not None
        }
        payload.update(self.extra_body)
        payload["model"] = self.model
        payload["messages"] = to_chat_messages(observation["input"])
        if observation.get("tools"):
            payload["tools"] = to_chat_tools(observation["tools"])
        data = await self.client.post("/chat/completions", payload)
        return to_response(data)

    async def aclose(self) -> None:
        await self.client.close()


def to_response(completion: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses-shaped dict for a chat completion (first choice), with usage in Responses names."""
    choice = completion["choices"][0]
    usage = completion.get("usage") or {}
    response: dict[str, Any] = {
        "id": completion.get("id"),
        "model": completion.get("model"),
        "output": assistant_items(choice["message"]),
        "usage": {
            "input_tokens": usage.get("prompt_tokens", 0),
            "output_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("total_tokens", 0),
        },
    }
    if choice.get("finish_reason") == "length":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    return response
