"""Rollout files are training data: never replaced unasked, resumed only by the run that wrote them,
masked rollouts played again, every (task, repeat) exactly once; also after a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import gymnasium
import pytest

from gym_llm import Verdict
from gym_llm.envs.weather.env import WeatherEnv
from gym_llm.failures import JUDGE_ERROR
from gym_llm.policies import JSONClient, ResponsesPolicy
from gym_llm.rollouts import CollectError, collect, load_finished
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def pairs(path) -> Counter:
    return Counter((r["task_index"], r["repeat_index"]) for r in rows(path))


def weather_rows() -> list[dict]:
    return [dict(row) for row in gymnasium.make("llm/Weather-v0").unwrapped.tasks]


def write_tasks(path, tasks) -> str:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return str(path)


def test_resume_skips_what_is_done_and_cuts_a_torn_line(tmp_path):
    out = tmp_path / "r.jsonl"
    collect("llm/Weather-v0", out, limit=3, num_repeats=2)
    with open(out, "a") as handle:
        handle.write('{"task_index": 5, "repeat_ind')  # a writer killed mid-line
    result = collect("llm/Weather-v0", out, num_repeats=2, resume=True)
    assert (result.skipped, result.written) == (6, 6)
    assert sorted(pairs(out)) == [(t, k) for t in range(6) for k in range(2)] and set(
        pairs(out).values()
    ) == {1}
    again = collect("llm/Weather-v0", out, num_repeats=3, resume=True)  # more repeats: only the new ones
    assert (again.skipped, again.written) == (12, 6) and again.summary["num_rollouts"] == 18
    assert collect("llm/Weather-v0", out, num_repeats=3, resume=True).written == 0


def test_an_existing_file_is_never_replaced_without_overwrite(tmp_path):
    out = tmp_path / "r.jsonl"
    collect("llm/Weather-v0", out, limit=2)
    before = out.read_bytes()
    with pytest.raises(CollectError, match=r"already exists: pass --resume .* or --overwrite"):
        collect("llm/Weather-v0", out, limit=1)
    assert out.read_bytes() == before
    assert collect("llm/Weather-v0", out, limit=1, overwrite=True).written == 1 and len(rows(out)) == 1
    with pytest.raises(ValueError, match="exclude each other"):
        collect("llm/Weather-v0", out, resume=True, overwrite=True)
    (tmp_path / "empty.jsonl").write_text("")  # nothing to lose: no flag needed
    assert collect("llm/Weather-v0", tmp_path / "empty.jsonl", limit=1).written == 1


def test_resume_refuses_a_file_of_another_env(tmp_path):
    out = tmp_path / "r.jsonl"
    collect("llm/MultiStep-v0", out, num_repeats=4)
    before = out.read_bytes()
    with pytest.raises(CollectError, match=r"holds rollouts of 'llm/MultiStep-v0' .*not 'llm/Weather-v0'"):
        collect("llm/Weather-v0", out, num_repeats=4, resume=True)
    assert out.read_bytes() == before


def test_resume_refuses_changed_task_rows_but_not_a_moved_file(tmp_path):
    out = tmp_path / "r.jsonl"
    tasks = weather_rows()
    first = write_tasks(tmp_path / "a.jsonl", tasks)
    collect("llm/Weather-v0", out, tasks=first, limit=3)
    moved = write_tasks(tmp_path / "copy.jsonl", tasks)  # the same rows elsewhere: the same run
    assert collect("llm/Weather-v0", out, tasks=moved, resume=True).written == 3
    changed = [dict(t) for t in tasks]
    changed[1]["city"] = "Oslo"
    before = out.read_bytes()
    with pytest.raises(CollectError, match=r"line \d+: task 1 is not task 1 of this run's tasks"):
        collect("llm/Weather-v0", out, tasks=write_tasks(tmp_path / "b.jsonl", changed), resume=True)
    with pytest.raises(CollectError, match="task 0 is not task 0"):
        collect("llm/Weather-v0", out, tasks=write_tasks(tmp_path / "c.jsonl", tasks[1:]), resume=True)
    assert out.read_bytes() == before


def test_resume_refuses_other_sampling_settings_but_not_another_server(tmp_path, oracle_server):
    out = tmp_path / "r.jsonl"
    collect("llm/Weather-v0", out, policy=ResponsesPolicy("m", oracle_server.base_url), limit=2)
    with ModelServer(record=False) as elsewhere:  # same model on another address: fine
        policy = ResponsesPolicy("m", elsewhere.base_url, api_key="other key")
        assert collect("llm/Weather-v0", out, policy=policy, limit=4, resume=True).written == 2
    for policy, overrides in [
        (ResponsesPolicy("other-model", oracle_server.base_url), {}),
        (ResponsesPolicy("m", oracle_server.base_url, temperature=0.1), {}),
        (ResponsesPolicy("m", oracle_server.base_url), {"temperature": 0.1}),
    ]:
        with pytest.raises(CollectError, match="written with other settings"):
            collect("llm/Weather-v0", out, policy=policy, overrides=overrides, resume=True)
    with pytest.raises(CollectError, match="other settings"):
        collect("llm/Weather-v0", out, env_kwargs={"max_turns": 3}, resume=True)


def test_masked_rollouts_are_played_again_on_resume(tmp_path):
    out = tmp_path / "r.jsonl"
    with ModelServer(fail_every=3, fail_status=500) as server:
        policy = ResponsesPolicy("m", client=JSONClient(server.base_url, max_retries=0))
        first = collect("llm/Weather-v0", out, policy=policy, num_repeats=3, concurrency=1)
    masked = first.summary["num_masked"]
    assert masked >= 4
    kept = collect("llm/Weather-v0", out, num_repeats=3, resume=True, keep_failed=True,
                   policy=ResponsesPolicy("m", server.base_url))  # fmt: skip
    assert kept.written == 0 and kept.summary["num_masked"] == masked  # --keep-failed: left as they are
    with ModelServer() as healthy:
        result = collect("llm/Weather-v0", out, policy=ResponsesPolicy("m", healthy.base_url),
                         num_repeats=3, resume=True)  # fmt: skip
    assert (result.retried, result.written, result.skipped) == (masked, masked, 18 - masked)
    records = rows(out)
    assert len(records) == 18 and set(pairs(out).values()) == {1}
    assert not any(r["mask_sample"] for r in records) and result.summary["num_masked"] == 0
    assert result.summary["mean_reward"] == 1.0 and result.summary["num_rollouts"] == 18


def test_resume_after_a_dead_server_collects_everything(tmp_path):
    out = tmp_path / "r.jsonl"
    dead = ResponsesPolicy("m", client=JSONClient("http://127.0.0.1:9/v1", max_retries=0))
    with pytest.raises(CollectError):
        collect("llm/Weather-v0", out, policy=dead)
    with ModelServer() as live:
        result = collect("llm/Weather-v0", out, policy=ResponsesPolicy("m", live.base_url), resume=True)
    assert result.written == 6 and result.summary["mean_reward"] == 1.0


def test_duplicates_in_the_file_are_dropped_keeping_the_first(tmp_path):
    out = tmp_path / "r.jsonl"
    collect("llm/Weather-v0", out, limit=3)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join([*lines, lines[0], lines[1]]))  # e.g. two runs appended to one file
    result = collect("llm/Weather-v0", out, resume=True)
    assert result.written == 3 and result.skipped == 3
    assert out.read_text().splitlines(keepends=True)[:3] == lines and set(pairs(out).values()) == {1}


def test_a_file_without_a_fingerprint_or_with_garbage_is_refused(tmp_path):
    out = tmp_path / "r.jsonl"
    collect("llm/Weather-v0", out, limit=2)
    records = rows(out)
    del records[1]["run_digest"]
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(CollectError, match="line 2: no run fingerprint"):
        collect("llm/Weather-v0", out, resume=True)
    out.write_text(json.dumps(records[0]) + "\n{oops}\n")
    with pytest.raises(CollectError, match="line 2: not valid JSON"):
        collect("llm/Weather-v0", out, resume=True)


class FlakyJudgeWeather(WeatherEnv):
    """Weather whose judge is unreachable for the first few verdicts (a masked failure kind)."""

    judge_outages = 0

    def verify(self, task, response):
        if FlakyJudgeWeather.judge_outages > 0:
            FlakyJudgeWeather.judge_outages -= 1
            return Verdict(0.0, failure_kind=JUDGE_ERROR, details={"error": "judge: connection refused"})
        return super().verify(task, response)


@pytest.fixture
def flaky_judge_env():
    env_id = "test/FlakyJudgeWeather-v0"
    gymnasium.register(env_id, entry_point=FlakyJudgeWeather)
    yield env_id
    del gymnasium.registry[env_id]


def test_a_masked_verdict_is_masked_counted_apart_and_retried(tmp_path, flaky_judge_env):
    out = tmp_path / "r.jsonl"
    FlakyJudgeWeather.judge_outages = 2
    first = collect(flaky_judge_env, out, concurrency=1)
    masked = [r for r in rows(out) if r["mask_sample"]]
    assert len(masked) == 2 and all(r["failure_kind"] == "judge_error" and r["reward"] == 0.0 for r in masked)
    assert masked[0]["failure_reason"] == "judge: connection refused"
    assert first.summary["num_masked"] == 2 and first.summary["mean_reward"] == 1.0  # not false zeros
    assert first.summary["failure_kinds"] == {"judge_error": 2}
    second = collect(flaky_judge_env, out, resume=True)
    assert (second.retried, second.written) == (2, 2) and second.summary["num_masked"] == 0
    assert len(rows(out)) == 6 and set(pairs(out).values()) == {1}


def test_sigkill_mid_run_then_resume_gives_every_pair_exactly_once(tmp_path):
    out = tmp_path / "r.jsonl"
    tasks = write_tasks(tmp_path / "tasks.jsonl", weather_rows()[:1] * 40)
    with ModelServer(latency=0.02, record=False) as server:
        cmd = [
            sys.executable, "-m", "gym_llm.cli", "collect", "llm/Weather-v0", "-o", str(out),
            "--input", tasks, "--num-repeats", "2", "--concurrency", "4",
            "--model", "m", "--base-url", server.base_url,
        ]  # fmt: skip
        proc = subprocess.Popen([*cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 10):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert 10 <= len(load_finished(out)) < 80, "killed too late to test anything"
        refused = subprocess.run(cmd, capture_output=True, text=True)
        assert refused.returncode == 1 and "--resume" in refused.stderr  # never replaced unasked
        subprocess.run([*cmd, "--resume"], check=True, capture_output=True)
    records = rows(out)
    assert len(records) == 80 and set(pairs(out).values()) == {1}
    assert sorted(pairs(out)) == [(t, k) for t in range(40) for k in range(2)]
    assert all(r["reward"] == 1.0 for r in records)


def test_server_errors_midway_leave_masked_rows_that_resume_replaces(tmp_path):
    out = tmp_path / "r.jsonl"
    state = {"calls": 0}

    def dies_after_ten_calls(conversation, tools, request):
        state["calls"] += 1
        return ServerError(502, "bad gateway") if state["calls"] > 10 else None

    with ModelServer(record=False) as server:
        from gym_llm.testing.model_server import oracle

        server.script = lambda c, t, r: dies_after_ten_calls(c, t, r) or oracle(c, t, r)
        policy = ResponsesPolicy("m", client=JSONClient(server.base_url, max_retries=0))
        first = collect("llm/Weather-v0", out, policy=policy, num_repeats=3, concurrency=2)
        assert first.written == 18 and 0 < first.summary["num_masked"] < 18
        server.script = oracle
        second = collect("llm/Weather-v0", out, policy=ResponsesPolicy("m", server.base_url),
                         num_repeats=3, resume=True)  # fmt: skip
    assert second.written == first.summary["num_masked"]
    assert len(rows(out)) == 18 and set(pairs(out).values()) == {1}
    assert second.summary["mean_reward"] == 1.0 and second.summary["num_masked"] == 0
