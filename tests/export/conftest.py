"""Rollouts collected for the export tests: real episodes over HTTP, half of them answered wrongly."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym_llm import items as it
from gym_llm.policies import ResponsesPolicy
from gym_llm.rollouts import collect
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError, oracle

ENVS = ("llm/Weather-v0", "llm/MultiStep-v0")
REPEATS = 4


class Mixed:
    """Of every 4 episodes: the reference solution, a wrong answer, the reference solution, and a
    model error (HTTP 400, not retried: the rollout is masked).

    An episode's fate is drawn at its first turn (a conversation without tool outputs yet), so its
    later turns follow suit; every reply starts with a reasoning item.
    """

    def __init__(self) -> None:
        self.episodes = 0
        self.wrong: set[tuple] = set()

    def __call__(self, conversation: list[dict], tools: list[dict], request: dict):
        first_turn = not any(item.get("type") == "function_call_output" for item in conversation)
        if first_turn:
            self.episodes += 1
            if self.episodes % 4 == 2:
                return [it.reasoning("No idea."), it.message("<b>I do not know.</b>")]
            if self.episodes % 4 == 0:
                return ServerError(400, "bad request")
        reply = oracle(conversation, tools, request)
        items = [it.message(reply)] if isinstance(reply, str) else list(reply)
        return [it.reasoning("Let me use the tools."), *items]


@pytest.fixture(scope="session")
def mixed_rollouts(tmp_path_factory) -> Path:
    """Weather and MultiStep rollouts, 3 tasks each, 4 repeats: rewards 1, 0, 1 and a masked one."""
    path = tmp_path_factory.mktemp("rollouts") / "rollouts.jsonl"
    with ModelServer(Mixed(), record=False) as server:
        for env_id in ENVS:
            part = path.with_name(f"{env_id.split('/')[1]}.jsonl")
            policy = ResponsesPolicy("test", base_url=server.base_url)
            collect(env_id, part, policy=policy, num_repeats=REPEATS, concurrency=1, limit=3)
            with open(path, "a") as out:
                out.write(part.read_text())
    return path
