"""Policy over Chat Completions (``POST /chat/completions``): vLLM, SGLang, any OpenAI-compatible server."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gym_llm.chat_format import assistant_items, to_chat_messages, to_chat_tools
from gym_llm.policies.base import Policy
from gym_llm.policies.http import JSONClient, default_base_url
from gym_llm.policies.token_ids import VLLM_CHAT_TOKEN_FIELDS, attach, chat_token_fields

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


class ChatPolicy(Policy):
    """Send the conversation as chat messages; return the reply as a Responses-shaped dict.

    Every request says ``"stream": false``.

    Args:
        model: The model name.
        base_url: e.g. ``http://localhost:8000/v1`` for vLLM; default ``$OPENAI_BASE_URL``, else
            ``https://api.openai.com/v1`` (as the ``openai`` SDK does).
        api_key: Bearer token; default ``$OPENAI_API_KEY`` (none if unset).
        client: A :class:`JSONClient` to share between policies; it stays open when the policy
            is closed (a client the policy made itself is closed with it).
        extra_body: Extra request fields passed through unchanged (e.g. vLLM's ``chat_template_kwargs``).
        return_token_ids: Ask vLLM for token ids and log probs and keep them on each turn's last
            output item (:mod:`gym_llm.policies.token_ids`); a server that returns none raises
            :class:`~gym_llm.policies.token_ids.TokenIdsUnavailable`.
        **sampling: Request fields that override the task row's, in Responses names.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: JSONClient | None = None,
        extra_body: Mapping[str, Any] | None = None,
        return_token_ids: bool = False,
        **sampling: Any,
    ) -> None:
        self.model = model
        self._owns_client = client is None
        if client is None:
            client = JSONClient(base_url or default_base_url(), api_key or os.environ.get("OPENAI_API_KEY"))
        self.client = client
        self.sampling = sampling
        self.extra_body = dict(extra_body or {})
        self.return_token_ids = return_token_ids

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        payload: dict[str, Any] = {
            CHAT_PARAM_NAMES[key]: value
            for key, value in {**(params or {}), **self.sampling}.items()
            if key in CHAT_PARAM_NAMES and value is not None
        }
        payload.update(self.extra_body)
        payload["model"] = self.model
        payload["stream"] = False
        payload["messages"] = to_chat_messages(observation["input"], developer_as_system=True)
        if observation.get("tools"):
            payload["tools"] = to_chat_tools(observation["tools"])
        if self.return_token_ids:
            payload.update(VLLM_CHAT_TOKEN_FIELDS)
        data = await self.client.post("/chat/completions", payload)
        response = to_response(data)
        if self.return_token_ids:
            attach(response["output"], chat_token_fields(data, self.client.base_url))
        return response

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.close()

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "policy": "chat",
            "model": self.model,
            "sampling": dict(sorted(self.sampling.items())),
            "extra_body": self.extra_body,
        }
        if self.return_token_ids:  # rows with and without token ids must not mix in one file
            described["return_token_ids"] = True
        return described

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an unpickled copy (a Ray worker's) holds its own copy of the client: it closes it
        self.__dict__.update(state, _owns_client=True)


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
