"""Policies over real HTTP to the test model server, through our clients and the openai SDK."""

from __future__ import annotations

import asyncio
import pickle

import gymnasium
import openai
import pytest
from aiohttp import web

from gym_llm import items as it
from gym_llm.policies import (
    ChatPolicy,
    FunctionPolicy,
    JSONClient,
    ModelCallError,
    OpenAIClientPolicy,
    Policy,
    ReferencePolicy,
    ResponsesPolicy,
    as_policy,
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
    assert second["messages"][0]["role"] == "system"  # open models' chat templates drop "developer"
    # both APIs hand the script the same conversation (the chat one with "developer" as "system")
    responses_roles = [{"developer": "system"}.get(i.get("role"), i.get("role")) for i in seen[0][0]]
    assert responses_roles == [i.get("role") for i in seen[1][0]]


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
    assert isinstance(make_policy(None), Policy) and isinstance(make_policy(None), ReferencePolicy)
    assert isinstance(make_policy("m", api="chat"), ChatPolicy)
    with pytest.raises(ValueError):
        make_policy("m", api="nope")


def test_every_policy_is_a_policy_and_only_reference_binds_to_the_env():
    env = gymnasium.make("llm/Weather-v0").unwrapped
    policies = [*make_policies("http://127.0.0.1:9/v1").values(), ReferencePolicy()]
    assert all(isinstance(p, Policy) for p in policies)
    for policy in policies[:-1]:
        assert policy.bind(env) is policy
    bound = policies[-1].bind(env)
    assert isinstance(bound, ReferencePolicy) and bound is not policies[-1] and bound.env is env
    obs, _ = env.reset(options={"task_index": 0})
    assert asyncio.run(bound(obs))[0]["name"] == "get_weather"  # plays this env's task
    with pytest.raises(TypeError, match="abstract"):
        Policy()


def test_a_plain_async_function_becomes_a_policy():
    async def shout(observation, params=None):
        return it.content_text(observation["input"][-1]["content"]).upper()

    policy = as_policy(shout)
    assert isinstance(policy, FunctionPolicy) and as_policy(policy) is policy
    assert asyncio.run(policy({"input": ({"role": "user", "content": "hi"},), "tools": ()})) == "HI"
    assert policy.describe()["name"].endswith("shout")
    with pytest.raises(TypeError, match="async callable"):
        as_policy(42)


@pytest.mark.parametrize("kind", ["responses", "chat", "sdk-responses", "sdk-chat"])
def test_every_policy_asks_for_one_json_body(kind):
    with ModelServer() as server:
        env = gymnasium.make("llm/Weather-v0").unwrapped

        async def run():
            policy = make_policies(server.base_url)[kind]
            obs, info = await env.areset(options={"task_index": 0})
            try:
                # a row that asks for a stream still gets one JSON body
                await policy(obs, {**info["params"], "stream": True})
            finally:
                await policy.aclose()
                if kind.startswith("sdk"):
                    await policy.client.close()

        asyncio.run(run())
    assert len(server.requests) == 1 and server.requests[0]["stream"] is False


def test_our_policies_close_only_the_clients_they_made():
    with ModelServer(echo) as server:

        async def run():
            own = ResponsesPolicy("m", server.base_url)
            shared = JSONClient(server.base_url)
            chat_a, chat_b = ChatPolicy("m", client=shared), ChatPolicy("m", client=shared)
            responses = ResponsesPolicy("m", client=shared)
            obs = {"input": ({"role": "user", "content": "hi"},), "tools": ()}
            for policy in (own, chat_a, chat_b, responses):
                await policy(obs)
            assert not own.client.closed and not shared.closed
            await own.aclose()
            assert own.client.closed  # its own client: closed with it
            await chat_a.aclose()
            await responses.aclose()
            assert not shared.closed  # the caller's client: still open, still usable
            reply = await chat_b(obs)
            await shared.close()
            return reply

        reply = asyncio.run(run())
    assert it.output_text(reply["output"]) == "hi"


def test_openai_client_policy_never_closes_the_users_client():
    with ModelServer(echo) as server:

        async def run():
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
            policy = OpenAIClientPolicy(client, "m")
            obs = {"input": ({"role": "user", "content": "hi"},), "tools": ()}
            await policy(obs)
            await policy.aclose()
            assert not client.is_closed()
            again = await client.responses.create(model="m", input="still open")  # the user's own call
            await client.close()
            return again.output_text

        assert asyncio.run(run()) == "still open"


def test_a_pickled_copy_owns_its_copy_of_a_shared_client():
    shared = JSONClient("http://127.0.0.1:9/v1")
    copy = pickle.loads(pickle.dumps(ResponsesPolicy("m", client=shared, temperature=0.5)))
    assert copy.client is not shared and copy._owns_client and copy.sampling == {"temperature": 0.5}
    assert copy.describe() == {"policy": "responses", "model": "m", "sampling": {"temperature": 0.5}}


def test_a_server_that_streams_anyway_gets_a_clear_error():
    async def streaming(request):
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"type": "response.created"}\n\n')
        await response.write_eof()
        return response

    async def run():
        app = web.Application()
        app.router.add_post("/v1/responses", streaming)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        policy = ResponsesPolicy("m", f"http://127.0.0.1:{port}/v1")
        try:
            await policy({"input": ({"role": "user", "content": "hi"},), "tools": ()})
        finally:
            await policy.aclose()
            await runner.cleanup()

    with pytest.raises(ModelCallError, match=r"event stream \(text/event-stream\)"):
        asyncio.run(run())


def test_policies_default_to_the_openai_environment_variables(monkeypatch):
    with ModelServer(echo) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "from-env")

        async def run():
            replies = []
            for policy in (ResponsesPolicy("m"), ChatPolicy("m")):
                replies.append(await policy({"input": ({"role": "user", "content": "hi"},), "tools": ()}))
                await policy.aclose()
            return replies

        replies = asyncio.run(run())
    assert [it.output_text(r["output"]) for r in replies] == ["hi", "hi"]
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert ResponsesPolicy("m").client.base_url == "https://api.openai.com/v1"
