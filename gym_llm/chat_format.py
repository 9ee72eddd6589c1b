"""Convert between Responses API items and Chat Completions messages.

Responses ``message``/``function_call``/``function_call_output`` items map to chat ``user``/
``system``/``developer``/``assistant`` messages, assistant ``tool_calls`` and ``tool`` messages.
Reasoning items have no chat equivalent and are dropped on the way to chat.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gym_llm import items as it


def to_chat_messages(conversation: Iterable[it.Item]) -> list[dict[str, Any]]:
    """Chat messages for a Responses conversation; consecutive calls join one assistant message."""
    messages: list[dict[str, Any]] = []
    for item in conversation:
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item["role"], "content": it.content_text(item.get("content"))})
        elif kind == "function_call":
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"]},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and "tool_call_id" not in last:
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
    return messages


def to_chat_tools(tools: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tool definitions for Responses function tools."""
    chat_tools = []
    for tool in tools:
        function = {key: tool[key] for key in ("name", "description", "parameters", "strict") if key in tool}
        chat_tools.append({"type": "function", "function": function})
    return chat_tools


def from_chat_messages(messages: Iterable[dict[str, Any]]) -> list[it.Item]:
    """Responses items for a list of chat messages (the inverse of :func:`to_chat_messages`)."""
    conversation: list[it.Item] = []
    for msg in messages:
        role = msg.get("role")
        if role == "tool":
            conversation.append(
                it.function_call_output(msg.get("tool_call_id", ""), it.content_text(msg.get("content")))
            )
        elif role == "assistant":
            conversation.extend(assistant_items(msg))
        else:
            conversation.append(
                {"type": "message", "role": role, "content": it.content_text(msg.get("content"))}
            )
    return conversation


def assistant_items(msg: dict[str, Any]) -> list[it.Item]:
    """Responses output items for one chat assistant message (reasoning, text, tool calls)."""
    output: list[it.Item] = []
    reasoning_text = msg.get("reasoning_content") or msg.get("reasoning")
    if reasoning_text:
        output.append(it.reasoning(reasoning_text))
    text = it.content_text(msg.get("content"))
    tool_calls = msg.get("tool_calls") or []
    if text or not tool_calls:
        output.append(it.message(text))
    for index, call in enumerate(tool_calls):
        fn = call.get("function") or {}
        call_id = call.get("id") or f"call_{index}"
        output.append(it.function_call(fn.get("name", ""), fn.get("arguments") or "{}", call_id))
    return output


def to_chat_message(output: Iterable[it.Item]) -> dict[str, Any]:
    """One chat assistant message for a turn's Responses output items."""
    output = list(output)
    text = it.output_text(output)
    calls = [
        {
            "id": item["call_id"],
            "type": "function",
            "function": {"name": item["name"], "arguments": item["arguments"]},
        }
        for item in output
        if item.get("type") == "function_call"
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        msg["tool_calls"] = calls
    thoughts = [
        part.get("text", "") for item in output if item.get("type") == "reasoning" for part in item["summary"]
    ]
    if thoughts:
        msg["reasoning_content"] = "\n".join(thoughts)
    return msg
