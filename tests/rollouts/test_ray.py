"""Collection on Ray workers, on a local Ray started by the test: one file, a global concurrency bound,
and lost workers (a real SIGKILL of a worker process mid-run)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from gym_llm.policies import ResponsesPolicy
from gym_llm.rollouts import CollectError, collect
from gym_llm.testing import ModelServer

ray = pytest.importorskip("ray", reason='the ray extra is not installed (pip install -e ".[ray]")')


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def pairs(path) -> Counter:
    return Counter((r["task_index"], r["repeat_index"]) for r in rows(path))


def shard_worker_pids() -> set[int]:
    """Processes of Ray actors of gym_llm's shard workers (named ``ray::ShardWorker`` by Ray)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if handle.read().startswith(b"ray::ShardWorker"):
                        found.add(int(entry))
            except OSError:
                continue
    return found


class WorkerKiller(threading.Thread):
    """SIGKILL ``how_many`` shard workers of this run once ``path`` holds ``count`` lines."""

    def __init__(self, path, count: int, how_many: int) -> None:
        super().__init__(daemon=True)
        self.path, self.count, self.how_many = path, count, how_many
        self.before = shard_worker_pids()  # workers of earlier runs, maybe still exiting
        self.killed: list[int] = []
        self.start()

    def run(self) -> None:
        deadline = time.monotonic() + 240  # a CLI run starts its own Ray first
        while time.monotonic() < deadline:
            if self.path.exists() and len(self.path.read_bytes().splitlines()) >= self.count:
                break
            time.sleep(0.01)
        for pid in sorted(shard_worker_pids() - self.before)[: self.how_many]:
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)


def test_reference_rollouts_on_ray_land_in_one_file(tmp_path, local_ray):
    out = tmp_path / "r.jsonl"
    result = collect("llm/MultiStep-v0", out, num_repeats=3, concurrency=4, ray_address="local")
    assert result.written == len(rows(out)) == 18 and set(pairs(out).values()) == {1}
    assert all(r["reward"] == 1.0 for r in rows(out))
    assert result.summary["pass@3"] == 1.0 and result.summary["num_rollouts"] == 18


def test_ray_workers_call_the_model_over_http_and_resume(tmp_path, local_ray, oracle_server):
    out = tmp_path / "r.jsonl"
    policy = ResponsesPolicy("m", oracle_server.base_url)
    collect("llm/StatefulCounter-v0", out, policy=policy, limit=3, ray_address="local", ray_workers=2)
    policy = ResponsesPolicy("m", oracle_server.base_url)
    result = collect(
        "llm/StatefulCounter-v0", out, policy=policy, resume=True, ray_address="local", ray_workers=2
    )
    assert (result.skipped, result.written) == (3, 3)
    assert sorted(r["task_index"] for r in rows(out)) == list(range(6))
    assert all(r["reward"] == 1.0 and r["response"]["model"] == "m" for r in rows(out))


def test_concurrency_is_a_bound_over_all_workers(tmp_path, local_ray, counting_server):
    server = counting_server(latency=0.05, record=False)
    policy = ResponsesPolicy("m", server.base_url)
    result = collect(
        "llm/Weather-v0", tmp_path / "r.jsonl", policy=policy, num_repeats=4, concurrency=3,
        ray_address="local", ray_workers=4,
    )  # fmt: skip
    assert result.written == 24 and server.max_in_flight <= 3


def test_a_lost_worker_costs_time_only(tmp_path, local_ray, caplog):
    out = tmp_path / "r.jsonl"
    with ModelServer(latency=0.02, record=False) as server:
        killer = WorkerKiller(out, 60, 1)
        with caplog.at_level(logging.WARNING, logger="gym_llm.rollouts"):
            result = collect(
                "llm/Weather-v0", out, policy=ResponsesPolicy("m", server.base_url), num_repeats=50,
                concurrency=8, ray_address="local", ray_workers=2,
            )  # fmt: skip
        killer.join()
        assert killer.killed, "no worker of this run was found to kill"
    assert result.written == 300 and len(rows(out)) == 300
    assert sorted(pairs(out)) == [(t, k) for t in range(6) for k in range(50)]
    assert set(pairs(out).values()) == {1}
    assert all(r["reward"] == 1.0 for r in rows(out)) and result.summary["num_rollouts"] == 300
    lost = [r.getMessage() for r in caplog.records if "was lost" in r.getMessage()]
    assert len(lost) == 1 and "go back to the queue for the 1 other workers" in lost[0]
    assert len(killer.killed) == 1


def test_losing_every_worker_stops_with_the_resume_hint(tmp_path, local_ray):
    out = tmp_path / "r.jsonl"
    with ModelServer(latency=0.02, record=False) as server:
        killer = WorkerKiller(out, 30, 2)
        with pytest.raises(CollectError, match=r"every Ray worker was lost .*--resume") as caught:
            collect(
                "llm/Weather-v0", out, policy=ResponsesPolicy("m", server.base_url), num_repeats=50,
                concurrency=4, ray_address="local", ray_workers=2,
            )  # fmt: skip
        killer.join()
        assert killer.killed, "no worker of this run was found to kill"
        written = caught.value.result.written
        assert 30 <= written < 300 and len(rows(out)) == written and set(pairs(out).values()) == {1}
        assert json.loads(caught.value.result.metrics_path.read_text())["num_rollouts"] == written
        result = collect(
            "llm/Weather-v0", out, policy=ResponsesPolicy("m", server.base_url), num_repeats=50,
            concurrency=4, ray_address="local", ray_workers=2, resume=True,
        )  # fmt: skip
    assert (result.skipped, result.written) == (written, 300 - written)
    assert len(rows(out)) == 300 and set(pairs(out).values()) == {1}


def test_the_cli_says_in_one_line_that_every_worker_was_lost(tmp_path):
    out = tmp_path / "r.jsonl"
    with ModelServer(latency=0.02, record=False) as server:
        killer = WorkerKiller(out, 20, 1)
        result = subprocess.run(
            [
                sys.executable, "-m", "gym_llm.cli", "collect", "llm/Weather-v0", "-o", str(out),
                "--model", "m", "--base-url", server.base_url, "--num-repeats", "50", "--concurrency", "4",
                "--ray", "--ray-workers", "1", "--no-progress",
            ],
            capture_output=True, text=True, timeout=300, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )  # fmt: skip
        killer.join()
        assert killer.killed, "no worker of this run was found to kill"
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("gym-llm: error:")]
    assert len(errors) == 1 and "every Ray worker was lost" in errors[0] and "--resume" in errors[0]
    assert "Traceback" not in result.stderr
    assert f"Collected {len(rows(out))} rollouts" in result.stdout and "mean reward 1.0000" in result.stdout
