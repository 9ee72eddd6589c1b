"""Task sources: lists, JSONL files, and HuggingFace datasets (from local files: no hub here)."""

from __future__ import annotations

import json

import gymnasium
import pytest

from gym_llm.tasks import TaskError, TaskRow, load_tasks

ROWS = [
    {"responses_create_params": {"input": [{"role": "user", "content": f"q{i}"}]}, "expected_count": i}
    for i in range(3)
]


def test_jsonl_rows_load_unchanged_and_are_cached(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS) + "\n")  # a trailing blank line is fine
    tasks = load_tasks(path)
    assert list(tasks) == ROWS
    assert load_tasks(path) is tasks  # unchanged file: parsed and validated once
    path.write_text(json.dumps(ROWS[0]) + "\n")
    assert len(load_tasks(path)) == 1  # changed file: read again


def test_hf_dataset_from_a_local_folder(tmp_path):
    pytest.importorskip("datasets", reason="datasets is not installed")
    folder = tmp_path / "my_dataset"
    folder.mkdir()
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    tasks = load_tasks(f"hf:{folder}:train")
    assert [t["expected_count"] for t in tasks] == [0, 1, 2]
    env = gymnasium.make("llm/StatefulCounter-v0", tasks=f"hf:{folder}")
    obs, _ = env.reset(options={"task_index": 2})
    assert obs["input"][0]["content"] == "q2"


def test_a_datasets_dataset_object(tmp_path):
    datasets = pytest.importorskip("datasets", reason="datasets is not installed")
    dataset = datasets.Dataset.from_list(ROWS)
    env = gymnasium.make("llm/StatefulCounter-v0", tasks=dataset)
    assert len(env.unwrapped.tasks) == 3


def test_bad_sources_name_the_problem(tmp_path):
    with pytest.raises(TaskError, match="task file not found"):
        load_tasks(tmp_path / "missing.jsonl")
    (tmp_path / "list.jsonl").write_text("[1, 2]\n")
    with pytest.raises(TaskError, match="line 1: expected a JSON object, got list"):
        load_tasks(tmp_path / "list.jsonl")
    with pytest.raises(TaskError, match="row 1: expected a dict, got str"):
        load_tasks(["not a row"], TaskRow)
