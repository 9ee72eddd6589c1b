"""Policy over the OpenAI Responses API (``POST /responses``), plain JSON on the fast path."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gym_llm.policies.base import Policy
from gym_llm.policies.http import JSONClient, default_base_url
from gym_llm.policies.token_ids import require_on_output, without_token_fields


class ResponsesPolicy(Policy):
    """Call ``/responses`` of any server that speaks the Responses API (OpenAI, vLLM, …).

    Every request says ``"stream": false``: some servers (``transformers serve``) stream
    ``/v1/responses`` unless told not to.

    Args:
        model: The model name.
        base_url: e.g. ``http://localhost:8000/v1``; default ``$OPENAI_BASE_URL``, else
            ``https://api.openai.com/v1`` (as the ``openai`` SDK does).
        api_key: Bearer token; default ``$OPENAI_API_KEY`` (none if unset).
        client: A :class:`JSONClient` to share between policies; it stays open when the policy
            is closed (a client the policy made itself is closed with it).
        return_token_ids: Require token ids and log probs on each turn's last output item (the
            server puts them there, as NeMo Gym's model servers do when configured to); a response
            without them raises :class:`~gym_llm.policies.token_ids.TokenIdsUnavailable`.
        **sampling: Request fields that override the task row's (``temperature``, ``max_output_tokens``, …).

    Returns (per call) the Responses object as a dict: the env takes its ``output``.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: JSONClient | None = None,
        return_token_ids: bool = False,
        **sampling: Any,
    ) -> None:
        self.model = model
        self._owns_client = client is None
        if client is None:
            client = JSONClient(base_url or default_base_url(), api_key or os.environ.get("OPENAI_API_KEY"))
        self.client = client
        self.sampling = sampling
        self.return_token_ids = return_token_ids

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        payload: dict[str, Any] = {**(params or {}), **self.sampling, "model": self.model, "stream": False}
        payload["input"] = list(observation["input"])
        if self.return_token_ids:  # earlier turns' ids stay in the rollout, not in the request
            payload["input"] = [without_token_fields(item) for item in payload["input"]]
        if observation.get("tools"):
            payload["tools"] = list(observation["tools"])
        response = await self.client.post("/responses", payload)
        if self.return_token_ids:
            require_on_output(response, self.client.base_url)
        return response

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.close()

    def describe(self) -> dict[str, Any]:
        sampling = dict(sorted(self.sampling.items()))
        described: dict[str, Any] = {"policy": "responses", "model": self.model, "sampling": sampling}
        if self.return_token_ids:  # rows with and without token ids must not mix in one file
            described["return_token_ids"] = True
        return described

    def __setstate__(self, state: dict[str, Any]) -> None:
        # an unpickled copy (a Ray worker's) holds its own copy of the client: it closes it
        self.__dict__.update(state, _owns_client=True)
