"""The collection engine: records in NeMo Gym's rollout format, HTTP models, faults, concurrency."""

from __future__ import annotations

import asyncio
import io
import json
import re
import time

import pytest

from gym_llm.policies import ChatPolicy, JSONClient, ResponsesPolicy
from gym_llm.rollouts import CollectError, acollect, collect, pass_at_k, summarize
from gym_llm.rollouts.metrics import MetricsAccumulator
from gym_llm.rollouts.progress import Progress
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError

FIRST_ENVS = ["llm/Weather-v0", "llm/MultiStep-v0", "llm/StatefulCounter-v0"]


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("env_id", FIRST_ENVS)
def test_reference_collection_writes_verified_nemo_rows(tmp_path, env_id):
    out = tmp_path / "rollouts.jsonl"
    result = collect(env_id, out, num_repeats=2, concurrency=4)
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
        assert re.fullmatch(r"[0-9a-f]{16}", record["task_digest"]) and record["run_digest"]
    assert len({r["task_digest"] for r in records}) == 6 and len({r["run_digest"] for r in records}) == 1
    summary = json.loads(result.metrics_path.read_text())
    assert summary["mean_reward"] == 1.0 and summary["pass@2"] == 1.0 and summary["num_rollouts"] == 12


def test_collect_is_a_plain_call_also_inside_a_running_loop(tmp_path):
    async def notebook_cell():  # Jupyter runs cells inside a running event loop
        return collect("llm/Weather-v0", tmp_path / "a.jsonl", limit=2)

    assert asyncio.run(notebook_cell()).written == 2
    assert asyncio.run(acollect("llm/Weather-v0", tmp_path / "b.jsonl", limit=3)).written == 3


def test_a_plain_async_function_is_a_policy(tmp_path):
    async def answer_without_tools(observation, params):
        return "I do not know."

    result = collect("llm/Weather-v0", tmp_path / "r.jsonl", policy=answer_without_tools, limit=2)
    assert result.summary["mean_reward"] == 0.0 and result.written == 2


@pytest.mark.parametrize("api", [ResponsesPolicy, ChatPolicy])
def test_collection_over_http(tmp_path, oracle_server, api):
    out = tmp_path / "r.jsonl"
    result = collect("llm/MultiStep-v0", out, policy=api("m", oracle_server.base_url), concurrency=3)
    records = rows(out)
    assert result.summary["mean_reward"] == 1.0 and len(records) == 6
    assert all(r["response"]["usage"]["total_tokens"] > 0 for r in records)
    assert all(r["response"]["model"] == "m" for r in records)


