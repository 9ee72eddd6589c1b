"""Every accepted action form normalises to the same Responses items; bad actions never raise."""

from __future__ import annotations

import json

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.responses import Response

from gym_llm import items as it
from gym_llm.actions import InvalidAction, Turn, normalize_action, parse_hermes


def calls(turn: Turn) -> list[tuple[str, dict]]:
    return [(i["name"], json.loads(i["arguments"])) for i in turn.items if i["type"] == "function_call"]


def test_hermes_text_with_think_and_two_calls():
    text = (
        "<think>need weather</think>Let me check."
        '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": {"city": "LA"}}</tool_call>'
    )
    turn = normalize_action(text)
    assert [i["type"] for i in turn.items] == ["reasoning", "message", "function_call", "function_call"]
    assert turn.items[0]["summary"][0]["text"] == "need weather"
    assert it.output_text(turn.items) == "Let me check."
    assert calls(turn) == [("get_weather", {"city": "SF"}), ("get_weather", {"city": "LA"})]
    assert len({i["call_id"] for i in turn.items if i["type"] == "function_call"}) == 2


def test_hermes_think_opened_by_the_template():
    turn = parse_hermes("planning...</think>The answer is 4.")
    assert turn.items[0]["type"] == "reasoning"
    assert it.output_text(turn.items) == "The answer is 4."


@pytest.mark.parametrize(
    "body, reason",
    [("{not json", "not valid JSON"), ('{"arguments": {}}', "expected {"), ("[1, 2]", "expected {")],
)
def test_malformed_hermes_call_becomes_a_call_with_an_error(body, reason):
    turn = normalize_action(f"<tool_call>{body}</tool_call>")
    (call,) = [i for i in turn.items if i["type"] == "function_call"]
    assert reason in turn.call_errors[call["call_id"]]


def test_unclosed_tool_call_is_still_parsed():
    turn = normalize_action('<tool_call>{"name": "f", "arguments": {"a": 1}}')
    assert calls(turn) == [("f", {"a": 1})]


def test_plain_text_is_a_final_answer():
    turn = normalize_action("The answer is 42.")
    assert [i["type"] for i in turn.items] == ["message"]


def test_chat_message_dict_with_tool_calls():
    msg = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "hmm",
        "tool_calls": [{"id": "abc", "type": "function", "function": {"name": "f", "arguments": '{"x": 2}'}}],
    }
    turn = normalize_action(msg)
    assert [i["type"] for i in turn.items] == ["reasoning", "function_call"]
    assert turn.items[1]["call_id"] == "abc"


def test_chat_sdk_objects():
    msg = ChatCompletionMessage.model_validate(
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    completion = ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": msg.model_dump(), "finish_reason": "tool_calls"}],
        }
    )
    for action in (msg, completion):
        turn = normalize_action(action)
        assert calls(turn) == [("f", {})]
        assert it.output_text(turn.items) == "ok"


def test_responses_sdk_object_and_item_list():
    response = Response.model_validate(
        {
            "id": "r",
            "object": "response",
            "created_at": 0,
            "model": "m",
            "output": [
                {"type": "function_call", "id": "fc", "call_id": "c9", "name": "f", "arguments": '{"a": 1}'},
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )
    assert calls(normalize_action(response)) == [("f", {"a": 1})]
    assert calls(normalize_action(response.output)) == [("f", {"a": 1})]
    assert calls(normalize_action(response.model_dump())) == [("f", {"a": 1})]


def test_duplicate_and_missing_call_ids_are_made_unique():
    action = [
        {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "same"},
        {"type": "function_call", "name": "f", "arguments": {"a": 1}, "call_id": "same"},
        {"type": "function_call", "name": "f", "arguments": "{}"},
    ]
    turn = normalize_action(action)
    ids = [i["call_id"] for i in turn.items]
    assert len(set(ids)) == 3
    assert turn.items[1]["arguments"] == '{"a": 1}'


@pytest.mark.parametrize(
    "action",
    [
        42,
        None,
        object(),
        {"foo": 1},
        [{"type": "bogus"}],
        [{"type": "function_call", "arguments": "{}"}],
        ["x"],
    ],
)
def test_garbage_is_an_invalid_action_not_an_exception(action):
    assert isinstance(normalize_action(action), InvalidAction)
