"""The gym-llm command as a user runs it: real subprocesses, real files, real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def gym_llm(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gym_llm.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_list():
    out = gym_llm("list")
    assert out.returncode == 0
    assert "llm/Weather-v0" in out.stdout and "llm/StatefulCounter-v0" in out.stdout


@pytest.mark.parametrize("env_id", ["llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"])
def test_collect_offline_by_default_then_verify(tmp_path, env_id):
    out = tmp_path / "rollouts.jsonl"
    result = gym_llm("collect", env_id, "-o", str(out), "--num-repeats", "2")
    assert result.returncode == 0, result.stderr
    assert "reference solution" in result.stdout and "mean reward 1.0000" in result.stdout
    assert len(out.read_text().splitlines()) == 12
    assert (tmp_path / "rollouts_aggregate_metrics.json").exists()
    verified = gym_llm("verify", str(out))
    assert verified.returncode == 0 and "12 agree" in verified.stdout


def test_collect_over_http_with_the_test_server(tmp_path, oracle_server):
    out = tmp_path / "r.jsonl"
    for api in ("responses", "chat"):
        result = gym_llm(
            "collect", "llm/StatefulCounter-v0", "-o", str(out), "--model", "test",
            "--base-url", oracle_server.base_url, "--api", api, "--concurrency", "3",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "mean reward 1.0000 over 6 rollouts" in result.stdout


def test_verify_reports_disagreement(tmp_path):
    out = tmp_path / "r.jsonl"
    gym_llm("collect", "llm/Weather-v0", "-o", str(out), "--limit", "2")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["reward"] = 0.0  # a recorded reward that the verifier will not reproduce
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = gym_llm("verify", str(out), "--env", "llm/Weather-v0")
    assert result.returncode == 3 and "1 agree" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["collect", "llm/Nope-v0", "-o", "x.jsonl"], "unknown env 'llm/Nope-v0'"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--input", "missing.jsonl"], "task file not found"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--base-url", "http://x"], "need --model"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--concurrency", "0"], "expected a positive integer"),
        (["collect", "llm/Weather-v0"], "-o/--output"),
        (["verify", "missing.jsonl"], "No such file"),
        (["frobnicate"], "invalid choice"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--env-kwargs", "{oops"], "not valid JSON"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--env-kwargs", "[1]"], "expected a JSON object"),
        (["collect", "llm/Weather-v0", "-o", "x.jsonl", "--env-kwargs", '{"nope": 1}'], "unexpected keyword"),
    ],
)
def test_bad_input_gets_one_clear_message_and_no_traceback(tmp_path, args, message):
    result = gym_llm(*args, cwd=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_row_names_the_line_and_field(tmp_path):
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(
        '{"responses_create_params": {"input": "hi"}, "expected_count": 1}\n'
        '{"responses_create_params": {"input": "hi"}, "expected_count": "many"}\n'
    )
    result = gym_llm(
        "collect", "llm/StatefulCounter-v0", "-o", "o.jsonl", "--input", str(tasks), cwd=tmp_path
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "row 2: field 'expected_count'" in result.stderr
    tasks.write_text("{not json}\n")
    result = gym_llm(
        "collect", "llm/StatefulCounter-v0", "-o", "o.jsonl", "--input", str(tasks), cwd=tmp_path
    )
    assert "line 1: not valid JSON" in result.stderr


def test_unreachable_model_fails_clearly(tmp_path):
    result = gym_llm(
        "collect", "llm/Weather-v0", "-o", "o.jsonl", "--limit", "1", "--model", "m",
        "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1 and "every rollout failed to reach the model" in result.stderr
    assert "Traceback" not in result.stderr
    assert json.loads((tmp_path / "o.jsonl").read_text())["mask_sample"] is True
