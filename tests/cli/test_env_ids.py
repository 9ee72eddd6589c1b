"""Env ids on the command line: a user's own envs (``MODULE:ID``, ``--import``), typos, ``gym-llm list``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

USER_MODULE = '''
import gymnasium
from gym_llm import LLMEnv, Verdict, tool
from gym_llm import items as it


class Counter(LLMEnv):
    """Count to the row's target with one tool."""

    max_turns = 4

    def setup(self, task):
        self.count = 0

    @tool
    def bump(self) -> int:
        """Add one."""
        self.count += 1
        return self.count

    def verify(self, task, response):
        return Verdict(float(self.count == task["target"]))

    def reference_action(self, task, observation):
        if self.count < task["target"]:
            return [it.function_call("bump", {}, f"c{self.count}")]
        return "done"


ROWS = [{"responses_create_params": {"input": f"count to {n}"}, "target": n} for n in (1, 2, 3)]
gymnasium.register("my/Counter-v0", entry_point=lambda **kw: Counter(kw.pop("tasks", ROWS), **kw))
'''


def gym_llm_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "gym_llm.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


@pytest.fixture
def user_package(tmp_path: Path) -> Path:
    (tmp_path / "my_envs.py").write_text(USER_MODULE)
    return tmp_path


@pytest.mark.parametrize("form", [["my_envs:my/Counter-v0"], ["my/Counter-v0", "--import", "my_envs"]])
def test_collect_runs_a_users_own_registered_env(user_package: Path, form: list[str]) -> None:
    out = gym_llm_cli("collect", *form, "-o", "r.jsonl", "--no-progress", cwd=user_package)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in (user_package / "r.jsonl").read_text().splitlines()]
    assert sorted(row["task_index"] for row in rows) == [0, 1, 2]
    assert all(row["reward"] == 1.0 for row in rows)


def test_unknown_ids_get_a_suggestion_and_no_traceback(tmp_path: Path) -> None:
    out = gym_llm_cli("collect", "llm/Wether-v0", "-o", "r.jsonl", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "did you mean 'llm/Weather-v0'" in out.stderr
    out = gym_llm_cli("collect", "my/Counter-v0", "-o", "r.jsonl", cwd=tmp_path)
    assert "--import MODULE" in out.stderr
    out = gym_llm_cli("collect", "missing_module:my/X-v0", "-o", "r.jsonl", cwd=tmp_path)
    assert out.returncode == 1 and "cannot import module 'missing_module'" in out.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_list_shows_what_each_env_is(tmp_path: Path) -> None:
    out = gym_llm_cli("list", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = {line.split(":")[0]: line for line in out.stdout.splitlines()}
    weather = lines["llm/Weather-v0"]
    assert "get_weather" in weather and "6 tasks" in weather and "Base class" not in weather
    assert "(27 tools)" in lines["llm/WorkplaceAssistant-v0"]
    ids = gym_llm_cli("list", "--ids", cwd=tmp_path).stdout.split()
    assert ids == sorted(lines) and "llm/MCQA-v0" in ids
