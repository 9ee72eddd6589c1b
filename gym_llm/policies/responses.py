"""Policy over the OpenAI Responses API (``POST /responses``), plain JSON on the fast path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_llm.policies.http import JSONClient


class ResponsesPolicy:
    """Call ``/responses`` of any server that speaks the Responses API (OpenAI, vLLM, …).

    Args:
        model: The model name.
        base_url: e.g. ``https://api.openai.com/v1`` (default) or ``http://localhost:8000/v1``.
        api_key: Bearer token (default: none).
        client: A :class:`JSONClient` to share between policies.
        **sampling: Request fields that override the task row's (``temperature``, ``max_output_tokens``, …).

    Returns (per call) the Responses object as a dict: the env takes its ``output``.
    """

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        *,
        client: JSONClient | None = None,
        **sampling: Any,
    ) -> None:
        self.model = model
        self.client = client or JSONClient(base_url, api_key)
        self.sampling = sampling

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        payload: dict[str, Any] = {**(params or {}), **self.sampling, "model": self.model}
        payload["input"] = list(observation["input"])
        if observation.get("tools"):
            payload["tools"] = list(observation["tools"])
        return await self.client.post("/responses", payload)

    async def aclose(self) -> None:
        await self.client.close()
