"""Policy over a user-supplied ``openai`` SDK client (Azure, custom auth, proxies, …).

The SDK's typed path costs milliseconds of CPU per call; prefer :class:`ResponsesPolicy` or
:class:`ChatPolicy` for high-throughput collection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_llm.chat_format import to_chat_messages, to_chat_tools
from gym_llm.policies.base import Policy
from gym_llm.policies.chat import CHAT_PARAM_NAMES, to_response


class OpenAIClientPolicy(Policy):
    """Call ``client.responses.create`` or ``client.chat.completions.create`` on an ``AsyncOpenAI``.

    The client stays the caller's: :meth:`aclose` leaves it open. Requests say ``stream=False``.

    Args:
        client: An ``openai.AsyncOpenAI`` (or compatible) client.
        model: The model name.
        api: ``"responses"`` or ``"chat"``.
        **sampling: Request fields that override the task row's.
    """

    def __init__(self, client: Any, model: str, *, api: str = "responses", **sampling: Any) -> None:
        if api not in ("responses", "chat"):
            raise ValueError(f"api must be 'responses' or 'chat', got {api!r}")
        self.client = client
        self.model = model
        self.api = api
        self.sampling = sampling

    async def __call__(self, observation: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> Any:
        fields = {**(params or {}), **self.sampling, "stream": False}
        tools = list(observation.get("tools") or ())
        if self.api == "responses":
            extra = {"tools": tools} if tools else {}
            # the Response object is an accepted action; the env reads its output items
            return await self.client.responses.create(
                model=self.model, input=list(observation["input"]), **extra, **fields
            )
        chat_fields = {
            CHAT_PARAM_NAMES[k]: v for k, v in fields.items() if k in CHAT_PARAM_NAMES and v is not None
        }
        chat_fields["stream"] = False
        if tools:
            chat_fields["tools"] = to_chat_tools(tools)
        completion = await self.client.chat.completions.create(
            model=self.model,
            messages=to_chat_messages(observation["input"], developer_as_system=True),
            **chat_fields,
        )
        return to_response(completion.model_dump())

    async def aclose(self) -> None:
        """Nothing to release: the client belongs to the caller, who closes it."""

    def describe(self) -> dict[str, Any]:
        return {
            "policy": f"openai-{self.api}",
            "model": self.model,
            "sampling": dict(sorted(self.sampling.items())),
        }