def test_overrides_reach_the_model(tmp_path):
    with ModelServer(lambda c, t, r: "no tool") as server:
        collect(
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
        result = collect("llm/Weather-v0", tmp_path / "r.jsonl", policy=policy, concurrency=1)
    records = rows(tmp_path / "r.jsonl")
    assert len(records) == 6  # nothing dropped
    masked = [r for r in records if r["mask_sample"]]
    assert masked and all(
        r["failure_kind"] == "model_error" and "HTTP 500" in r["failure_reason"] for r in masked
    )
    assert result.summary["num_masked"] == len(masked)
    assert result.summary["failure_kinds"] == {"model_error": len(masked)}
    assert result.summary["mean_reward"] == 1.0  # over the unmasked rollouts


def test_a_dead_model_server_stops_the_run_before_writing_anything(tmp_path):
    out = tmp_path / "r.jsonl"
    tasks = [*_weather_rows()] * 50  # 300 rollouts
    with ModelServer(lambda c, t, r: ServerError(503, "overloaded")) as server:
        policy = ResponsesPolicy("m", client=JSONClient(server.base_url, max_retries=1, backoff=0.01))
        start = time.monotonic()
        with pytest.raises(
            CollectError, match=r"answered none of the first \d+ rollouts.*HTTP 503"
        ) as caught:
            collect("llm/Weather-v0", out, policy=policy, tasks=tasks, concurrency=4)
        assert time.monotonic() - start < 10
    # the 8th failure stops the run; episodes already in flight (concurrency 4) may fail before it stops
    failed = int(str(caught.value).split("the first ")[1].split()[0])
    assert 8 <= failed < 8 + 4
    assert server.num_requests < 2 * (8 + 4)  # stopped early: two attempts per rollout, 8 (+ in flight)
    assert not out.exists()  # no masked rows, no empty file


def test_a_run_that_never_reaches_the_model_writes_nothing_even_when_short(tmp_path):
    policy = ResponsesPolicy("m", client=JSONClient("http://127.0.0.1:9/v1", max_retries=0))
    with pytest.raises(CollectError, match="answered none of the first 2 rollouts"):
        collect("llm/Weather-v0", tmp_path / "r.jsonl", policy=policy, limit=2)
    assert not (tmp_path / "r.jsonl").exists()


def test_failures_after_the_model_answered_are_written_masked(tmp_path):
    calls = {"n": 0}

    def first_two_then_dead(conversation, tools, request):
        calls["n"] += 1
        return "no tool" if calls["n"] <= 1 else ServerError(500, "gone")

    with ModelServer(first_two_then_dead) as server:
        policy = ResponsesPolicy("m", client=JSONClient(server.base_url, max_retries=0))
        result = collect("llm/Weather-v0", tmp_path / "r.jsonl", policy=policy, concurrency=1)
    assert result.written == 6 and result.summary["num_masked"] == 5


def test_concurrency_bounds_the_requests_in_flight(tmp_path, counting_server):
    server = counting_server(latency=0.05, record=False)
    collect(
        "llm/Weather-v0",
        tmp_path / "r.jsonl",
        policy=ResponsesPolicy("m", server.base_url),
        num_repeats=4,
        concurrency=3,
    )
    assert server.max_in_flight == 3


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys):
    with ModelServer(latency=0.02, record=False) as server:
        collect(
            "llm/Weather-v0",
            tmp_path / "r.jsonl",
            policy=ResponsesPolicy("m", server.base_url),
            num_repeats=10,
            concurrency=2,
            progress=True,
            progress_interval=0.2,
        )
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2, lines
    assert all(
        re.fullmatch(r"gym-llm: \d+/60 rollouts \(\d+%\), [\d.,]+/s, mean reward 1\.0000(, ETA \S+)?", line)
        for line in lines
    ), lines


def test_progress_line_counts_this_runs_rollouts_only():
    async def run():
        metrics = MetricsAccumulator()
        metrics.add({"task_index": 0, "reward": 0.0})  # a resumed row
        progress = Progress(4, metrics, stream=io.StringIO(), interval=60)
        metrics.add({"task_index": 1, "reward": 1.0})
        metrics.add({"task_index": 2, "reward": 0.0, "mask_sample": True, "failure_kind": "judge_error"})
        progress.update(2)
        line = progress.line()
        progress.close()
        return line

    assert re.fullmatch(
        r"gym-llm: 2/4 rollouts \(50%\), .*/s, mean reward 1\.0000, 1 masked, ETA \S+", asyncio.run(run())
    )


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


def test_metrics_merged_from_parts_equal_metrics_of_the_whole():
    records = [
        {
            "task_index": t,
            "reward": float((t + k) % 3 == 0),
            "num_turns": 2 + k,
            "extracted_answer": str(k % 2),
            "reward_components": {"accuracy": float(k % 2)},
        }
        for t in range(5)
        for k in range(4)
    ]
    records.append({"task_index": 9, "reward": 0.0, "mask_sample": True, "failure_kind": "judge_error"})
    whole = MetricsAccumulator()
    for record in records:
        whole.add(record)
    parts = [MetricsAccumulator() for _ in range(3)]
    for index, record in enumerate(records):
        parts[index % 3].add(record)
    merged = MetricsAccumulator()
    for part in parts:
        merged.merge(part)
    assert merged.summary() == whole.summary()
    summary = whole.summary()
    assert summary["num_masked"] == 1 and summary["failure_kinds"] == {"judge_error": 1}
    assert summary["mean_reward"] == pytest.approx(sum(r["reward"] for r in records[:-1]) / 20)
    assert summary["mean_reward_components"] == {"accuracy": 0.5}
    assert "pass@4" in summary and "majority@4" in summary


def _weather_rows() -> list[dict]:
    import gymnasium

    return list(gymnasium.make("llm/Weather-v0").unwrapped.tasks)
