"""Collection sharded over Ray workers, on a local Ray started by the test."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from gym_llm.policies import ResponsesPolicy
from gym_llm.rollouts import collect_sync

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'gym-llm[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_reference_rollouts_on_ray_land_in_one_file(tmp_path, local_ray):
    out = tmp_path / "r.jsonl"
    result = collect_sync("llm/MultiStep-v0", out, num_repeats=3, concurrency=4, ray_address="local")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    pairs = Counter((r["task_index"], r["repeat_index"]) for r in records)
    assert result.written == len(records) == 18 and set(pairs.values()) == {1}
    assert all(r["reward"] == 1.0 for r in records)
    assert result.summary["pass@3"] == 1.0


def test_ray_workers_call_the_model_over_http_and_resume(tmp_path, local_ray, oracle_server):
    out = tmp_path / "r.jsonl"
    policy = ResponsesPolicy("m", oracle_server.base_url)
    collect_sync("llm/StatefulCounter-v0", out, policy=policy, limit=3, ray_address="local", ray_workers=2)
    policy = ResponsesPolicy("m", oracle_server.base_url)
    result = collect_sync(
        "llm/StatefulCounter-v0", out, policy=policy, resume=True, ray_address="local", ray_workers=2
    )
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert (result.skipped, result.written) == (3, 3)
    assert sorted(r["task_index"] for r in records) == list(range(6))
    assert all(r["reward"] == 1.0 and r["response"]["model"] == "m" for r in records)
