"""Rollout rows as HuggingFace chat messages and tools, with one Arrow type for every row.

Messages come from :func:`gym_llm.chat_format.to_hf_messages` (``developer`` becomes ``system``,
tool calls and tool messages in HF shape, reasoning as ``reasoning_content``), with two changes
so that every row has the same Arrow type:

- tool-call ``arguments`` stay the JSON string the model wrote (argument names and types differ
  from tool to tool; Qwen-family templates render a string as it is);
- ``tools`` is one JSON string per row (TRL decodes a string ``tools`` column itself).

Arrow gives every message all the fields of :data:`MESSAGE`; those a message lacks read back as
``None`` (TRL drops them; :func:`template_messages` does the same for a tokenizer).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium
import pyarrow as pa

from gym_llm import items as it
from gym_llm.chat_format import to_chat_tools, to_hf_messages

log = logging.getLogger(__name__)

TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("reasoning_content", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL)),
        ("tool_call_id", pa.string()),
        ("name", pa.string()),
    ]
)
MESSAGES = pa.list_(MESSAGE)

# What the collector adds to a task row; the rest of a rollout row is the task (and the verifier's
# record fields, which the task model ignores when the row is verified again).
ROLLOUT_FIELDS = frozenset(
    {
        "response",
        "reward",
        "mask_sample",
        "failure_kind",
        "failure_reason",
        "env_id",
        "task_index",
        "repeat_index",
        "num_turns",
        "tool_errors",
        "reward_components",
        "timings",
    }
)


def prompt_items(row: Mapping[str, Any]) -> list[it.Item]:
    """The task's conversation: the request's ``instructions`` as a system message, then its ``input``.

    Raises:
        ValueError: The row has no ``responses_create_params.input``.
    """
    params = row.get("responses_create_params")
    if not isinstance(params, Mapping) or "input" not in params:
        raise ValueError("the row has no responses_create_params.input")
    items = it.input_items(params["input"])
    if params.get("instructions"):
        items.insert(0, {"type": "message", "role": "system", "content": params["instructions"]})
    return items


def output_items(row: Mapping[str, Any]) -> list[it.Item]:
    """What the model and the tools added: the response's ``output`` items (``[]`` if none)."""
    response = row.get("response")
    output = response.get("output") if isinstance(response, Mapping) else None
    return list(output) if isinstance(output, list) else []


def hf_messages(items: Iterable[it.Item]) -> list[dict[str, Any]]:
    """HF chat messages for ``items``, tool-call arguments kept as the JSON strings written.

    Example:
        >>> hf_messages([
        ...     {"role": "developer", "content": "Be brief."},
        ...     it.function_call("get_weather", {"city": "SF"}, "c1"),
        ...     it.function_call_output("c1", "cold"),
        ... ])  # doctest: +NORMALIZE_WHITESPACE
        [{'role': 'system', 'content': 'Be brief.'},
         {'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'function',
           'function': {'name': 'get_weather', 'arguments': '{"city": "SF"}'}}]},
         {'role': 'tool', 'content': 'cold', 'tool_call_id': 'c1', 'name': 'get_weather'}]
    """
    items = list(items)
    written = {
        item["call_id"]: item.get("arguments")
        for item in items
        if item.get("type") == "function_call" and "call_id" in item
    }
    messages = to_hf_messages(items)
    for message in messages:
        for call in message.get("tool_calls") or ():
            arguments = written.get(call["id"])
            function = call["function"]
            if isinstance(arguments, str):
                function["arguments"] = arguments
            elif not isinstance(function["arguments"], str):
                function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
        if message.get("content") is not None and not isinstance(message["content"], str):
            message["content"] = it.content_text(message["content"])
    return messages


def chat_tools_json(row: Mapping[str, Any]) -> str:
    """The row's tools (or, when it has none, its env's own) as Chat Completions tools, in JSON."""
    params = row.get("responses_create_params")
    tools = params.get("tools") if isinstance(params, Mapping) else None
    if not tools:
        tools = env_default_tools(row.get("env_id"))
    return json.dumps(to_chat_tools(tools or ()), ensure_ascii=False)


@functools.lru_cache(maxsize=64)
def env_default_tools(env_id: Any) -> tuple[dict[str, Any], ...]:
    """The tool schemas a registered env offers when a row brings none (``()`` if unknown)."""
    if not isinstance(env_id, str) or env_id not in gymnasium.registry:
        return ()
    entry = gymnasium.registry[env_id].entry_point
    if not isinstance(entry, str):
        return ()
    try:
        env_class = gymnasium.envs.registration.load_env_creator(entry)
    except ImportError as exc:
        log.warning("%s: its env cannot be imported (%s); its rows are exported without tools", env_id, exc)
        return ()
    specs = getattr(env_class, "tools", None) or {}
    return tuple(spec.schema for spec in specs.values())


def task_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The task part of a rollout row: every field but those the collector adds."""
    return {key: value for key, value in row.items() if key not in ROLLOUT_FIELDS}


def template_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages read back from an exported dataset, ready for ``tokenizer.apply_chat_template``.

    Drops the ``None`` fields Arrow fills in and decodes tool-call arguments to dicts (what
    templates such as Llama 3.1's expect; Qwen's accept either).

    Example:
        >>> template_messages([{"role": "assistant", "content": None, "name": None, "tool_calls": [
        ...     {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]}])
        [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'function',
          'function': {'name': 'f', 'arguments': {'x': 1}}}]}]
    """
    result = []
    for message in messages:
        clean = {key: value for key, value in message.items() if value is not None}
        if clean.get("tool_calls"):
            clean["tool_calls"] = [_decoded_call(call) for call in clean["tool_calls"]]
        result.append(clean)
    return result


def _decoded_call(call: Mapping[str, Any]) -> dict[str, Any]:
    clean = {key: value for key, value in call.items() if value is not None}
    function = dict(clean.get("function") or {})
    if isinstance(function.get("arguments"), str):
        try:
            function["arguments"] = json.loads(function["arguments"])
        except ValueError:
            pass  # not JSON: the template gets the text the model wrote
    clean["function"] = function
    return clean
