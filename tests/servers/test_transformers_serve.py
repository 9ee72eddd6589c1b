"""gym_llm's model clients against a third-party OpenAI-compatible server: ``transformers serve``.

Every other test reaches gym_llm's own test server; here both APIs (``/v1/responses`` through
:class:`ResponsesPolicy`, ``/v1/chat/completions`` through :class:`ChatPolicy`) and ``gym-llm
collect`` talk to a server gym_llm did not write. It serves the tiny offline model, steered per
task: a Weather task gets a Hermes ``<tool_call>`` (which the server parses, as vLLM and SGLang do
with their tool-call parsers) and then an answer, another Weather task and the MCQA tasks a direct
answer, one right and one wrong, so the rewards show that verification ran on what the server said.
The same model saved as a Llama model gets its call back as text, as from a server started without
a tool-call parser.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium
import pytest
from trainer_suites import REQUIRED

# trl: its copy of Qwen3's chat template, which the tiny model's tokenizer takes when it is there
SERVER_MODULES = ("torch", "transformers", "fastapi", "uvicorn", "trl")
_missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
if _missing:
    _reason = (
        f"the servers suite needs {', '.join(_missing)} "
        "(pip install torch==2.13.0, then pip install -e '.[dev,trl]' 'transformers[serving]')"
    )
    if "servers" in REQUIRED:
        pytest.fail(f"GYM_LLM_REQUIRE_TRAINERS names servers but {_reason}", pytrace=False)
    pytest.skip(_reason, allow_module_level=True)

from transformers_server import (  # noqa: E402
    AFTER_TOOL_OUTPUT,
    after_user,
    last_user_text,
    save_steered_model,
    transformers_serve,
)

from gym_llm import items as it  # noqa: E402
from gym_llm.policies import ChatPolicy, JSONClient, ModelCallError, Policy, ResponsesPolicy  # noqa: E402
from gym_llm.rollouts import collect  # noqa: E402

WEATHER, MCQA = "llm/Weather-v0", "llm/MCQA-v0"
WEATHER_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "San Francisco"}}\n</tool_call>'
WEATHER_ANSWER = "It is cold in San Francisco."
NO_TOOL_ANSWER = "Yes, bring a jacket."


def task_row(env_id: str, index: int) -> dict[str, Any]:
    return gymnasium.make(env_id, disable_env_checker=True).unwrapped.tasks[index]


def steered_replies() -> dict[str, str]:
    """What the model writes after which context (the first two tasks of each env)."""
    mcqa = [task_row(MCQA, 0), task_row(MCQA, 1)]
    assert [row["expected_answer"] for row in mcqa] == ["B", "C"]
    return {
        after_user(last_user_text(task_row(WEATHER, 0))): WEATHER_CALL,  # "what's it like in sf?"
        AFTER_TOOL_OUTPUT: WEATHER_ANSWER,
        after_user(last_user_text(task_row(WEATHER, 1))): NO_TOOL_ANSWER,  # no call: reward 0
        after_user(last_user_text(mcqa[0])): "\\boxed{B}",  # right
        after_user(last_user_text(mcqa[1])): "\\boxed{A}",  # wrong
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("transformers_serve")
    # the server answers to the saved models' directories as model names
    model = save_steered_model(work / "qwen2", steered_replies())
    without_parser = save_steered_model(
        work / "llama",
        {after_user(last_user_text(task_row(WEATHER, 0))): WEATHER_CALL, AFTER_TOOL_OUTPUT: WEATHER_ANSWER},
        architecture="llama",
    )
    with transformers_serve(work) as base_url:
        yield SimpleNamespace(base_url=base_url, model=model, model_without_parser=without_parser)


class Recorded(Policy):
    """A policy that keeps each turn exactly as the server's reply gave it to the env."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.turns: list[dict[str, Any]] = []

    async def __call__(self, observation: Any, params: Any = None) -> Any:
        turn = await self.inner(observation, params)
        self.turns.append(json.loads(json.dumps(turn)))
        return turn

    async def aclose(self) -> None:
        await self.inner.aclose()


def policy_for(api: str, server: Any, model: str | None = None) -> Recorded:
    kind = ResponsesPolicy if api == "responses" else ChatPolicy
    return Recorded(kind(model or server.model, server.base_url))


def collect_rows(env_id: str, output: Path, policy: Policy, limit: int = 2) -> list[dict[str, Any]]:
    collect(env_id, output, policy=policy, limit=limit)
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    return sorted(rows, key=lambda row: row["task_index"])


