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
    assert verified.returncode == 0 and "re-verified 12 of 12 rollouts: 12 agree" in verified.stdout


def test_collect_over_http_with_the_test_server(tmp_path, oracle_server):
    out = tmp_path / "r.jsonl"
    for api in ("responses", "chat"):
        result = gym_llm(
            "collect", "llm/StatefulCounter-v0", "-o", str(out), "--model", "test",
            "--base-url", oracle_server.base_url, "--api", api, "--concurrency", "3", "--overwrite",
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


def test_verify_reports_masked_rows_apart(tmp_path):
    out = tmp_path / "r.jsonl"
    gym_llm("collect", "llm/Weather-v0", "-o", str(out), "--limit", "3")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[2].update(reward=0.0, mask_sample=True, failure_kind="model_error")  # the model never answered
    rows[2]["response"]["output"] = []
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = gym_llm("verify", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "re-verified 2 of 3 rollouts: 2 agree" in result.stdout and "1 masked" in result.stdout
    rows[0]["reward"] = 0.5
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = gym_llm("verify", str(out))
    assert result.returncode == 3 and "1 agree" in result.stdout and "1 masked" in result.stdout


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


def test_unreachable_model_fails_clearly_and_writes_nothing(tmp_path):
    result = gym_llm(
        "collect", "llm/Weather-v0", "-o", "o.jsonl", "--limit", "1", "--model", "m",
        "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1 and "answered none of the first 1 rollouts" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_collect_never_replaces_a_file_unasked_and_resume_refuses_another_env(tmp_path):
    out = tmp_path / "r.jsonl"
    assert gym_llm("collect", "llm/MultiStep-v0", "-o", str(out), "--num-repeats", "4").returncode == 0
    before = out.read_bytes()
    again = gym_llm("collect", "llm/MultiStep-v0", "-o", str(out))
    assert (
        again.returncode == 1
        and "already exists: pass --resume" in again.stderr
        and "--overwrite" in again.stderr
    )
    other = gym_llm("collect", "llm/Weather-v0", "-o", str(out), "--num-repeats", "4", "--resume")
    assert other.returncode == 1 and "holds rollouts of 'llm/MultiStep-v0'" in other.stderr
    assert "Traceback" not in again.stderr + other.stderr and out.read_bytes() == before
    resumed = gym_llm("collect", "llm/MultiStep-v0", "-o", str(out), "--num-repeats", "5", "--resume")
    assert resumed.returncode == 0 and "Collected 6 rollouts (24 already done)" in resumed.stdout
    replaced = gym_llm("collect", "llm/Weather-v0", "-o", str(out), "--limit", "1", "--overwrite")
    assert replaced.returncode == 0 and len(out.read_text().splitlines()) == 1


def test_collect_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    from gym_llm.testing import ModelServer

    with ModelServer(latency=0.03, record=False) as server:
        result = gym_llm(
            "collect", "llm/Weather-v0", "-o", str(tmp_path / "r.jsonl"), "--model", "m",
            "--base-url", server.base_url, "--num-repeats", "8", "--concurrency", "2",
            "--progress-interval", "0.3",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "rollouts (" in line]
    assert lines and all(line.startswith("gym-llm: ") and "/48 rollouts" in line for line in lines)
    assert "mean reward 1.0000" in lines[-1]
