"""How ``gymnasium.make_vec("llm/...", num_envs=N)`` scales with N when tools wait on I/O.

The env is Weather with its tool made ``async`` and given a simulated latency (default 10 ms).
Each episode is two turns: a tool call, then an answer. With ``SAME_STEP`` autoreset every
vector step is a real turn. For each N it prints env-steps/s, episodes/s, the time per vector
step, the overhead per env-step beyond the tool's wait, and the speed-up over gymnasium's
``SyncVectorEnv`` (which runs the same sub-envs one after another) where that is quick to run.
Then the memory per live episode (tracemalloc, plain Weather, mid-episode).

Usage:
    .venv/bin/python benchmarks/vector_scaling.py [--latency-ms 10] [--seconds 1.0] [--max-n 1024]

It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
import tracemalloc

import gymnasium as gym
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import gym_llm  # noqa: F401  (registers the llm/ envs)
from gym_llm.envs.weather.env import WeatherEnv
from gym_llm.tools import tool

SLOW_ID = "llm_bench/SlowWeather-v0"
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
ANSWER = "It is cold in Oslo."
SIZES = (1, 4, 16, 64, 256, 1024)
SYNC_BASELINE_MAX_N = 16  # SyncVectorEnv waits N x latency per step: keep it short


class SlowWeatherEnv(WeatherEnv):
    """Weather whose ``get_weather`` waits ``latency`` seconds, like an HTTP call would."""

    latency = 0.010

    @tool
    async def get_weather(self, city: str) -> dict[str, str]:
        """Get the current weather in a city.

        Args:
            city: The name of the city.
        """
        await asyncio.sleep(self.latency)
        return {"city": city, "weather_description": f"The weather in {city} is cold."}


def run_episodes(envs: gym.vector.VectorEnv, num_envs: int, seconds: float) -> tuple[int, float]:
    """Play two-turn episodes on every sub-env until ``seconds`` pass; returns (rounds, wall)."""
    envs.reset(seed=0)
    calls, answers = [CALL] * num_envs, [ANSWER] * num_envs
    rounds = 0
    start = time.perf_counter()
    while True:
        envs.step(calls)
        _, rewards, terminations, _, _ = envs.step(answers)
        rounds += 1
        if not (terminations.all() and rewards.min() == 1.0):
            raise RuntimeError("the scripted episodes did not end with reward 1")
        wall = time.perf_counter() - start
        if wall >= seconds:
            return rounds, wall


def measure_scaling(sizes: list[int], latency: float, seconds: float) -> None:
    SlowWeatherEnv.latency = latency
    print(f"Two-turn Weather episodes, tool latency {latency * 1e3:g} ms, SAME_STEP autoreset")
    header = (
        f"{'N':>6} {'env-steps/s':>12} {'episodes/s':>11} {'ms/vec-step':>12} "
        f"{'overhead µs/env-step':>21} {'sync episodes/s':>16} {'speed-up':>9}"
    )
    print(header)
    print("-" * len(header))
    for n in sizes:
        envs = gym.make_vec(SLOW_ID, num_envs=n, autoreset_mode=AutoresetMode.SAME_STEP)
        run_episodes(envs, n, 0.0)  # warm-up: one round
        rounds, wall = run_episodes(envs, n, seconds)
        envs.close()
        steps = 2 * rounds * n
        episodes = rounds * n
        # Only the tool turn waits; what is left over is the vector env's own cost.
        overhead = (wall - rounds * latency) / steps * 1e6
        line = (
            f"{n:>6} {steps / wall:>12,.0f} {episodes / wall:>11,.0f} {wall / (2 * rounds) * 1e3:>12.2f} "
            f"{overhead:>21.1f}"
        )
        if n <= SYNC_BASELINE_MAX_N:
            sync = SyncVectorEnv(
                [lambda: SlowWeatherEnv() for _ in range(n)], autoreset_mode=AutoresetMode.SAME_STEP
            )
            sync_rounds, sync_wall = run_episodes(sync, n, min(seconds, 0.5))
            sync.close()
            sync_rate = sync_rounds * n / sync_wall
            line += f" {sync_rate:>16,.0f} {episodes / wall / sync_rate:>8.1f}x"
        print(line, flush=True)


def measure_memory(num_envs: int) -> None:
    """Bytes per live episode: N Weather sub-envs plus the vector env, mid-episode."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    envs = gym.make_vec("llm/Weather-v0", num_envs=num_envs)
    envs.reset(seed=0)
    obs, *_ = envs.step([CALL] * num_envs)  # live: the conversation holds a call and its output
    gc.collect()
    after = tracemalloc.take_snapshot()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    used = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    print(
        f"\nMemory, llm/Weather-v0, N={num_envs} live episodes (after one tool turn): "
        f"{used / num_envs / 1024:.1f} KB per episode ({used / 2**20:.1f} MiB in all, "
        f"tracemalloc peak {peak / 2**20:.1f} MiB; target < 50 KB per episode)"
    )
    top = after.compare_to(before, "lineno")[:5]
    print("Largest allocation sites:")
    for stat in top:
        frame = stat.traceback[0]
        print(
            f"  {stat.size_diff / num_envs:>8.0f} B/episode  {frame.filename.split('/')[-1]}:{frame.lineno}"
        )
    del envs, obs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency-ms", type=float, default=10.0, help="simulated tool latency")
    parser.add_argument("--seconds", type=float, default=1.0, help="time spent at each N")
    parser.add_argument("--max-n", type=int, default=1024, help="largest N")
    args = parser.parse_args()
    gym.register(
        id=SLOW_ID,
        entry_point=SlowWeatherEnv,
        vector_entry_point=f"gym_llm.wrappers.vector:{SLOW_ID}",
    )
    sizes = [n for n in SIZES if n <= args.max_n]
    measure_scaling(sizes, args.latency_ms / 1000, args.seconds)
    measure_memory(sizes[-1])


if __name__ == "__main__":
    main()
