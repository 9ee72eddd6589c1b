"""A tiny causal LM and tokenizer built in code, for trainer tests with no hub and no downloads.

- Tokenizer: byte-level (256 byte tokens, no merges) plus Qwen's special tokens and the tool-call
  tags as added tokens, with TRL's bundled Qwen3 chat template, so TRL recognises the template and
  parses ``<tool_call>`` output like a real Qwen model's.
- Model: a randomly initialised ``Qwen2ForCausalLM`` a few kilobytes in size.
- :func:`steering_bias`: ``sequence_bias`` entries for ``generate`` that make the random model write
  chosen texts after a given context (e.g. a tool call right after the assistant header). Where the
  texts differ they get equal bias, so the model's own logits pick one: rewards vary, as GRPO needs.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

TAGS = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "</tool_response>"]
ASSISTANT_HEADER = "<|im_start|>assistant\n"


# A ChatML template with Hermes tool calls (Qwen's layout), for environments without TRL's copy of
# Qwen3's template; written for these tests.
CHATML_TOOLS_TEMPLATE = """\
{%- set first_system = messages and messages[0].role == 'system' -%}
{%- if tools or first_system -%}
<|im_start|>system
{% if first_system %}{{ messages[0].content }}{% endif %}
{%- if tools %}

# Tools
Call a function as <tool_call>{"name": NAME, "arguments": ARGS}</tool_call>. Functions:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
{%- endif %}<|im_end|>
{% endif -%}
{%- for message in messages -%}
{%- if message.role == 'system' and loop.first -%}
{%- elif message.role == 'tool' -%}
<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% elif message.role == 'assistant' -%}
<|im_start|>assistant
{{ message.content or '' }}
{%- for call in message.tool_calls or [] %}<tool_call>
{{ {"name": call.function.name, "arguments": call.function.arguments} | tojson }}
</tool_call>
{%- endfor %}<|im_end|>
{% else -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}
"""


def qwen3_template() -> str:
    """TRL's copy of the Qwen3 chat template, or :data:`CHATML_TOOLS_TEMPLATE` without TRL."""
    try:
        return (resources.files("trl") / "chat_templates" / "qwen3.jinja").read_text()
    except ModuleNotFoundError:
        return CHATML_TOOLS_TEMPLATE


def tiny_tokenizer(chat_template: str | None = None) -> PreTrainedTokenizerFast:
    """The byte-level tokenizer with the Qwen special tokens and chat template."""
    byte_chars = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={char: i for i, char in enumerate(byte_chars)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    tokenizer.add_tokens(TAGS)
    tokenizer.chat_template = chat_template or qwen3_template()
    tokenizer.padding_side = "left"
    return tokenizer


def tiny_model(tokenizer: Any, *, seed: int = 0, max_positions: int = 4096) -> Qwen2ForCausalLM:
    """A random two-layer Qwen2 with a 32-wide hidden state (seeded: the same weights every time)."""
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        config = Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=max_positions,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=None,
            tie_word_embeddings=True,
        )
        model = Qwen2ForCausalLM(config)
    finally:
        torch.random.set_rng_state(generator_state)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def steering_bias(tokenizer: Any, context: str, texts: list[str], strength: float = 40.0) -> dict:
    """Bias that makes the model write one of ``texts`` (then its end token) right after ``context``.

    Each prefix of a target gets a bias that grows with its length, so the longest matching prefix
    wins; targets that diverge get equal bias at the point where they differ.
    """
    context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    bias: dict[tuple[int, ...], float] = {}
    for text in texts:
        seq = context_ids + tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        for end in range(len(context_ids), len(seq)):
            bias[tuple(seq[: end + 1])] = strength + end
    return bias


def as_generation_kwarg(*biases: dict) -> list[list]:
    """Biases merged in the form ``GenerationConfig(sequence_bias=...)`` takes."""
    merged: dict = {}
    for bias in biases:
        merged.update(bias)
    return [[list(key), value] for key, value in merged.items()]
