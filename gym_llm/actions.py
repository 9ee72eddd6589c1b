"""Normalise the model's turn, whatever form it comes in, into Responses output items.

Accepted forms:

- a list of Responses output items (dicts or SDK objects), or a ``Response`` (object or dict
  with ``output``);
- a Chat Completions assistant message (dict or SDK object, with ``tool_calls``), or a whole
  ``ChatCompletion`` (its first choice);
- raw text, parsed by a :class:`ToolCallParser` (default: Hermes/Qwen ``<tool_call>`` JSON and
  ``<think>`` reasoning).

:func:`normalize_action` never raises on model output: a malformed tool call becomes a
``function_call`` item whose error :class:`~gym_llm.env.LLMEnv` reports back to the model, and an
action that is no turn at all is returned as :class:`InvalidAction`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gym_llm import items as it
from gym_llm.chat_format import assistant_items

ToolCallParser = Callable[[str], "Turn"]


@dataclass(slots=True)
class Turn:
    """One model turn as Responses output items, plus parse errors keyed by ``call_id``."""

    items: list[it.Item]
    call_errors: dict[str, str] = field(default_factory=dict)
    incomplete: bool = False


@dataclass(slots=True)
class InvalidAction:
    """An action that is not a model turn in any accepted form."""

    reason: str


_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_UNCLOSED_THINK = re.compile(r"^(.*?)</think>", re.DOTALL)


def parse_hermes(text: str) -> Turn:
    """Parse Hermes/Qwen-style text: ``<think>…</think>``, ``<tool_call>{json}</tool_call>``, prose.

    Example:
        >>> turn = parse_hermes('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
        >>> turn.items[0]["name"], turn.items[0]["arguments"]
        ('f', '{"x": 1}')
    """
    turn_items: list[it.Item] = []
    errors: dict[str, str] = {}
    thoughts = _THINK.findall(text)
    text = _THINK.sub("", text)
    if not thoughts and "</think>" in text:  # chat templates often open <think> in the prompt
        match = _UNCLOSED_THINK.match(text)
        if match:
            thoughts = [match.group(1)]
            text = text[match.end() :]
    for thought in thoughts:
        turn_items.append(it.reasoning(thought.strip()))

    for index, raw in enumerate(_TOOL_CALL.findall(text)):
        call_id = f"call_{index}"
        name, arguments, error = _decode_hermes_call(raw)
        turn_items.append(it.function_call(name, arguments, call_id))
        if error:
            errors[call_id] = error
    prose = _TOOL_CALL.sub("", text).strip()
    if prose or not turn_items:
        turn_items.insert(len(thoughts), it.message(prose))
    return Turn(turn_items, errors)


def _decode_hermes_call(raw: str) -> tuple[str, str, str | None]:
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        return "", raw.strip(), f"Malformed tool call: the <tool_call> body is not valid JSON ({exc})."
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return "", raw.strip(), 'Malformed tool call: expected {"name": ..., "arguments": {...}}.'
    arguments = payload.get("arguments", payload.get("parameters", {}))
    if isinstance(arguments, str):
        return payload["name"], arguments, None
    return payload["name"], json.dumps(arguments), None


def normalize_action(action: Any, parser: ToolCallParser = parse_hermes) -> Turn | InvalidAction:
    """Turn any accepted action form into a :class:`Turn` with fresh, deterministic call ids."""
    try:
        turn = _to_turn(action, parser)
        return turn if isinstance(turn, InvalidAction) else _checked(turn)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError) as exc:
        return InvalidAction(f"{type(exc).__name__}: {exc}")


def _to_turn(action: Any, parser: ToolCallParser) -> Turn | InvalidAction:
    if isinstance(action, str):
        return parser(action)
    if isinstance(action, (list, tuple)):
        return Turn([dict(it.as_item(item)) for item in action])
    if not isinstance(action, dict):
        if hasattr(action, "choices"):  # ChatCompletion object
            action = action.choices[0].message
        if hasattr(action, "model_dump"):
            action = action.model_dump(exclude_none=True)
        else:
            return InvalidAction(f"unsupported action type {type(action).__name__}")
    if "output" in action:  # Responses object
        details = action.get("incomplete_details")
        turn = Turn([dict(it.as_item(item)) for item in action["output"] or ()], incomplete=bool(details))
        return _parse_text_calls(turn, parser)
    if "choices" in action:  # ChatCompletion dict
        action = action["choices"][0]["message"]
    if action.get("role") == "assistant" and "type" not in action:
        return _chat_message_turn(action, parser)
    if action.get("type") in it.ITEM_TYPES:
        return Turn([dict(action)])
    return InvalidAction("a dict action must be a Responses item, a Response or an assistant message")


def _parse_text_calls(turn: Turn, parser: ToolCallParser) -> Turn:
    """A turn whose tool calls a server left in the text (no tool-call parser there) parsed by ours."""
    if any(item.get("type") == "function_call" for item in turn.items):
        return turn
    text = it.output_text(turn.items)
    if "<tool_call>" not in text:
        return turn
    parsed = parser(text)
    reasoning = [item for item in turn.items if item.get("type") == "reasoning"]
    return Turn(reasoning + parsed.items, parsed.call_errors, turn.incomplete)


def _chat_message_turn(msg: dict[str, Any], parser: ToolCallParser) -> Turn:
    text = it.content_text(msg.get("content"))
    if not msg.get("tool_calls") and "<tool_call>" in text:  # a server without a tool-call parser
        turn = parser(text)
        reasoning_text = msg.get("reasoning_content") or msg.get("reasoning")
        if reasoning_text:
            turn.items.insert(0, it.reasoning(reasoning_text))
        return turn
    return Turn(assistant_items(msg))


def _checked(turn: Turn) -> Turn | InvalidAction:
    """Validate item shapes; give every function call a unique, deterministic ``call_id``."""
    seen: set[str] = set()
    for index, item in enumerate(turn.items):
        kind = item.get("type", "message")
        if not isinstance(kind, str) or kind not in it.ITEM_TYPES:
            return InvalidAction(f"item {index} has unknown type {str(kind)[:80]!r}")
        if kind == "message" and not (isinstance(item.get("role"), str) and _is_content(item.get("content"))):
            return InvalidAction(f"message item {index} needs a string role and text content")
        if kind == "function_call":
            if not isinstance(item.get("name"), str):
                return InvalidAction(f"function_call item {index} has no name")
            if not isinstance(item.get("arguments"), str):
                item["arguments"] = json.dumps(item.get("arguments") or {})
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id or call_id in seen:
                old = call_id
                call_id = f"call_{index}"
                item["call_id"] = call_id
                if old in turn.call_errors:
                    turn.call_errors[call_id] = turn.call_errors.pop(old)
            seen.add(call_id)
        elif kind == "message" and "type" not in item:
            item["type"] = "message"
    return turn


def _is_content(content: Any) -> bool:
    """Message content a conversation can carry: text, no text, or a list of text parts."""
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("text", ""), (str, type(None))) for part in content
    )
