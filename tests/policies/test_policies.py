"""Policies over real HTTP to the test model server, through our clients and the openai SDK."""

from __future__ import annotations

import asyncio

import gymnasium
import openai
import pytest

from gym_llm import items as it
from gym_llm.policies import (
    ChatPolicy,
    JSONClient,
    ModelCallError,
    OpenAIClientPolicy,
    ReferencePolicy,
    ResponsesPolicy,
    make_policy,
)
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError, echo


async def play_episode(env, policy, task_index=0):
    obs, info = await env.areset(options={"task_index": task_index})
    while True:
        action = await policy(obs, info.get("params"))
        obs, reward, terminated, truncated, info = await env.astep(action)
        if terminated or truncated:
            return reward, info


def make_policies(url: str) -> dict:
    return {
        "responses": ResponsesPolicy("m", url),
        "chat": ChatPolicy("m", url),
        "sdk-responses": OpenAIClientPolicy(openai.AsyncOpenAI(base_url=url, api_key="k"), "m"),
        "sdk-chat": OpenAIClientPolicy(openai.AsyncOpenAI(base_url=url, api_key="k"), "m", api="chat"),
    }


@pytest.mark.parametrize("kind", ["responses", "chat", "sdk-responses", "sdk-chat"])
@pytest.mark.parametrize("env_id", ["llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"])
def test_every_policy_solves_every_first_env_over_http(oracle_server, kind, env_id):
    async def run():
        policy = make_policies(oracle_server.base_url)[kind]
        try:
            return await play_episode(gymnasium.make(env_id).unwrapped, policy, task_index=1)
        finally:
            await policy.aclose()

    reward, info = asyncio.run(run())
    assert reward == 1.0 and info["tool_errors"] == 0


def test_requests_carry_model_tools_and_sampling_params():
    seen = []

    def script(conversation, tools, request):
        seen.append((conversation, tools))
        return "hi"

    with ModelServer(script) as server:
        env = gymnasium.make("llm/Weather-v0").unwrapped

        async def run():
            responses = ResponsesPolicy("gpt-x", server.base_url, "secret", temperature=0.3)
            chat = ChatPolicy("gpt-y", server.base_url, max_output_tokens=7)
            obs, _ = await env.areset(options={"task_index": 0})
            await responses(obs, {"temperature": 0.9, "top_p": 0.5})
            await chat(obs, {"temperature": 0.9})
            await responses.aclose()
            await chat.aclose()

        asyncio.run(run())
    first, second = server.requests
    assert first["api"] == "responses" and first["model"] == "gpt-x"
    assert first["temperature"] == 0.3 and first["top_p"] == 0.5  # policy overrides the row
    assert first["tools"][0]["name"] == "get_weather"
    assert second["api"] == "chat" and second["max_tokens"] == 7 and second["temperature"] == 0.9
    assert second["tools"][0]["type"] == "function"
    assert second["tools"][0]["function"]["parameters"] == first["tools"][0]["parameters"]
    assert second["messages"][0]["role"] == "developer"
    # both APIs hand the script the same conversation
    assert [i.get("role") for i in seen[0][0]] == [i.get("role") for i in seen[1][0]]


def test_chat_policy_maps_tool_history_and_length_stop():
    def script(conversation, tools, request):
        return (
            [it.function_call("get_weather", {"city": "X"}, "call_a")] if len(conversation) == 2 else "cold"
        )

    with ModelServer(script) as server:
        reward, _ = asyncio.run(
            play_episode(gymnasium.make("llm/Weather-v0").unwrapped, ChatPolicy("m", server.base_url))
        )
        last = server.requests[-1]["messages"]
    assert reward == 1.0
    assert last[-2]["tool_calls"][0]["id"] == "call_a"
    assert last[-1] == {"role": "tool", "tool_call_id": "call_a", "content": last[-1]["content"]}


def test_retries_on_server_errors_then_succeeds():
    with ModelServer(echo, fail_every=2, fail_status=503) as server:
        client = JSONClient(server.base_url, backoff=0.01)

        async def run():
            out = [await client.post("/responses", {"model": "m", "input": f"q{i}"}) for i in range(3)]
            await client.close()
            return out

        outputs = asyncio.run(run())
    assert [it.output_text(o["output"]) for o in outputs] == ["q0", "q1", "q2"]
    assert server.num_requests == 5  # ok, 503, retry ok, 503, retry ok


def test_non_retryable_status_raises_at_once():
    with ModelServer(lambda c, t, r: ServerError(400, "bad request")) as server:
        client = JSONClient(server.base_url, backoff=0.01)

        async def run():
            try:
                await client.post("/responses", {"model": "m", "input": "x"})
            finally:
                await client.close()

        with pytest.raises(ModelCallError, match="HTTP 400") as excinfo:
            asyncio.run(run())
    assert excinfo.value.status == 400 and server.num_requests == 1


def test_gives_up_after_bounded_retries():
    with ModelServer(lambda c, t, r: ServerError(429, "slow down")) as server:
        client = JSONClient(server.base_url, max_retries=2, backoff=0.01)

        async def run():
            try:
                await client.post("/responses", {"model": "m", "input": "x"})
            finally:
                await client.close()

        with pytest.raises(ModelCallError, match="gave up after 3 attempts"):
            asyncio.run(run())
    assert server.num_requests == 3


def test_models_endpoint_through_the_sdk():
    with ModelServer() as server:
        models = openai.OpenAI(base_url=server.base_url, api_key="k").models.list()
    assert [m.id for m in models.data] == ["gym-llm-test-model"]


def test_reference_policy_needs_an_env_and_make_policy():
    with pytest.raises(RuntimeError, match="needs an env"):
        asyncio.run(ReferencePolicy()({"input": (), "tools": ()}))
    assert isinstance(make_policy(None), ReferencePolicy)
    assert isinstance(make_policy("m", api="chat"), ChatPolicy)
    with pytest.raises(ValueError):
        make_policy("m", api="nope")
