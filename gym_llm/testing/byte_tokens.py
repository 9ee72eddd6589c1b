"""The test model server's own chat format and byte tokenizer, for token-exact rollouts over HTTP.

The format renders a conversation so that a turn's prompt plus its generation is a prefix of the
next turn's prompt, as a real chat template does for a model that keeps its own turns verbatim:

- context items: ``<|user|>text<|end|>\\n`` (any role), ``<|tool|>output<|end|>\\n``;
- a model turn: ``<|assistant|>`` + its text and ``<call NAME>ARGS</call>`` parts + ``<|end|>\\n``;
- a prompt ends with the open ``<|assistant|>`` header.

Token ids are the UTF-8 bytes (0-255); log probs are a fixed function of the token and position.
Reasoning items are not rendered (the Chat Completions API drops them from the history).

Example:
    >>> conv = [{"role": "user", "content": "Hi"}]
    >>> prompt_text(conv)
    '<|user|>Hi<|end|>\\n<|assistant|>'
    >>> generation_text([{"type": "message", "role": "assistant", "content": "Hello"}])
    'Hello<|end|>\\n'
    >>> encode("Hé")
    [72, 195, 169]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gym_llm import items as it

ASSISTANT = "<|assistant|>"
END = "<|end|>\n"


def is_model_item(item: dict[str, Any]) -> bool:
    """Whether the model wrote ``item`` (an assistant message or a function call)."""
    kind = item.get("type", "message")
    return kind == "function_call" or (kind == "message" and item.get("role") == "assistant")


def _model_part(item: dict[str, Any]) -> str:
    if item.get("type") == "function_call":
        return f"<call {item['name']}>{item['arguments']}</call>"
    return it.content_text(item.get("content"))


def _context_part(item: dict[str, Any]) -> str:
    if item.get("type") == "function_call_output":
        return f"<|tool|>{item['output']}{END}"
    return f"<|{item.get('role')}|>{it.content_text(item.get('content'))}{END}"


def render(conversation: Iterable[dict[str, Any]]) -> str:
    """The conversation's text; consecutive model items form one closed model turn."""
    parts: list[str] = []
    in_turn = False
    for item in conversation:
        if item.get("type") == "reasoning":
            continue
        if is_model_item(item):
            if not in_turn:
                parts.append(ASSISTANT)
                in_turn = True
            parts.append(_model_part(item))
        else:
            if in_turn:
                parts.append(END)
                in_turn = False
            parts.append(_context_part(item))
    if in_turn:
        parts.append(END)
    return "".join(parts)


def prompt_text(conversation: Iterable[dict[str, Any]]) -> str:
    """The prompt of the next model turn: the conversation and an open assistant header."""
    return render(conversation) + ASSISTANT


def generation_text(output: Iterable[dict[str, Any]]) -> str:
    """What the model generates for a turn's output items, up to and including its end marker."""
    return "".join(_model_part(item) for item in output if item.get("type") != "reasoning") + END


def encode(text: str) -> list[int]:
    """Token ids: the UTF-8 bytes."""
    return list(text.encode())


def log_probs(token_ids: list[int]) -> list[float]:
    """Deterministic stand-in log probs, one per token."""
    return [-((token * 31 + position) % 97 + 1) / 100.0 for position, token in enumerate(token_ids)]
