"""Weather episodes/s through ``gym-llm serve``, next to the same episodes in-process, in one run.

An episode is a reset (a seed), the reference actions' tool call (``get_weather``) and the answer
(which ends it and runs the verifier). Measured, with the server in its own process
(``gym-llm serve llm/Weather-v0``):

- ``in-process``: ``LLMEnv.areset``/``astep`` on one event loop (the baseline);
- ``Remote-v0``: ``llm/Remote-v0`` envs over the reset/step protocol (``areset``/``astep``), N at once;
- ``NeMo protocol``: what NeMo's ``simple_agent`` sends (``/seed_session``, ``/get_weather``,
  ``/verify`` with the cookie), from bare aiohttp, N at once;
- ``NeMoGym-v0``: ``llm/NeMoGym-v0`` envs driving the same server over NeMo's protocol, N at once;
- ``HTTP ceiling``: three bare ``GET /health`` round trips per "episode" (an episode's three
  requests with no env work), N at once: what HTTP alone allows on this machine.

Run: ``python benchmarks/serve_throughput.py [--episodes N] [--concurrency 1 16]``
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import gymnasium

import gym_llm.remote
from gym_llm.env import LLMEnv

WEATHER_TASKS = Path(gym_llm.__file__).resolve().parents[1] / "envs" / "weather" / "data" / "example.jsonl"


def reference_script(num_tasks: int) -> list[list]:
    """Each task's reference actions, recorded once so that the timed loops do no planning."""
    env = gymnasium.make("llm/Weather-v0", disable_env_checker=True).unwrapped
    scripts = []
    for index in range(num_tasks):
        obs, _ = env.reset(options={"task_index": index})
        actions = []
        while True:
            action = env.reference_action(env.task, obs)
            actions.append(action)
            obs, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        scripts.append(actions)
    return scripts


async def play_envs(envs: list[LLMEnv], scripts: list[list], episodes: int) -> float:
    """Episodes/s of ``len(envs)`` envs, each playing its share of ``episodes`` one after another."""
    assert scripts, "no tasks"

    async def worker(env: LLMEnv, start: int) -> None:
        for episode in range(start, episodes, len(envs)):
            index = episode % len(scripts)
            await env.areset(options={"task_index": index})
            for action in scripts[index]:
                _, reward, terminated, _, _ = await env.astep(action)
            assert reward == 1.0 and terminated

    started = time.perf_counter()
    await asyncio.gather(*(worker(env, start) for start, env in enumerate(envs)))
    return episodes / (time.perf_counter() - started)


async def play_nemo_wire(
    base_url: str, rows: list[dict], scripts: list[list], episodes: int, n: int
) -> float:
    """Episodes/s of simple_agent's requests from bare aiohttp: seed, the tool call, verify."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:

        async def worker(start: int) -> None:
            for episode in range(start, episodes, n):
                index = episode % len(rows)
                row = rows[index]
                async with client.post(f"{base_url}/seed_session", json=row) as reply:
                    cookies = {name: morsel.value for name, morsel in reply.cookies.items()}
                call = scripts[index][0][0]
                async with client.post(
                    f"{base_url}/get_weather", data=call["arguments"], cookies=cookies
                ) as reply:
                    output = await reply.text()
                items = [call, {"type": "function_call_output", "call_id": call["call_id"], "output": output}]
                body = {**row, "response": {"output": [*items, *scripts[index][1]]}}
                async with client.post(f"{base_url}/verify", json=body, cookies=cookies) as reply:
                    assert (await reply.json())["reward"] == 1.0

        started = time.perf_counter()
        await asyncio.gather(*(worker(start) for start in range(n)))
        return episodes / (time.perf_counter() - started)


async def play_http_ceiling(base_url: str, episodes: int, n: int) -> float:
    """Episodes/s if an episode were three bare round trips (``GET /health``) and nothing else."""
    async with aiohttp.ClientSession() as client:

        async def worker(start: int) -> None:
            for _ in range(start, episodes, n):
                for _ in range(3):
                    async with client.get(f"{base_url}/health") as reply:
                        await reply.read()

        started = time.perf_counter()
        await asyncio.gather(*(worker(start) for start in range(n)))
        return episodes / (time.perf_counter() - started)


def start_server() -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "gym_llm.cli", "serve", "llm/Weather-v0", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    found = re.search(r"on (http://\S+) ", banner)
    if found is None:
        process.kill()
        raise SystemExit(f"gym-llm serve did not start: {banner!r}")
    return process, found.group(1)


async def measure(base_url: str, episodes: int, remote_episodes: int, concurrency: list[int]) -> list[tuple]:
    local = gymnasium.make("llm/Weather-v0", disable_env_checker=True).unwrapped
    scripts = reference_script(len(local.tasks))
    rows = list(local.tasks)
    results = [("in-process", 1, await play_envs([local], scripts, episodes))]
    for n in concurrency:
        results.append(
            ("HTTP ceiling (3 bare requests)", n, await play_http_ceiling(base_url, remote_episodes, n))
        )
        remote = [gym_llm.remote.RemoteEnv(base_url) for _ in range(n)]
        await play_envs(remote, scripts, min(remote_episodes, 50))  # warm up: connections, server pool
        results.append(("Remote-v0 (reset/step)", n, await play_envs(remote, scripts, remote_episodes)))
        for env in remote:
            await env.aclose()
        results.append(
            (
                "NeMo protocol (raw aiohttp)",
                n,
                await play_nemo_wire(base_url, rows, scripts, remote_episodes, n),
            )
        )
        nemo = [gym_llm.remote.NeMoGymEnv(base_url, local.tasks) for _ in range(n)]
        results.append(("NeMoGym-v0 (NeMo protocol)", n, await play_envs(nemo, scripts, remote_episodes)))
        for env in nemo:
            await env.client.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=3000, help="in-process episodes (default 3000)")
    parser.add_argument(
        "--remote-episodes", type=int, default=600, help="episodes per remote row (default 600)"
    )
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1, 16], help="envs at once (default 1 16)"
    )
    args = parser.parse_args()
    process, base_url = start_server()
    try:
        results = asyncio.run(measure(base_url, args.episodes, args.remote_episodes, args.concurrency))
    finally:
        process.terminate()
        process.wait(timeout=30)
    baseline = results[0][2]
    print(f"Weather episodes/s, server: gym-llm serve in its own process at {base_url}")
    print(f"{'how':30} {'N':>4} {'episodes/s':>11} {'vs in-process':>14}")
    for how, n, rate in results:
        print(f"{how:30} {n:>4} {rate:>11,.0f} {rate / baseline:>13.1%}")


if __name__ == "__main__":
    main()
