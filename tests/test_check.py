"""The conformance checker: every built-in env passes; each kind of broken env fails its own check."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import gymnasium
import pytest

import gym_llm
from gym_llm import LLMEnv, Verdict, tool
from gym_llm import items as it
from gym_llm.check import check
from gym_llm.cli import main as cli_main

JUDGED = ("llm/EquivalenceLLMJudge-v0", "llm/MathWithJudge-v0")
SLOW = ("llm/CodeGen-v0", "llm/MathWithCode-v0", "llm/MiniSWE-v0")


@pytest.mark.parametrize("env_id", gym_llm.env_ids())
def test_every_builtin_env_passes(env_id: str, oracle_server) -> None:
    kwargs = {"judge": {"model": "judge", "base_url": oracle_server.base_url}} if env_id in JUDGED else {}
    slow = env_id in SLOW
    report = check(env_id, env_kwargs=kwargs, episodes=12 if slow else 300, fuzz_examples=4 if slow else 30)
    assert report.ok, str(report)
    assert [r.name for r in report.results] == [
        "check_env",
        "schemas",
        "reference",
        "rerun",
        "no_leaks",
        "global_rng",
        "bounded",
        "fuzz",
    ]


ROWS = [{"responses_create_params": {"input": f"say {word}"}, "word": word} for word in ("a", "b")]


class GoodEnv(LLMEnv):
    """Say the row's word after one ``ping``."""

    max_turns = 3

    def setup(self, task: dict[str, Any]) -> None:
        self.pings = 0

    @tool
    def ping(self) -> str:
        """Ping."""
        self.pings += 1
        return "pong"

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        said = it.last_assistant_text(response["output"]) == task["word"]
        return Verdict(float(said and bool(it.function_calls(response["output"], "ping"))))

    def reference_action(self, task: dict[str, Any], observation: Any) -> Any:
        if not any(item.get("type") == "function_call_output" for item in observation["input"]):
            return [it.function_call("ping", {}, "p")]
        return task["word"]


class LeakyEnv(GoodEnv):
    def setup(self, task: dict[str, Any]) -> None:  # forgets to reset its state
        self.pings = getattr(self, "pings", 0)

    def reference_action(self, task: dict[str, Any], observation: Any) -> Any:
        return [it.function_call("ping", {}, "p")] if self.pings == 0 else task["word"]


class GlobalRandomEnv(GoodEnv):
    def setup(self, task: dict[str, Any]) -> None:
        super().setup(task)
        self.noise = random.random()


class FlakyVerifyEnv(GoodEnv):
    calls = 0

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        FlakyVerifyEnv.calls += 1
        return Verdict(float(FlakyVerifyEnv.calls % 2))


class WrongReferenceEnv(GoodEnv):
    def reference_action(self, task: dict[str, Any], observation: Any) -> Any:
        return "wrong"


class BadSchemaEnv(GoodEnv):
    def __init__(self, tasks: Any = None, **kwargs: Any) -> None:
        super().__init__(tasks, **kwargs)
        broken = {**self.default_tool_schemas[0], "parameters": {"type": "no-such-type"}}
        self.default_tool_schemas = (broken,)


class HoardingEnv(GoodEnv):
    history: ClassVar[list[str]] = []

    def setup(self, task: dict[str, Any]) -> None:
        super().setup(task)
        HoardingEnv.history.append("x" * 100_000)  # grows with every episode


class CrashingToolParserEnv(GoodEnv):
    pass


def _crashing_parser(text: str) -> Any:
    raise RuntimeError("parser bug")


@pytest.mark.parametrize(
    ("env_class", "env_kwargs", "failing"),
    [
        (LeakyEnv, {}, {"no_leaks"}),
        (GlobalRandomEnv, {}, {"global_rng"}),
        (FlakyVerifyEnv, {}, {"reference", "rerun"}),
        (WrongReferenceEnv, {}, {"reference"}),
        (BadSchemaEnv, {}, {"schemas"}),
        (HoardingEnv, {}, {"bounded"}),
        (CrashingToolParserEnv, {"tool_call_parser": _crashing_parser}, {"fuzz"}),
    ],
)
def test_a_broken_env_fails_the_matching_check(env_class: type, env_kwargs: dict, failing: set[str]) -> None:
    env_id = f"test/{env_class.__name__}-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(env_id, entry_point=lambda cls=env_class, **kw: cls(kw.pop("tasks", ROWS), **kw))
    report = check(env_id, env_kwargs=env_kwargs, episodes=60, fuzz_examples=20)
    failed = {result.name for result in report.results if not result.passed}
    assert failing <= failed, str(report)
    assert all(result.message for result in report.results if not result.passed)


def test_good_env_passes_and_the_cli_prints_one_line_per_check(capsys) -> None:
    if "test/GoodEnv-v0" not in gymnasium.registry:
        gymnasium.register("test/GoodEnv-v0", entry_point=lambda **kw: GoodEnv(kw.pop("tasks", ROWS), **kw))
    assert cli_main(["check", "test/GoodEnv-v0", "--episodes", "50", "--fuzz-examples", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 9 and all(line.startswith("PASS") for line in lines[:8])
    assert lines[-1] == "test/GoodEnv-v0: all checks passed"
    register_broken = "test/WrongReferenceEnv-v0"
    if register_broken not in gymnasium.registry:
        gymnasium.register(
            register_broken, entry_point=lambda **kw: WrongReferenceEnv(kw.pop("tasks", ROWS), **kw)
        )
    assert cli_main(["check", register_broken, "--only", "reference"]) == 1
    out = capsys.readouterr().out
    assert "FAIL reference   task 0: the reference solution got reward 0.0" in out
