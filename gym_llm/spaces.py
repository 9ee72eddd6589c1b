"""Spaces for LLM episodes: any-unicode text, conversations, tool lists and model turns.

They exist so that ``gymnasium.utils.env_checker.check_env`` passes: ``contains`` checks shape,
and :class:`ActionSpace` samples the malformed turns that a real model produces too.
"""

from __future__ import annotations

import copy
import json
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from gym_llm import items as it


class AnyText(spaces.Text):
    """Any ``str`` up to ``max_length`` characters; samples printable ASCII."""

    def __init__(self, max_length: int = 1 << 24, *, seed: Any = None) -> None:
        super().__init__(max_length, min_length=0, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AnyText) and other.max_length == self.max_length


class Conversation(spaces.Space[tuple]):
    """A tuple of Responses input items (messages, function calls, their outputs, reasoning)."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, tuple) and all(_is_item(item) for item in x)

    def sample(self, mask: Any = None, probability: Any = None) -> tuple:
        text = _random_text(self.np_random)
        return ({"role": "user", "content": text},)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Conversation)

    def __repr__(self) -> str:
        return "Conversation()"


class ToolSchemas(spaces.Space[tuple]):
    """A tuple of tool schemas (OpenAI function-tool format)."""

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, tuple) and all(isinstance(t, dict) and "type" in t for t in x)

    def sample(self, mask: Any = None, probability: Any = None) -> tuple:
        return ()

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ToolSchemas)

    def __repr__(self) -> str:
        return "ToolSchemas()"


class ObservationDict(spaces.Dict):
    """The observation space of one episode; its batch is a tuple of per-env observation dicts.

    It equals the plain ``spaces.Dict`` with the same subspaces. Gymnasium batches a ``Dict`` key
    by key (``{"input": (conv_0, ...), "tools": (...)}``); an LLM caller wants one request per
    episode, so ``batch_space`` gives ``Tuple(ObservationDict × n)`` and ``concatenate`` a tuple.
    """

    def __repr__(self) -> str:
        return f"ObservationDict({', '.join(f'{k!r}: {s}' for k, s in self.spaces.items())})"


@batch_space.register(ObservationDict)
def _batch_observation_dict(space: ObservationDict, n: int = 1) -> spaces.Tuple:
    batched = spaces.Tuple(tuple(copy.deepcopy(space) for _ in range(n)), seed=copy.deepcopy(space.np_random))
    # Distinct seeds per copy, as gymnasium does for its own custom spaces.
    batched.seed([int(s) for s in copy.deepcopy(space.np_random).integers(0, int(1e8), n)])
    return batched


@concatenate.register(ObservationDict)
def _concatenate_observation_dict(space: ObservationDict, items: Sequence[Any], out: Any) -> tuple[Any, ...]:
    return tuple(items)


@create_empty_array.register(ObservationDict)
def _empty_observation_dict(space: ObservationDict, n: int = 1, fn: Callable = np.zeros) -> tuple[Any, ...]:
    return tuple({key: () for key in space.spaces} for _ in range(n))


def observation_space() -> spaces.Space[dict[str, tuple]]:
    """``{"input": Conversation, "tools": ToolSchemas}``: what a Responses API call needs."""
    space: spaces.Space[Any] = ObservationDict({"input": Conversation(), "tools": ToolSchemas()})
    return space


class ActionSpace(spaces.Space[Any]):
    """A model turn: text, a list of Responses items, or a Chat Completions assistant message.

    ``sample()`` draws what real models emit, malformed tool calls included: plain text, a
    Hermes ``<tool_call>`` to a known or unknown tool, with invalid JSON, or Responses items.
    """

    def __init__(self, tool_names: Sequence[str] = (), seed: Any = None) -> None:
        super().__init__(None, None, seed)
        self.tool_names = tuple(tool_names)

    def contains(self, x: Any) -> bool:
        if isinstance(x, str):
            return True
        if isinstance(x, (list, tuple)):
            return all(_is_item(item) for item in x)
        if isinstance(x, dict):
            return x.get("role") == "assistant" or "output" in x or x.get("type") in it.ITEM_TYPES
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        rng = self.np_random
        text = _random_text(rng)
        names = [*self.tool_names, "no_such_tool"]
        name = names[int(rng.integers(len(names)))]
        kind = int(rng.integers(5))
        if kind == 0:
            return text
        if kind == 1:
            return f'<tool_call>{{"name": "{name}", "arguments": {{"x": {json.dumps(text)}}}}}</tool_call>'
        if kind == 2:
            return f"<tool_call>{{{text}</tool_call>"
        if kind == 3:
            return [it.function_call(name, text, "call_0")]
        return [it.message(text)]

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ActionSpace) and other.tool_names == self.tool_names

    def __repr__(self) -> str:
        return f"ActionSpace(tools={list(self.tool_names)})"


def _is_item(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return kind in it.ITEM_TYPES or (kind is None and "role" in item and "content" in item)


def _random_text(rng: np.random.Generator) -> str:
    length = int(rng.integers(0, 32))
    chars = rng.choice(list(string.printable), size=length)
    return "".join(chars.tolist())
