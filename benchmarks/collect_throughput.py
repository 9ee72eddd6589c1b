"""Rollouts/s of ``gym-llm collect`` on Weather against baselines that make the same model calls.

The test model server runs in its own process (optionally with latency) and plays Weather's
reference solution: turn 1 a ``get_weather`` call, turn 2 the answer. For each concurrency, the
same number of two-call rollouts is made by:

- ``raw aiohttp``: a bare aiohttp client posting the same two Responses requests per rollout,
  with the tool output made inline: no env, no verify, no output file (the ceiling);
- ``openai SDK``: the same calls through ``openai.AsyncOpenAI.responses.create``;
- ``gym_llm``: ``gym_llm.rollouts.acollect`` (what ``gym-llm collect`` runs) with a
  ``ResponsesPolicy``: env steps, tool calls, verify, and one JSONL line per rollout.

Run: ``python benchmarks/collect_throughput.py [--rollouts N] [--repeats K] [--latency S] [--sdk-rollouts M]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import gymnasium
import openai

import gym_llm  # noqa: F401 - registers the envs
from gym_llm.policies import ResponsesPolicy
from gym_llm.rollouts import acollect

CONCURRENCIES = (1, 8, 64, 256)


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "gym_llm.testing.model_server",
        "--port",
        str(port),
        "--latency",
        str(latency),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # "serving on ..."
    return proc, f"http://127.0.0.1:{port}/v1"


def weather_tasks() -> list[dict]:
    return list(gymnasium.make("llm/Weather-v0", disable_env_checker=True).unwrapped.tasks)


def tool_output(call: dict) -> dict:
    city = json.loads(call["arguments"])["city"]
    output = json.dumps({"city": city, "weather_description": f"The weather in {city} is cold."})
    return {"type": "function_call_output", "call_id": call["call_id"], "output": output}


async def run_pool(rollouts: int, concurrency: int, one_rollout) -> float:
    tasks = weather_tasks()
    jobs = iter(range(rollouts))

    async def worker() -> None:
        for index in jobs:
            await one_rollout(tasks[index % len(tasks)])

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(concurrency, rollouts))))
    return rollouts / (time.perf_counter() - start)


async def raw_aiohttp(url: str, rollouts: int, concurrency: int) -> float:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def post(payload: dict) -> dict:
            async with session.post(url + "/responses", data=json.dumps(payload).encode(),
                                    headers={"Content-Type": "application/json"}) as resp:  # fmt: skip
                return json.loads(await resp.read())

        async def rollout(task: dict) -> None:
            params = task["responses_create_params"]
            conversation = list(params["input"])
            first = await post({"model": "m", "input": conversation, "tools": params["tools"]})
            call = first["output"][0]
            conversation += [call, tool_output(call)]
            await post({"model": "m", "input": conversation, "tools": params["tools"]})

        return await run_pool(rollouts, concurrency, rollout)


async def openai_sdk(url: str, rollouts: int, concurrency: int) -> float:
    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)

    async def rollout(task: dict) -> None:
        params = task["responses_create_params"]
        conversation = list(params["input"])
        first = await client.responses.create(model="m", input=conversation, tools=params["tools"])
        call = first.output[0].model_dump(exclude_none=True)
        conversation += [call, tool_output(call)]
        await client.responses.create(model="m", input=conversation, tools=params["tools"])

    try:
        return await run_pool(rollouts, concurrency, rollout)
    finally:
        await client.close()


async def gym_llm_collect(url: str, rollouts: int, concurrency: int) -> float:
    repeats = -(-rollouts // len(weather_tasks()))
    with tempfile.TemporaryDirectory() as tmp:
        result = await acollect(
            "llm/Weather-v0",
            Path(tmp) / "rollouts.jsonl",
            policy=ResponsesPolicy("m", url),
            num_repeats=repeats,
            concurrency=concurrency,
        )
    assert result.summary["mean_reward"] == 1.0, result.summary
    return result.written / result.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=3000)
    parser.add_argument("--sdk-rollouts", type=int, default=300, help="fewer: the SDK path is slow")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per figure (median)")
    parser.add_argument("--latency", type=float, default=0.0, help="model server latency per call, seconds")
    args = parser.parse_args()
    server, url = start_server(args.latency)
    try:
        asyncio.run(raw_aiohttp(url, 50, 8))  # warm up the server (the oracle builds its index)
        print(f"Weather, 2 model calls per rollout, server latency {args.latency * 1000:g} ms, "
              f"{args.rollouts} rollouts per run")  # fmt: skip
        print(
            f"{'concurrency':>11} {'raw aiohttp':>12} {'openai SDK':>11} {'gym_llm':>9} {'gym_llm/raw':>12}"
        )
        for concurrency in CONCURRENCIES:
            # interleaved repeats, medians: two processes share two cores, so single runs are noisy
            raws, ours = [], []
            for _ in range(args.repeats):
                raws.append(asyncio.run(raw_aiohttp(url, args.rollouts, concurrency)))
                ours.append(asyncio.run(gym_llm_collect(url, args.rollouts, concurrency)))
            sdk = asyncio.run(openai_sdk(url, args.sdk_rollouts, concurrency))
            raw, mine = statistics.median(raws), statistics.median(ours)
            print(f"{concurrency:>11} {raw:>12.0f} {sdk:>11.0f} {mine:>9.0f} {mine / raw:>11.0%}")
        print(f"(rollouts/s, medians of {args.repeats} interleaved runs; ratio = gym_llm / raw aiohttp)")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
