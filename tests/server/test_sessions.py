"""Sessions are freed: on close, on verify, after an idle timeout; 10,000 of them leave memory flat."""

from __future__ import annotations

import asyncio
import gc
import os
import time

import aiohttp
from server_wire import http, rows

from gym_llm.env import LLMEnv
from gym_llm.server import EnvServer

ROW = rows("weather")[0]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>'


def live_env_instances() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, LLMEnv))


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def open_and_close(url: str, sessions: int, concurrency: int = 8) -> None:
    """Half NeMo episodes (seed, tool, verify), half reset/step ones (reset, step, close)."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:

        async def post(path, body, cookies=None):
            async with client.post(url + path, json=body, cookies=cookies) as reply:
                assert reply.status == 200, await reply.text()
                return await reply.json(), {name: morsel.value for name, morsel in reply.cookies.items()}

        async def nemo_episode():
            _, cookies = await post("/seed_session", ROW)
            await post("/get_weather", {"city": "SF"}, cookies)
            verdict, _ = await post("/verify", {**ROW, "response": {"output": []}}, cookies)
            assert verdict["reward"] == 0.0

        async def gym_episode():
            reply, _ = await post("/reset", {})
            await post("/step", {"session_id": reply["session_id"], "action": CALL})
            closed, _ = await post("/close", {"session_id": reply["session_id"]})
            assert closed == {"closed": True}

        async def worker(start: int):
            for index in range(start, sessions, concurrency):
                await (nemo_episode() if index % 2 else gym_episode())

        await asyncio.gather(*(worker(start) for start in range(concurrency)))


def test_ten_thousand_sessions_leave_memory_flat():
    with EnvServer("llm/Weather-v0", max_idle_envs=16) as server:
        asyncio.run(open_and_close(server.base_url, 1_000))  # warm up: pools, caches, allocator arenas
        envs_before, rss_before = live_env_instances(), rss_bytes()
        started = time.perf_counter()
        asyncio.run(open_and_close(server.base_url, 10_000))
        seconds = time.perf_counter() - started
        envs_after, rss_after = live_env_instances(), rss_bytes()
        stats = server.sessions.stats()
    growth = (rss_after - rss_before) / 2**20
    print(
        f"\n10,000 sessions in {seconds:.1f} s: live env instances {envs_before} -> {envs_after}, "
        f"RSS {rss_before / 2**20:.1f} -> {rss_after / 2**20:.1f} MiB ({growth:+.1f} MiB), {stats}"
    )
    assert stats["sessions"] == 0 and stats["sessions_opened"] == 11_000
    assert stats["envs_created"] <= 16 + 8  # the pool plus one per concurrent session
    assert envs_after <= envs_before + 8
    assert growth < 8, f"RSS grew by {growth:.1f} MiB over 10,000 sessions"


def test_idle_sessions_expire_and_their_envs_return_to_the_pool():
    with EnvServer("llm/Weather-v0", idle_timeout=0.3, max_idle_envs=4) as server:
        cookies = [http("POST", f"{server.base_url}/seed_session", ROW).cookies for _ in range(20)]
        session = http("POST", f"{server.base_url}/reset", {}).json()["session_id"]
        assert len(server.sessions) == 21
        kept_alive = cookies[0]
        for _ in range(8):  # one session keeps being used: it never expires
            time.sleep(0.1)
            assert (
                http("POST", f"{server.base_url}/get_weather", {"city": "x"}, cookies=kept_alive).status
                == 200
            )
        assert len(server.sessions) == 1
        stats = server.sessions.stats()
        assert stats["sessions_expired"] == 20 and stats["idle_envs"] == 4
        for stale in cookies[1:3]:
            assert http("POST", f"{server.base_url}/get_weather", {"city": "x"}, cookies=stale).status == 404
        reply = http("POST", f"{server.base_url}/step", {"session_id": session, "action": "hi"})
        assert reply.status == 404


def test_close_is_idempotent_and_frees_the_instance(weather_server):
    store = weather_server.sessions
    before = store.stats()
    session = http("POST", f"{weather_server.base_url}/reset", {}).json()["session_id"]
    assert http("POST", f"{weather_server.base_url}/close", {"session_id": session}).json() == {
        "closed": True
    }
    assert http("POST", f"{weather_server.base_url}/close", {"session_id": session}).json() == {
        "closed": False
    }
    after = store.stats()
    assert after["sessions"] == before["sessions"] and after["idle_envs"] >= 1
    cookies = http("POST", f"{weather_server.base_url}/seed_session", ROW).cookies
    assert http("POST", f"{weather_server.base_url}/close_session", {}, cookies=cookies).json() == {}
    assert (
        http("POST", f"{weather_server.base_url}/get_weather", {"city": "x"}, cookies=cookies).status == 404
    )
