"""Prompt and tool-output rendering through a real tokenizer (the tiny offline one, Qwen3's template)."""

from __future__ import annotations

import json

import pytest
from trainer_suites import require

require("chat_tokens", "transformers", "tokenizers")

from tiny_model import CHATML_TOOLS_TEMPLATE, qwen3_template, tiny_tokenizer  # noqa: E402

from gym_llm.chat_format import render_prompt, render_tool_outputs, to_hf_messages  # noqa: E402
from gym_llm.integrations.chat_tokens import ChatTokens  # noqa: E402
from gym_llm.integrations.episodes import make_env  # noqa: E402

TEMPLATES = {"qwen3": qwen3_template(), "chatml": CHATML_TOOLS_TEMPLATE}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>'


@pytest.fixture(params=sorted(TEMPLATES))
def tokenizer(request):
    return tiny_tokenizer(TEMPLATES[request.param])


def weather_episode():
    env = make_env("llm/Weather-v0")
    first, _ = env.reset(options={"task_index": 0})
    obs, _, _, _, info = env.step(CALL)
    return env, first, obs, info


def test_render_prompt_is_the_templates_rendering_with_the_tools(tokenizer):
    _, first, _, _ = weather_episode()
    rendered = render_prompt(tokenizer, first)
    assert rendered.text.endswith("<|im_start|>assistant\n")
    assert "get_weather" in rendered.text and "You are a helpful personal assistant" in rendered.text
    assert rendered.token_ids == tokenizer(rendered.text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(rendered.token_ids) == rendered.text


def test_prompt_turn_and_tool_outputs_add_up_to_the_templates_conversation(tokenizer):
    """Token-exact: prompt + generated turn (with its end token) + tool outputs is what the template
    renders for the whole conversation, so the trainer's token stream is the model's own format."""
    _, first, obs, info = weather_episode()
    chat = ChatTokens(tokenizer)
    turn = tokenizer(CALL, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    stream = chat.prompt(first).token_ids + turn + chat.tool_outputs(info["new_items"]).token_ids
    tools = [{"type": "function", "function": {k: v for k, v in obs["tools"][0].items() if k != "type"}}]
    expected = tokenizer.apply_chat_template(
        to_hf_messages(obs["input"]), tools=tools, add_generation_prompt=True, tokenize=False
    )
    assert tokenizer.decode(stream) == expected
    output = json.loads(info["new_items"][0]["output"])
    assert f"<tool_response>\n{info['new_items'][0]['output']}\n</tool_response>" in expected
    assert output == {"city": "SF", "weather_description": "The weather in SF is cold."}


def test_render_tool_outputs_with_a_prefix_preserving_template():
    tokenizer = tiny_tokenizer(CHATML_TOOLS_TEMPLATE)
    _, _, _, info = weather_episode()
    rendered = render_tool_outputs(tokenizer, info["new_items"])
    assert rendered.text.endswith("<|im_start|>assistant\n")
    assert rendered.text.startswith("\n<|im_start|>user\n<tool_response>")  # "\n" after <|im_end|>
    assert ChatTokens(tokenizer).tool_outputs(info["new_items"]) == rendered


@pytest.mark.skipif(
    qwen3_template() == CHATML_TOOLS_TEMPLATE, reason="TRL's copy of Qwen3's template is absent"
)
def test_render_tool_outputs_with_qwen3s_template():
    tokenizer = tiny_tokenizer(qwen3_template())
    _, _, _, info = weather_episode()
    rendered = render_tool_outputs(tokenizer, info["new_items"])
    assert rendered.text.startswith("\n<|im_start|>user\n<tool_response>\n")
    assert rendered.text.endswith("<|im_start|>assistant\n")
    assert info["new_items"][0]["output"] in rendered.text
