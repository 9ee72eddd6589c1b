"""Fuzzed actions against every env: nothing escapes ``step``, observations stay bounded, verify repeats."""

from __future__ import annotations

import warnings

import gymnasium
import pytest

import gym_llm
from gym_llm.fuzz import fuzz_env

# envs whose steps run code in the sandbox or a judge over HTTP: fewer episodes keep the suite short
SLOW = {"llm/CodeGen-v0": 8, "llm/MathWithCode-v0": 8, "llm/MiniSWE-v0": 4}
JUDGED = ("llm/EquivalenceLLMJudge-v0", "llm/MathWithJudge-v0")


@pytest.mark.parametrize("env_id", gym_llm.env_ids())
def test_nothing_escapes_step_and_verify_repeats(env_id: str, oracle_server) -> None:
    kwargs = {"judge": {"model": "judge", "base_url": oracle_server.base_url}} if env_id in JUDGED else {}
    env = gymnasium.make(env_id, **kwargs).unwrapped
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # hypothesis warns about the size of huge generated strings
            report = fuzz_env(env, examples=SLOW.get(env_id, 40), seed=7)
    finally:
        env.close()
    assert report.ok, report.failures
    assert report.episodes == SLOW.get(env_id, 40) and report.steps >= report.episodes


def test_the_fuzzer_catches_an_escape() -> None:
    class Fragile(gym_llm.SingleTurnEnv):
        def verify(self, task, response):
            return gym_llm.Verdict(1.0)

    env = Fragile(tasks=[{"responses_create_params": {"input": "hi"}}])

    async def broken_step(action):  # an env whose step raises on every action
        raise KeyError("boom")

    env.astep = broken_step  # type: ignore[method-assign]
    report = fuzz_env(env, examples=5, seed=0)
    assert report.escapes == 5 and not report.ok and "KeyError" in report.failures[0]
