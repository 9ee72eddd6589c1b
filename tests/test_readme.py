"""The README's Python example runs as written (against the test model server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs_unchanged(oracle_server, tmp_path):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL).group(1)
    env = {**os.environ, "OPENAI_BASE_URL": oracle_server.base_url, "OPENAI_API_KEY": "test"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "2"]  # reward, turns: a get_weather call, then the answer


def python_example(containing: str) -> str:
    return next(
        code
        for code in re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
        if containing in code
    )


def test_readme_collect_example_runs_unchanged(oracle_server, tmp_path):
    code = python_example("from gym_llm.rollouts import collect")
    env = {**os.environ, "OPENAI_BASE_URL": oracle_server.base_url, "OPENAI_API_KEY": "test"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["24", "1.0", "1.0"]  # rollouts, mean reward, pass@4
    assert len((tmp_path / "rollouts.jsonl").read_text().splitlines()) == 24


def test_readme_env_example_works(tmp_path):
    code = python_example("class MyEnv(LLMEnv)")
    (tmp_path / "data").mkdir()
    row = '{"responses_create_params": {"input": "add 2 and 3"}, "expected_count": 5}\n'
    (tmp_path / "data" / "example.jsonl").write_text(row)
    namespace = {"__file__": str(tmp_path / "env.py")}
    exec(code, namespace)
    env = namespace["MyEnv"]()
    obs, _ = env.reset(seed=0)
    assert obs["tools"][0]["parameters"]["properties"]["n"]["type"] == "integer"
    obs, *_ = env.step('<tool_call>{"name": "add", "arguments": {"n": -1}}</tool_call>')
    assert obs["input"][-1]["output"] == '{"error":"n must not be negative"}'
    env.step('<tool_call>{"name": "add", "arguments": {"n": 5}}</tool_call>')
    assert env.step("5")[1] == 1.0


def test_the_ray_install_hint_is_the_readmes_command():
    from gym_llm.rollouts.ray_backend import RAY_INSTALL

    assert f"`{RAY_INSTALL}`" in README.read_text()
