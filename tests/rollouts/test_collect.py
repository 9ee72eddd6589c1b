"""The collection engine: records in NeMo Gym's rollout format, HTTP models, faults, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from gym_llm.policies import ChatPolicy, JSONClient, ResponsesPolicy
from gym_llm.rollouts import collect_sync, load_finished, pass_at_k, summarize
from gym_llm.testing import ModelServer

FIRST_ENVS = ["llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"]


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("env_id", FIRST_ENVS)
def test_reference_collection_writes_verified_nemo_rows(tmp_path, env_id):
    out = tmp_path / "rollouts.jsonl"
    result = collect_sync(env_id, out, num_repeats=2, concurrency=4)
    records = rows(out)
    assert result.written == len(records) == 12
    assert sorted((r["task_index"], r["repeat_index"]) for r in records) == [
        (t, k) for t in range(6) for k in range(2)
    ]
    for record in records:
        assert record["reward"] == 1.0 and record["mask_sample"] is False and record["env_id"] == env_id
        assert "responses_create_params" in record  # the task row is echoed
        assert record["response"]["output"][-1]["type"] == "message"
        assert record["num_turns"] >= 2
    summary = json.loads(result.metrics_path.read_text())
    assert summary["mean_reward"] == 1.0 and summary["pass@2"] == 1.0 and summary["num_rollouts"] == 12


@pytest.mark.parametrize("api", [ResponsesPolicy, ChatPolicy])
def test_collection_over_http(tmp_path, oracle_server, api):
    out = tmp_path / "r.jsonl"
    result = collect_sync("llm/MultiStep-v0", out, policy=api("m", oracle_server.base_url), concurrency=3)
    records = rows(out)
    assert result.summary["mean_reward"] == 1.0 and len(records) == 6
    assert all(r["response"]["usage"]["total_tokens"] > 0 for r in records)
    assert all(r["response"]["model"] == "m" for r in records)


def test_overrides_reach_the_model(tmp_path):
    with ModelServer(lambda c, t, r: "no tool") as server:
        collect_sync(
            "llm/Weather-v0",
            tmp_path / "r.jsonl",
            policy=ResponsesPolicy("m", server.base_url),
            overrides={"temperature": 0.25},
            limit=2,
        )
    assert [r["temperature"] for r in server.requests] == [0.25, 0.25]


def test_model_failures_are_kept_masked_and_the_run_goes_on(tmp_path):
    with ModelServer(fail_every=3, fail_status=500) as server:
        policy = ResponsesPolicy("m", client=JSONClient(server.base_url, max_retries=0))
        result = collect_sync("llm/Weather-v0", tmp_path / "r.jsonl", policy=policy, concurrency=1)
    records = rows(tmp_path / "r.jsonl")
    assert len(records) == 6  # nothing dropped
    masked = [r for r in records if r["mask_sample"]]
    assert masked and all(
        r["failure_kind"] == "model_error" and "HTTP 500" in r["failure_reason"] for r in masked
    )
    assert result.summary["num_masked"] == len(masked)
    assert result.summary["failure_kinds"] == {"model_error": len(masked)}
    assert result.summary["mean_reward"] == 1.0  # over the unmasked rollouts


def test_resume_skips_what_is_done_and_cuts_a_torn_line(tmp_path):
    out = tmp_path / "r.jsonl"
    collect_sync("llm/Weather-v0", out, limit=3, num_repeats=2)
    with open(out, "a") as handle:
        handle.write('{"task_index": 5, "repeat_ind')  # a writer killed mid-line
    result = collect_sync("llm/Weather-v0", out, num_repeats=2, resume=True)
    assert (result.skipped, result.written) == (6, 6)
    pairs = Counter((r["task_index"], r["repeat_index"]) for r in rows(out))
    assert sorted(pairs) == [(t, k) for t in range(6) for k in range(2)] and set(pairs.values()) == {1}
    assert collect_sync("llm/Weather-v0", out, num_repeats=2, resume=True).written == 0
    # without resume the file starts over
    assert collect_sync("llm/Weather-v0", out, limit=1).written == 1 and len(rows(out)) == 1


def test_sigkill_mid_run_then_resume_gives_exactly_the_expected_rows(tmp_path):
    out = tmp_path / "r.jsonl"
    tasks = tmp_path / "tasks.jsonl"
    row = json.loads(open(_weather_data()).readline())
    tasks.write_text("\n".join(json.dumps(row) for _ in range(40)) + "\n")
    with ModelServer(latency=0.02, record=False) as server:
        cmd = [
            sys.executable, "-m", "gym_llm.cli", "collect", "llm/Weather-v0", "-o", str(out),
            "--input", str(tasks), "--num-repeats", "2", "--concurrency", "4",
            "--model", "m", "--base-url", server.base_url,
        ]  # fmt: skip
        proc = subprocess.Popen([*cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 10):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert 10 <= len(load_finished(out)) < 80, "killed too late to test anything"
        subprocess.run([*cmd, "--resume"], check=True, capture_output=True)
    records = rows(out)
    pairs = Counter((r["task_index"], r["repeat_index"]) for r in records)
    assert len(records) == 80 and set(pairs.values()) == {1}
    assert sorted(pairs) == [(t, k) for t in range(40) for k in range(2)]
    assert all(r["reward"] == 1.0 for r in records)


def _weather_data() -> str:
    import gymnasium

    return str(gymnasium.make("llm/Weather-v0").unwrapped.default_tasks)


def test_pass_at_k_and_majority():
    assert pass_at_k(4, 0, 2) == 0.0 and pass_at_k(4, 4, 2) == 1.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25) and pass_at_k(4, 1, 2) == pytest.approx(0.5)
    records = [
        {"task_index": 0, "reward": 1.0, "extracted_answer": "4"},
        {"task_index": 0, "reward": 0.0, "extracted_answer": "5"},
        {"task_index": 0, "reward": 1.0, "extracted_answer": "4"},
        {"task_index": 1, "reward": 0.0, "extracted_answer": "x"},
        {"task_index": 1, "reward": 0.0, "extracted_answer": "x"},
        {"task_index": 1, "reward": 1.0, "extracted_answer": "y"},
    ]
    summary = summarize(records)
    assert summary["pass@3"] == 1.0 and summary["majority@3"] == 0.5
    assert summary["pass@1"] == pytest.approx(0.5)
