"""An episode's output as the full Responses object NeMo Gym's ``/verify`` validates.

NeMo's verify request types ``response`` as OpenAI's ``Response``: it needs ``id``,
``created_at``, ``model``, ``object``, ``parallel_tool_calls``, ``tool_choice`` and ``tools``, and
its output messages and reasoning items need an ``id``. gym_llm's episode output is plain items,
which may lack them; here they are filled in, on copies.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

# output item types that OpenAI's Response requires an id on
_NEEDS_ID = {"message": "msg", "reasoning": "rs"}


def nemo_response(output: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses object holding ``output``, with the request fields of ``params``.

    Args:
        output: The episode's output items (model items and tool outputs, in order).
        params: The task row's ``responses_create_params``.

    Returns:
        A dict that validates as NeMo Gym's ``NeMoGymResponse``.

    Example:
        >>> response = nemo_response([{"type": "message", "role": "assistant", "content": "Hi"}], {})
        >>> response["output"][0]["id"], response["output"][0]["content"][0]["type"]
        ('msg_0', 'output_text')
    """
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": float(int(time.time())),
        "model": params.get("model") or "gym_llm",
        "status": "completed",
        "output": [_complete(item, index) for index, item in enumerate(output)],
        "parallel_tool_calls": params.get("parallel_tool_calls", True),
        "tool_choice": params.get("tool_choice", "auto"),
        "tools": list(params.get("tools") or []),
        "instructions": params.get("instructions"),
        "temperature": params.get("temperature"),
        "top_p": params.get("top_p"),
        "error": None,
        "incomplete_details": None,
        "metadata": params.get("metadata") or {},
    }


def _complete(item: Mapping[str, Any], index: int) -> dict[str, Any]:
    completed = dict(item)
    kind = completed.get("type", "message")
    completed["type"] = kind
    prefix = _NEEDS_ID.get(kind)
    if prefix is not None and not completed.get("id"):
        completed["id"] = f"{prefix}_{index}"
    if kind == "message":
        completed.setdefault("status", "completed")
        content = completed.get("content")
        if isinstance(content, str):
            completed["content"] = [{"type": "output_text", "text": content, "annotations": []}]
        elif isinstance(content, list):
            completed["content"] = [_complete_part(part) for part in content]
    elif kind == "reasoning":
        completed.setdefault("summary", [])
    return completed


def _complete_part(part: Any) -> Any:
    if isinstance(part, Mapping) and part.get("type") == "output_text" and "annotations" not in part:
        return {**part, "annotations": []}
    return part
