"""Per-episode CPU cost of the first envs in-process, next to a minimal hand-written gymnasium env.

Each episode is a reset plus the reference actions (Weather: a get_weather call, then the answer).
The baseline is a plain ``gymnasium.Env`` doing the same work by hand (same tool output, same
reward rule), with none of gym_llm's action parsing, validation or bookkeeping; a second one also
returns fresh observation objects (``copy.deepcopy``), as gymnasium's env checker requires.

Run: ``python benchmarks/env_overhead.py [--episodes N]``
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import time

import gymnasium

import gym_llm  # noqa: F401 - registers the envs


class HandWrittenWeather(gymnasium.Env):
    """The least a Weather env can do: same observation shape, tool output and reward."""

    def __init__(self, rows: list[dict], fresh: bool = False) -> None:
        self.rows = rows
        self.fresh = fresh
        self.observation_space = gymnasium.spaces.Text(1)
        self.action_space = gymnasium.spaces.Text(1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        row = self.rows[options["task_index"]]
        self.conversation = list(row["responses_create_params"]["input"])
        self.tools = row["responses_create_params"]["tools"]
        self.called = False
        return self._obs(), {}

    def _obs(self) -> dict:
        obs = {"input": tuple(self.conversation), "tools": tuple(self.tools)}
        return copy.deepcopy(obs) if self.fresh else obs

    def step(self, action):
        if isinstance(action, list) and action[0]["type"] == "function_call":
            args = json.loads(action[0]["arguments"])
            output = {"city": args["city"], "weather_description": f"The weather in {args['city']} is cold."}
            self.conversation += [action[0], {"type": "function_call_output", "output": json.dumps(output)}]
            self.called = True
            return self._obs(), 0.0, False, False, {}
        self.conversation.append(action[0])
        return self._obs(), float(self.called), True, False, {}


def reference_actions(env_id: str, num_tasks: int) -> list[list]:
    """Each task's reference actions, recorded once so the timed loop does no planning."""
    env = gymnasium.make(env_id, disable_env_checker=True).unwrapped
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


def per_episode_us(env, scripts: list[list], episodes: int, mode: str) -> float:
    n = len(scripts)

    async def run_async() -> None:
        for i in range(episodes):
            await env.areset(options={"task_index": i % n})
            for action in scripts[i % n]:
                await env.astep(action)

    start = time.process_time()
    if mode == "async":
        asyncio.run(run_async())
    else:
        for i in range(episodes):
            env.reset(options={"task_index": i % n})
            for action in scripts[i % n]:
                env.step(action)
    return (time.process_time() - start) / episodes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20_000)
    args = parser.parse_args()

    weather = gymnasium.make("llm/Weather-v0", disable_env_checker=True).unwrapped
    scripts = reference_actions("llm/Weather-v0", len(weather.tasks))
    baseline = per_episode_us(HandWrittenWeather(list(weather.tasks)), scripts, args.episodes, "sync")
    print(f"{'env':28} {'API':6} {'µs/episode':>11} {'episodes/s':>11} {'vs hand-written':>16}")
    fresh = per_episode_us(
        HandWrittenWeather(list(weather.tasks), fresh=True), scripts, args.episodes, "sync"
    )
    print(f"{'hand-written Weather':28} {'sync':6} {baseline:11.1f} {1e6 / baseline:11,.0f} {1.0:15.2f}x")
    label = "  + fresh observations"
    print(f"{label:28} {'sync':6} {fresh:11.1f} {1e6 / fresh:11,.0f} {fresh / baseline:15.2f}x")
    for env_id in ("llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"):
        env = gymnasium.make(env_id, disable_env_checker=True).unwrapped
        scripts = reference_actions(env_id, len(env.tasks))
        for mode in ("sync", "async"):
            cost = per_episode_us(env, scripts, args.episodes, mode)
            print(f"{env_id:28} {mode:6} {cost:11.1f} {1e6 / cost:11,.0f} {cost / baseline:15.2f}x")


if __name__ == "__main__":
    main()
