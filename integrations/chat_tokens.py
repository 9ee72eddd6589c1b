"""Token ids of prompts and tool outputs in a model's own chat format, for loops that work on tokens.

:class:`ChatTokens` binds :func:`gym_llm.chat_format.render_prompt` and
:func:`~gym_llm.chat_format.render_tool_outputs` to one tokenizer and template, and keeps the tool
outputs it has rendered: envs repeat outputs a lot (the same tool on the same task across a GRPO
group), and a template render costs a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gym_llm.chat_format import Rendered, render_prompt, render_tool_outputs, to_hf_messages

_CACHE_SIZE = 4096


class ChatTokens:
    """Prompt and tool-output token ids through one tokenizer and chat template.

    Args:
        tokenizer: A HuggingFace tokenizer (``apply_chat_template``, ``__call__``, ``eos_token``).
        **template_kwargs: For ``apply_chat_template`` (e.g. ``chat_template=...``,
            ``enable_thinking=False``).

    Raises:
        ValueError: The template renders no conversation as a prefix of its continuation with tool
            messages, so tool outputs cannot be appended to a token stream.
    """

    def __init__(self, tokenizer: Any, **template_kwargs: Any) -> None:
        self.tokenizer = tokenizer
        self.template_kwargs = template_kwargs
        render_tool_outputs(tokenizer, [], **template_kwargs)  # fails now if the template cannot be used
        self._rendered: dict[tuple, Rendered] = {}

    def prompt(self, observation: Mapping[str, Any]) -> Rendered:
        """The prompt of the model's next turn (the conversation, the tools, the assistant header)."""
        return render_prompt(self.tokenizer, observation, **self.template_kwargs)

    def tool_outputs(self, items: Iterable[dict[str, Any]]) -> Rendered:
        """What follows a model turn that ended with its end-of-turn token: the tool outputs in
        ``items`` (e.g. a step's ``info["new_items"]``) and the next assistant header.

        Returns:
            The text and its token ids (shared between equal calls: do not modify them).

        Raises:
            ValueError: The template renders these tool messages without the conversation before
                them as a prefix.
        """
        items = list(items)
        key = tuple(
            (msg["role"], msg.get("name"), msg.get("content"))
            for msg in to_hf_messages(items)
            if msg["role"] in ("tool", "user")
        )
        rendered = self._rendered.get(key)
        if rendered is None:
            rendered = render_tool_outputs(self.tokenizer, items, **self.template_kwargs)
            if len(self._rendered) >= _CACHE_SIZE:
                self._rendered.clear()
            self._rendered[key] = rendered
        return rendered
