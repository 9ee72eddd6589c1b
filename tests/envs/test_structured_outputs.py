"""Tests for ``llm/StructuredOutputs-v0`` (port of NeMo Gym's structured_outputs)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest
import xmltodict
import yaml
from gymnasium.utils.env_checker import check_env

import gym_llm  # noqa: F401  (registers the envs)
from gym_llm import items as it
from gym_llm.envs.structured_outputs.env import StructuredOutputsEnv, strictify
from gym_llm.tasks import TaskError, load_tasks
from gym_llm.testing.episodes import play, play_reference

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}},
    },
}
ALICE = {"name": "Alice", "age": 30, "address": {"city": "Paris", "zip": "75001"}}


def row(schema: dict[str, Any] = PERSON, schema_type: str = "json", **extra: Any) -> dict[str, Any]:
    return {
        "responses_create_params": {"input": [{"role": "user", "content": "Extract the person."}]},
        "schema_str": json.dumps(schema),
        "schema_type": schema_type,
        **extra,
    }


def tool_row(payload_key: str | None = None, **extra: Any) -> dict[str, Any]:
    params = PERSON if payload_key is None else {"type": "object", "properties": {payload_key: PERSON}}
    tools = [
        {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "extract_record", "parameters": params, "strict": True},
    ]
    return {
        **row(response_mode="tool_call", tool_name="extract_record", tool_payload_key=payload_key, **extra),
        "responses_create_params": {"input": [{"role": "user", "content": "Extract."}], "tools": tools},
    }


@pytest.fixture(scope="module")
def env() -> StructuredOutputsEnv:
    return StructuredOutputsEnv(offload_chars=None)


def grade(
    env: StructuredOutputsEnv, task: dict[str, Any], *output: dict[str, Any]
) -> tuple[float, str | None]:
    verdict = env.verify(task, {"output": list(output)})
    assert verdict.failure_kind == verdict.details["error_type"]
    return verdict.reward, verdict.details["error_type"]


def text(env: StructuredOutputsEnv, task: dict[str, Any], answer: str) -> tuple[float, str | None]:
    return grade(env, task, it.message(answer))


def call(name: str, arguments: Any, call_id: str = "call_1") -> dict[str, Any]:
    return it.function_call(name, arguments, call_id)


# ----------------------------------------------------------------------------- examples and API
def test_reference_solves_every_example_row() -> None:
    env = gym.make("llm/StructuredOutputs-v0")
    seen = set()
    for index, task in enumerate(env.unwrapped.tasks):
        result = play_reference(env, task_index=index)
        assert (result.reward, result.terminated, result.truncated) == (1.0, True, False), result.info
        seen.add((task["response_mode"], task["schema_type"]))
    assert {kind for mode, kind in seen if mode == "text"} == {"json", "yaml", "xml", "toml", "csv"}
    assert ("tool_call", "json") in seen


def test_generated_reference_documents_validate() -> None:
    # Without reference_document, the reference policy writes a document from the schema alone.
    core = StructuredOutputsEnv(offload_chars=None)
    for task in core.tasks:
        bare = {key: value for key, value in task.items() if key != "reference_document"}
        obs, _ = core.reset(options={"task": bare})
        _, reward, terminated, _, info = core.step(core.reference_action(bare, obs))
        assert (reward, terminated) == (1.0, True), (task["schema_type"], info["details"])


def test_check_env() -> None:
    check_env(gym.make("llm/StructuredOutputs-v0").unwrapped)


# ----------------------------------------------------------------------------- text formats
def test_json(env: StructuredOutputsEnv) -> None:
    task = row()
    assert text(env, task, json.dumps(ALICE)) == (1.0, None)
    assert text(env, task, json.dumps({k: v for k, v in ALICE.items() if k != "age"})) == (
        0.0,
        "validation_error",
    )
    assert text(env, task, json.dumps({**ALICE, "extra": 1})) == (0.0, "validation_error")
    nested_extra = {**ALICE, "address": {**ALICE["address"], "country": "FR"}}
    assert text(env, task, json.dumps(nested_extra)) == (0.0, "validation_error")
    assert text(env, task, json.dumps({**ALICE, "age": "thirty"})) == (0.0, "validation_error")
    assert text(env, task, '{"name": "Alice", ') == (0.0, "parse_error")
    assert text(env, task, "  \n") == (0.0, "empty_response")
    assert grade(env, task) == (0.0, "empty_response")


def test_text_is_concatenated_across_messages(env: StructuredOutputsEnv) -> None:
    half = len(json.dumps(ALICE)) // 2
    first, second = json.dumps(ALICE)[:half], json.dumps(ALICE)[half:]
    assert grade(env, row(), it.message(first), it.message(second)) == (1.0, None)


def test_code_fences_follow_nemo_unless_asked(env: StructuredOutputsEnv) -> None:
    fenced = "```json\n" + json.dumps(ALICE) + "\n```"
    assert text(env, row(), fenced) == (0.0, "parse_error")
    lenient = StructuredOutputsEnv(strip_code_fences=True, offload_chars=None)
    assert text(lenient, row(), fenced) == (1.0, None)
    assert text(lenient, row(), "Here it is:\n" + fenced) == (0.0, "parse_error")  # only a bare fenced block


def test_yaml(env: StructuredOutputsEnv) -> None:
    task = row(schema_type="yaml")
    assert text(env, task, yaml.safe_dump(ALICE)) == (1.0, None)
    assert text(env, task, "name: Alice\n  bad_indent: oops\n notvalid") == (0.0, "parse_error")
    assert text(env, task, yaml.safe_dump({**ALICE, "age": "thirty"})) == (0.0, "validation_error")


def test_xml_coerces_leaves_to_schema_types(env: StructuredOutputsEnv) -> None:
    schema = {
        "type": "object",
        "properties": {
            "root": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer"},
                    "score": {"type": "number"},
                    "active": {"type": "boolean"},
                    "tag": {"type": "array", "items": {"type": "string"}},
                    "note": {"type": "string"},
                    "rank": {"type": ["integer", "null"]},
                },
            }
        },
    }
    task = row(schema, "xml")
    good = {"name": "Alice", "age": 25, "score": 95.5, "active": "true", "tag": ["python", "ml"]}
    assert text(env, task, xmltodict.unparse({"root": {**good, "note": None, "rank": 3}})) == (1.0, None)
    assert text(env, task, "<root><name>A</name><age>1</age><score>2</score><active>0</active>"
                           "<tag>x</tag><note/><rank/></root>") == (1.0, None)  # fmt: skip
    assert text(env, task, xmltodict.unparse({"root": {**good, "age": "old", "note": "", "rank": 1}})) == (
        0.0,
        "validation_error",
    )
    assert text(env, task, xmltodict.unparse({"root": {**good, "note": "", "rank": 1, "x": "1"}})) == (
        0.0,
        "validation_error",
    )
    assert text(env, task, "<root><name>Alice</name><age>25") == (0.0, "parse_error")
    no_coercion = StructuredOutputsEnv(xml_coerce_types=False, offload_chars=None)
    assert text(no_coercion, task, xmltodict.unparse({"root": {**good, "note": "n", "rank": 3}})) == (
        0.0,
        "validation_error",
    )


def test_xml_follows_refs_and_union_branches(env: StructuredOutputsEnv) -> None:
    schema = {
        "type": "object",
        "properties": {
            "root": {
                "type": "object",
                "properties": {
                    "id": {"$ref": "#/$defs/identifier"},
                    "value": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                },
            }
        },
        "$defs": {"identifier": {"type": "integer"}},
    }
    task = row(schema, "xml")
    assert text(env, task, "<root><id>42</id><value>true</value></root>") == (1.0, None)
    assert text(env, task, "<root><id>42</id><value>7</value></root>") == (1.0, None)
    assert text(env, task, "<root><id>x42</id><value>7</value></root>") == (0.0, "validation_error")


def test_toml(env: StructuredOutputsEnv) -> None:
    task = row(schema_type="toml")
    good = 'name = "Alice"\nage = 30\n\n[address]\ncity = "Paris"\nzip = "75001"\n'
    assert text(env, task, good) == (1.0, None)
    assert text(env, task, 'name = "hello\n[invalid') == (0.0, "parse_error")
    assert text(env, task, good.replace("age = 30", "age = 30\nextra = 1")) == (0.0, "validation_error")
    assert text(env, task, good.replace("age = 30", 'age = "30"')) == (0.0, "validation_error")


def test_csv_coerces_columns(env: StructuredOutputsEnv) -> None:
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": ["integer", "null"]},
                "score": {"type": "number"},
                "active": {"type": "boolean"},
            },
        },
    }
    task = row(schema, "csv")
    assert text(env, task, "name,age,score,active\nAlice,30,95.5,true\nBob,,88,0\n") == (1.0, None)
    assert text(env, task, "age,score,active\n30,95.5,true\n") == (0.0, "validation_error")
    assert text(env, task, "name,age,score,active,bonus\nAlice,30,95.5,true,x\n") == (0.0, "validation_error")
    assert text(env, task, "name,age,score,active\nAlice,old,95.5,true\n") == (0.0, "validation_error")
    assert text(env, task, "name,age,score,active\nAlice,30,95.5,true,surplus\n") == (0.0, "validation_error")


# ----------------------------------------------------------------------------- strict schemas
def test_strictify_recurses_into_unions_but_not_allof(env: StructuredOutputsEnv) -> None:
    union = {
        "type": "object",
        "properties": {
            "arguments": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"migration": {"type": "string"}, "db": {"type": "string"}},
                    },
                    {"type": "object", "properties": {"limit": {"type": "integer"}}},
                ]
            }
        },
    }
    task = row(union)
    assert text(env, task, '{"arguments": {"migration": "m1", "db": "staging"}}') == (1.0, None)
    assert text(env, task, '{"arguments": {"limit": 10}}') == (1.0, None)
    assert text(env, task, '{"arguments": {"migration": "m1"}}') == (0.0, "validation_error")
    assert text(env, task, '{"arguments": {"limit": 10, "x": 1}}') == (0.0, "validation_error")
    conjunction = {
        "allOf": [
            {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]},
        ]
    }
    assert text(env, row(conjunction), '{"id": "svc", "owner": "me"}') == (1.0, None)
    assert text(env, row(conjunction), '{"id": "svc"}') == (0.0, "validation_error")


def test_strictify_handles_a_property_named_properties() -> None:
    schema = {"type": "object", "properties": {"properties": {"type": "string"}}}
    strictify(schema)
    assert schema["required"] == ["properties"]
    assert schema["properties"] == {"properties": {"type": "string"}}


def test_broken_schema_is_a_schema_error(env: StructuredOutputsEnv) -> None:
    assert text(env, row({"type": "no-such-type"}), "{}") == (0.0, "schema_error")
    broken = env.verify(row({"type": "no-such-type"}), {"output": [it.message("{}")]})
    assert broken.mask_sample  # the row is broken, not the answer
    assert grade(env, {**tool_row(), "schema_str": '{"type": 5}'}, call("extract_record", ALICE)) == (
        0.0,
        "schema_error",
    )


# ----------------------------------------------------------------------------- tool calls
def test_tool_call_right(env: StructuredOutputsEnv) -> None:
    assert grade(env, tool_row(), call("extract_record", ALICE)) == (1.0, None)
    assert grade(env, tool_row("extraction"), call("extract_record", {"extraction": ALICE})) == (1.0, None)
    # Text beside the call is ignored in tool-call mode.
    assert grade(env, tool_row(), it.message("Done."), call("extract_record", ALICE)) == (1.0, None)
    anonymous = {**tool_row(), "tool_name": None}
    assert grade(env, anonymous, call("anything", ALICE)) == (1.0, None)


@pytest.mark.parametrize(
    "output,error_type",
    [
        ([it.message(json.dumps(ALICE))], "missing_tool_call"),
        ([], "missing_tool_call"),
        ([call("get_weather", ALICE)], "wrong_tool_name"),
        ([call("extract_record", ALICE), call("get_weather", {}, "call_2")], "multiple_tool_calls"),
        ([call("extract_record", '{"name":')], "tool_arguments_parse_error"),
        ([call("extract_record", {**ALICE, "age": "thirty"})], "validation_error"),
        ([call("extract_record", {**ALICE, "extra": True})], "validation_error"),
        ([call("extract_record", "[1, 2]")], "validation_error"),
    ],
)
def test_tool_call_wrong_or_malformed(
    env: StructuredOutputsEnv, output: list[dict[str, Any]], error_type: str
) -> None:
    assert grade(env, tool_row(), *output) == (0.0, error_type)


def test_tool_call_payload_key_and_api_error(env: StructuredOutputsEnv) -> None:
    wrapped = tool_row("extraction")
    assert grade(env, wrapped, call("extract_record", {"result": ALICE})) == (0.0, "missing_tool_payload_key")
    assert grade(env, wrapped, call("extract_record", ALICE)) == (0.0, "missing_tool_payload_key")
    verdict = env.verify(
        tool_row(), {"output": [call("extract_record", ALICE)], "error": {"code": "server_error"}}
    )
    assert (verdict.reward, verdict.failure_kind, verdict.mask_sample) == (0.0, "api_error", True)
    assert not env.verify(tool_row(), {"output": [call("get_weather", ALICE)]}).mask_sample


def test_tool_call_episode_never_runs_the_tool() -> None:
    env = StructuredOutputsEnv(tasks=[tool_row()], offload_chars=None)
    hermes = f'<tool_call>{{"name": "extract_record", "arguments": {json.dumps(ALICE)}}}</tool_call>'
    result = play(env, [hermes])
    assert (result.reward, result.terminated, result.truncated, result.steps) == (1.0, True, False, 1)
    assert [item["type"] for item in env.response["output"]] == ["function_call"]
    assert result.info["tool_errors"] == 0
    bad = play(env, ['<tool_call>{"name": "extract_record", "arguments": {broken</tool_call>'])
    assert (bad.reward, bad.info["failure_kind"]) == (0.0, "wrong_tool_name")  # unparsable call has no name
    invalid = play(env, [3.5])
    assert (invalid.reward, invalid.info["failure_kind"]) == (0.0, "invalid_action")
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step("again")


def test_big_documents_are_graded_in_a_process_pool() -> None:
    env = StructuredOutputsEnv(tasks=[row(), tool_row()], offload_chars=0)
    assert play(env, [json.dumps(ALICE)], task_index=0).reward == 1.0
    wrong = play(env, [[call("extract_record", {**ALICE, "age": "x"})]], task_index=1)
    assert (wrong.reward, wrong.info["failure_kind"]) == (0.0, "validation_error")


@pytest.mark.parametrize("offload_chars", [None, 0])
@pytest.mark.parametrize("output", ["x" * 10, 5, ["abc"], [{"type": "message"}, 7]])
def test_malformed_outputs_are_refused_whatever_the_offload_threshold(
    output: Any, offload_chars: int | None
) -> None:
    env = StructuredOutputsEnv(offload_chars=offload_chars)
    verdict = asyncio.run(env.averify(row(), {"output": output}))
    assert (verdict.reward, verdict.failure_kind, verdict.mask_sample) == (0.0, "malformed_response", True)


def test_a_grader_fault_is_a_masked_verify_error_not_a_validation_error() -> None:
    env = StructuredOutputsEnv(offload_chars=None)
    # a row that skipped validation
    task = {key: value for key, value in row().items() if key != "schema_str"}
    verdict = asyncio.run(env.averify(task, {"output": [it.message(json.dumps(ALICE))]}))
    assert (verdict.reward, verdict.failure_kind, verdict.mask_sample) == (0.0, "verify_error", True)
    assert "KeyError" in verdict.details["error"]


def test_verify_row_rescores_a_recorded_rollout(env: StructuredOutputsEnv) -> None:
    recorded = {**tool_row(), "response": {"output": [call("extract_record", ALICE)]}}
    assert env.verify_row(recorded).reward == 1.0


# ----------------------------------------------------------------------------- bad rows
@pytest.mark.parametrize(
    "change,field",
    [
        ({"schema_str": None}, "schema_str"),
        ({"schema_str": "{not json"}, "schema_str"),
        ({"schema_str": "[1, 2]"}, "schema_str"),
        ({"schema_type": "ini"}, "schema_type"),
        ({"response_mode": "image"}, "response_mode"),
        ({"tool_name": "no_such_tool"}, "tool_name"),
        ({"tool_payload_key": 3}, "tool_payload_key"),
    ],
)
def test_bad_rows_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(TaskError, match=f"field '{field}'"):
        load_tasks([{**tool_row(), **change}], StructuredOutputsEnv.task_model)


def test_missing_schema_is_named() -> None:
    bad = row()
    del bad["schema_str"]
    with pytest.raises(TaskError, match="field 'schema_str'"):
        StructuredOutputsEnv(tasks=[bad])
