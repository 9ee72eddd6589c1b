"""Responses items to chat messages: the Chat Completions shape and the HF chat-template shape."""

from __future__ import annotations

import gymnasium

from gym_llm import items as it
from gym_llm.chat_format import from_chat_messages, to_chat_messages, to_hf_messages
from gym_llm.testing import play_reference

CONVERSATION = [
    {"role": "developer", "content": "Use tools."},
    {"role": "user", "content": [{"type": "input_text", "text": "Weather in SF?"}]},
    it.reasoning("I should call the tool."),
    it.function_call("get_weather", {"city": "SF"}, "c1"),
    it.function_call("get_weather", '{"city": "LA"}', "c2"),
    it.function_call_output("c1", '{"weather": "cold"}'),
    it.function_call_output("c2", '{"weather": "warm"}'),
    it.message("Cold in SF, warm in LA."),
]


def test_hf_messages_map_developer_to_system_and_decode_arguments() -> None:
    messages = to_hf_messages(CONVERSATION)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["content"] == "Weather in SF?"
    calls = messages[2]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == [{"city": "SF"}, {"city": "LA"}]
    assert messages[2]["reasoning_content"] == "I should call the tool."
    assert "content" not in messages[2]  # no None contents for templates to print
    assert messages[3] == {
        "role": "tool",
        "content": '{"weather": "cold"}',
        "tool_call_id": "c1",
        "name": "get_weather",
    }
    assert messages[5] == {"role": "assistant", "content": "Cold in SF, warm in LA."}
    assert all(value is not None for m in messages for value in m.values())


def test_hf_messages_keep_arguments_that_are_not_json_as_text() -> None:
    (message,) = to_hf_messages([it.function_call("f", "{broken", "x")])
    assert message["tool_calls"][0]["function"]["arguments"] == "{broken"


def test_reasoning_before_text_lands_on_that_assistant_message() -> None:
    messages = to_hf_messages([{"role": "user", "content": "q"}, it.reasoning("think"), it.message("a")])
    assert messages[1] == {"role": "assistant", "content": "a", "reasoning_content": "think"}


def test_chat_messages_round_trip_a_whole_episode() -> None:
    env = gymnasium.make("llm/MultiStep-v0")
    result = play_reference(env)
    conversation = list(result.observation["input"])
    back = from_chat_messages(to_chat_messages(conversation))
    assert [item.get("type", "message") for item in back] == [
        item.get("type", "message") for item in conversation
    ]
    hf = to_hf_messages(conversation)
    assert sum(m["role"] == "tool" for m in hf) == len(it.function_calls(conversation))
