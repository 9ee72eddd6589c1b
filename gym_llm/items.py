"""OpenAI Responses API items as plain dicts: constructors, copies and text extraction.

Items stay plain dicts on the hot path; pydantic objects from the ``openai`` SDK are turned into
dicts at the edge (:func:`as_item`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from gym_llm import fastjson

Item = dict[str, Any]

ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})


def message(text: str, role: str = "assistant", *, item_id: str | None = None) -> Item:
    """An output message item (``output_text`` content for the assistant, plain text otherwise)."""
    if role != "assistant":
        return {"type": "message", "role": role, "content": text}
    item: Item = {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if item_id is not None:
        item["id"] = item_id
    return item


def function_call(name: str, arguments: Mapping[str, Any] | str, call_id: str) -> Item:
    """A ``function_call`` item; ``arguments`` is JSON-encoded when given as a mapping."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "type": "function_call",
        "name": name,
        "arguments": arguments,
        "call_id": call_id,
        "status": "completed",
    }


def function_call_output(call_id: str, output: str) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def reasoning(text: str) -> Item:
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}


def as_item(obj: Any) -> Item:
    """A dict item from a dict or an SDK pydantic object (``model_dump`` without ``None`` fields)."""
    if isinstance(obj, dict):
        return obj
    dump = getattr(obj, "model_dump", None)
    if dump is None:
        raise TypeError(f"not a Responses item: {type(obj).__name__}")
    return dump(exclude_none=True)


def input_items(raw_input: str | Iterable[Any]) -> list[Item]:
    """The ``input`` of a Responses request as a list of items (a string becomes a user message)."""
    if isinstance(raw_input, str):
        return [{"role": "user", "content": raw_input}]
    return [as_item(item) for item in raw_input]


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-like data (dicts, lists, tuples), several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {key: copy_json(val) for key, val in value.items()}
    if isinstance(value, list):
        return [copy_json(val) for val in value]
    if isinstance(value, tuple):
        return tuple(copy_json(val) for val in value)
    return value


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join((part.get("text") or "") if isinstance(part, dict) else str(part) for part in content)
    return ""


def output_text(items: Iterable[Item]) -> str:
    """The concatenated text of the assistant messages among ``items``."""
    return "".join(
        content_text(item.get("content"))
        for item in items
        if item.get("type", "message") == "message" and item.get("role") == "assistant"
    )


def last_assistant_text(items: Iterable[Item]) -> str:
    """The text of the last assistant message among ``items`` (``""`` if there is none)."""
    text = ""
    for item in items:
        if item.get("type", "message") == "message" and item.get("role") == "assistant":
            text = content_text(item.get("content"))
    return text


def function_calls(items: Iterable[Item], name: str | None = None) -> list[Item]:
    """The ``function_call`` items among ``items``, optionally only those calling ``name``."""
    return [
        item
        for item in items
        if item.get("type") == "function_call" and (name is None or item.get("name") == name)
    ]


def answered_calls(items: Iterable[Item], name: str | None = None) -> list[tuple[Item, Any]]:
    """The ``function_call`` items that ran (a ``function_call_output`` answers them), with that output.

    A call recorded but never run (a final turn's calls, say) is left out: replaying a rollout must
    apply only what the live episode applied.

    Example:
        >>> items = [function_call("f", {}, "a"), function_call_output("a", "ok")]
        >>> items.append(function_call("f", {}, "b"))  # recorded, never run
        >>> [(call["call_id"], output) for call, output in answered_calls(items)]
        [('a', 'ok')]
    """
    items = list(items)
    outputs = {
        item.get("call_id"): item.get("output")
        for item in items
        if item.get("type") == "function_call_output"
    }
    return [
        (call, outputs[call.get("call_id")])
        for call in function_calls(items, name)
        if call.get("call_id") in outputs
    ]


def parse_arguments(call: Item) -> dict[str, Any] | None:
    """A function call's decoded arguments, or ``None`` if they are not a JSON object."""
    try:
        args = fastjson.loads(call.get("arguments") or "{}")
    except (TypeError, ValueError):
        return None
    return args if isinstance(args, dict) else None
