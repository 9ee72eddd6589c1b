"""Convert between Responses API items and chat messages, and render them through chat templates.

Responses ``message``/``function_call``/``function_call_output`` items map to chat ``user``/
``system``/``developer``/``assistant`` messages, assistant ``tool_calls`` and ``tool`` messages.
Reasoning items have no Chat Completions equivalent and are dropped on the way to chat.

- :func:`to_chat_messages` / :func:`from_chat_messages`: the Chat Completions API.
- :func:`to_hf_messages`: HuggingFace chat templates and vLLM's chat (``developer`` becomes
  ``system``, reasoning becomes ``reasoning_content``).
- :func:`render_prompt` / :func:`render_tool_outputs`: text and token ids through a tokenizer's own
  chat template, for trainers that work on tokens.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gym_llm import items as it


def to_chat_messages(
    conversation: Iterable[it.Item], *, developer_as_system: bool = False
) -> list[dict[str, Any]]:
    """Chat messages for a Responses conversation; consecutive calls join one assistant message.

    ``developer_as_system``: send ``developer`` messages as ``system`` (what open models' chat
    templates know; Qwen-family templates silently drop ``developer``).
    """
    messages: list[dict[str, Any]] = []
    for item in conversation:
        kind = item.get("type", "message")
        if kind == "message":
            role = "system" if developer_as_system and item["role"] == "developer" else item["role"]
            messages.append({"role": role, "content": it.content_text(item.get("content"))})
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


# --------------------------------------------------------------------- HF chat templates
def to_hf_messages(conversation: Iterable[it.Item]) -> list[dict[str, Any]]:
    """Messages for HuggingFace chat templates and vLLM's chat API.

    Unlike :func:`to_chat_messages`: the ``developer`` role becomes ``system`` (Qwen-family templates
    silently drop ``developer``); tool-call arguments are decoded to dicts (templates render them
    with ``tojson``); tool messages carry the tool's ``name``; reasoning goes to the next assistant
    message's ``reasoning_content``; no message carries a ``None`` content.

    Example:
        >>> to_hf_messages([
        ...     {"role": "developer", "content": "Be brief."},
        ...     it.function_call("get_weather", {"city": "SF"}, "c1"),
        ...     it.function_call_output("c1", '{"weather": "cold"}'),
        ... ])  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'system', 'content': 'Be brief.'},
         {'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'function',
           'function': {'name': 'get_weather', 'arguments': {'city': 'SF'}}}]},
         {'role': 'tool', 'content': '{"weather": "cold"}', 'tool_call_id': 'c1', 'name': 'get_weather'}]
    """
    messages: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}
    thoughts: list[str] = []
    for item in conversation:
        kind = item.get("type", "message")
        if kind == "reasoning":
            thoughts.extend(
                part.get("text", "") for part in item.get("summary") or () if isinstance(part, dict)
            )
        elif kind == "message":
            role = "system" if item.get("role") == "developer" else item.get("role")
            msg: dict[str, Any] = {"role": role}
            if item.get("content") is not None:
                msg["content"] = it.content_text(item.get("content"))
            if role == "assistant" and thoughts:
                msg["reasoning_content"], thoughts = "\n".join(thoughts), []
            messages.append(msg)
        elif kind == "function_call":
            call_names[item["call_id"]] = item["name"]
            args = it.parse_arguments(item)
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {
                    "name": item["name"],
                    "arguments": args if args is not None else item["arguments"],
                },
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and not thoughts:
                last.setdefault("tool_calls", []).append(call)
            else:
                msg = {"role": "assistant", "tool_calls": [call]}
                if thoughts:
                    msg["reasoning_content"], thoughts = "\n".join(thoughts), []
                messages.append(msg)
        elif kind == "function_call_output":
            tool_msg = {"role": "tool", "content": item["output"], "tool_call_id": item["call_id"]}
            if item["call_id"] in call_names:
                tool_msg["name"] = call_names[item["call_id"]]
            messages.append(tool_msg)
    return messages


@dataclass(frozen=True, slots=True)
class Rendered:
    """Text rendered through a tokenizer's chat template, and its token ids."""

    text: str
    token_ids: list[int]