def items_of(row: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [item for item in row["response"]["output"] if item.get("type") == kind]


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_weather_tool_call_parsed_by_the_server_then_answered(server, tmp_path, api):
    policy = policy_for(api, server)
    rows = collect_rows(WEATHER, tmp_path / "rollouts.jsonl", policy)

    assert [row["reward"] for row in rows] == [1.0, 0.0]
    called, answered = rows
    calls = items_of(called, "function_call")
    assert [(call["name"], json.loads(call["arguments"])) for call in calls] == [
        ("get_weather", {"city": "San Francisco"})
    ]
    [tool_output] = items_of(called, "function_call_output")
    assert tool_output["call_id"] == calls[0]["call_id"]
    assert "The weather in San Francisco is cold." in tool_output["output"]
    assert it.output_text(called["response"]["output"]).endswith(WEATHER_ANSWER)
    assert called["num_turns"] == 2 and called["failure_kind"] is None
    assert answered["num_turns"] == 1 and not items_of(answered, "function_call")
    assert it.output_text(answered["response"]["output"]) == NO_TOOL_ANSWER

    # The server parsed the Hermes call: the turn reached the env as a function call, with no
    # <tool_call> text left for gym_llm's own parser.
    assert len(policy.turns) == 3
    turn_items = [item for turn in policy.turns for item in turn["output"]]
    assert [item["name"] for item in turn_items if item["type"] == "function_call"] == ["get_weather"]
    assert "<tool_call>" not in json.dumps(policy.turns)


@pytest.fixture(scope="module", params=["responses", "chat"])
def unparsed_calls(
    request: pytest.FixtureRequest, server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """A Weather rollout where the server returns the model's Hermes tool call as text."""
    policy = policy_for(request.param, server, server.model_without_parser)
    [row] = collect_rows(WEATHER, tmp_path_factory.mktemp("unparsed") / "rollouts.jsonl", policy, limit=1)
    return SimpleNamespace(turns=policy.turns, row=row)


def test_server_without_a_tool_call_parser_returns_the_call_as_text(unparsed_calls):
    first_turn = unparsed_calls.turns[0]["output"]
    assert [item["type"] for item in first_turn] == ["message"]
    assert it.output_text(first_turn) == WEATHER_CALL


def test_gym_llm_parses_the_calls_a_server_returned_as_text(unparsed_calls):
    row = unparsed_calls.row
    assert [call["name"] for call in items_of(row, "function_call")] == ["get_weather"]
    assert row["reward"] == 1.0 and row["num_turns"] == 2
    assert it.output_text(row["response"]["output"]).endswith(WEATHER_ANSWER)


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_mcqa_single_turn_rewards(server, tmp_path, api):
    rows = collect_rows(MCQA, tmp_path / "rollouts.jsonl", policy_for(api, server))

    assert [row["reward"] for row in rows] == [1.0, 0.0]
    assert [it.output_text(row["response"]["output"]) for row in rows] == ["\\boxed{B}", "\\boxed{A}"]
    assert all(row["num_turns"] == 1 and row["failure_kind"] is None for row in rows)
    assert [row["response"]["usage"]["output_tokens"] > 0 for row in rows] == [True, True]


def test_gym_llm_collect_command(server, tmp_path):
    output = tmp_path / "rollouts.jsonl"
    argv = [sys.executable, "-m", "gym_llm.cli", "collect", WEATHER, "-o", str(output), "--limit", "1"]
    argv += ["--model", server.model, "--base-url", server.base_url, "--no-progress"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in output.read_text().splitlines()]
    assert row["reward"] == 1.0 and row["num_turns"] == 2
    assert [call["name"] for call in items_of(row, "function_call")] == ["get_weather"]
    metrics = json.loads((tmp_path / "rollouts_aggregate_metrics.json").read_text())
    assert metrics["mean_reward"] == 1.0


def test_chat_developer_instructions_reach_the_prompt(server):
    """The Weather rows open with a developer message: the model must see it as a system prompt."""
    # a task the model is not steered on (a tool call cut off by the token limit is an HTTP 500)
    conversation = task_row(WEATHER, 2)["responses_create_params"]["input"]
    assert conversation[0]["role"] == "developer"
    as_system = [{**conversation[0], "role": "system"}, *conversation[1:]]

    async def prompt_tokens(items: list[dict[str, Any]]) -> int:
        client = JSONClient(server.base_url, max_retries=0)  # no error hidden behind retries
        policy = ChatPolicy(server.model, client=client, max_output_tokens=1)
        try:
            turn = await policy({"input": tuple(items), "tools": ()})
        finally:
            await client.close()
        return turn["usage"]["input_tokens"]

    assert asyncio.run(prompt_tokens(conversation)) == asyncio.run(prompt_tokens(as_system))


def test_responses_stream_unless_told_not_to(server):
    """The server streams ``/v1/responses`` by default: the policies' ``"stream": false`` is needed."""
    request = {"model": server.model, "input": "Hello", "max_output_tokens": 4}

    async def post(payload: dict[str, Any]) -> dict[str, Any]:
        client = JSONClient(server.base_url, max_retries=0)
        try:
            return await client.post("/responses", payload)
        finally:
            await client.close()

    with pytest.raises(ModelCallError, match="event stream"):
        asyncio.run(post(request))
    body = asyncio.run(post({**request, "stream": False}))
    assert body["object"] == "response" and body["status"] == "completed"
    assert body["usage"]["output_tokens"] == 4