def render_prompt(tokenizer: Any, observation: Mapping[str, Any], **template_kwargs: Any) -> Rendered:
    """The prompt for the model's next turn, through the tokenizer's own chat template.

    Args:
        tokenizer: Anything with ``apply_chat_template`` and ``__call__`` like a HuggingFace
            tokenizer (duck-typed: the core does not import ``transformers``).
        observation: An env observation (``input`` items and ``tools``).
        **template_kwargs: Passed to ``apply_chat_template`` (e.g. ``enable_thinking=False``).

    Returns:
        The prompt text, ending with the assistant header, and its token ids.
    """
    tools = to_chat_tools(observation.get("tools") or ())
    text = tokenizer.apply_chat_template(
        to_hf_messages(observation["input"]),
        tools=tools or None,
        add_generation_prompt=True,
        tokenize=False,
        **template_kwargs,
    )
    return Rendered(text, _token_ids(tokenizer, text))


# Fixed conversations ending with an assistant turn, that tool messages are appended to: the plain one
# first, then one whose turn has reasoning, which Qwen3-style templates render the same whether or not
# the turn is the last (they give the last one an empty <think></think> block otherwise).
_BASES = (
    ({"role": "user", "content": "."}, {"role": "assistant", "content": "."}),
    ({"role": "user", "content": "."}, {"role": "assistant", "content": ".", "reasoning_content": "."}),
)
_PROBE_TOOL = {"role": "tool", "name": "f", "content": "."}


def render_tool_outputs(tokenizer: Any, items: Iterable[it.Item], **template_kwargs: Any) -> Rendered:
    """What follows a model turn in the model's chat format: the env's answer (tool outputs, or a
    simulated user's message) and the next assistant header.

    A trainer appends this text (and its token ids) to the token stream after the model's tokens,
    e.g. for a step's ``info["new_items"]``. It is the template's rendering of a conversation with
    the tool messages minus its rendering without them, plus what the template writes after the
    end-of-turn token (Qwen: a newline after ``<|im_end|>``), which generation stops before.

    Raises:
        ValueError: The template does not render a conversation as a prefix of its continuation
            with tool messages (pass a prefix-preserving template).
    """
    base, before, tail = _tool_base(tokenizer, template_kwargs)
    messages = [msg for msg in to_hf_messages(items) if msg["role"] in ("tool", "user")]
    after = tokenizer.apply_chat_template(
        [*base, *messages], add_generation_prompt=True, tokenize=False, **template_kwargs
    )
    if not after.startswith(before):
        raise ValueError("the chat template does not render a conversation as a prefix of its continuation")
    text = tail + after[len(before) :]
    return Rendered(text, _token_ids(tokenizer, text))


# per tokenizer and template arguments: what _tool_base found (four template renders)
_tool_bases: weakref.WeakKeyDictionary[Any, dict[str, tuple[list[dict[str, Any]], str, str]]] = (
    weakref.WeakKeyDictionary()
)


def _tool_base(tokenizer: Any, template_kwargs: dict[str, Any]) -> tuple[list[dict[str, Any]], str, str]:
    """The fixed conversation for this template, its rendering, and the text after its end-of-turn token."""
    key = repr(sorted(template_kwargs.items()))
    try:
        per_tokenizer = _tool_bases.setdefault(tokenizer, {})
    except TypeError:  # a tokenizer that cannot be weakly referenced: no cache
        per_tokenizer = {}
    if key not in per_tokenizer:
        per_tokenizer[key] = _find_tool_base(tokenizer, template_kwargs)
    return per_tokenizer[key]


def _find_tool_base(tokenizer: Any, template_kwargs: dict[str, Any]) -> tuple[list[dict[str, Any]], str, str]:
    for base in _BASES:
        messages = [dict(message) for message in base]
        before = tokenizer.apply_chat_template(messages, tokenize=False, **template_kwargs)
        probe = tokenizer.apply_chat_template(
            [*messages, _PROBE_TOOL], add_generation_prompt=True, tokenize=False, **template_kwargs
        )
        if probe.startswith(before):
            eos = getattr(tokenizer, "eos_token", None)
            tail = (
                before[before.rindex(eos) + len(eos) :]
                if isinstance(eos, str) and eos and eos in before
                else ""
            )
            return messages, before, tail
    raise ValueError(
        "the chat template does not render a conversation as a prefix of its continuation with tool "
        "messages; pass a prefix-preserving template (e.g. TRL's get_training_chat_template)"
    )


def _token_ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
