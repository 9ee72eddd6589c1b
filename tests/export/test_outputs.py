"""Where exports go: a save_to_disk directory, parquet, JSONL, and the Hub through a push callable."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import datasets
import pyarrow.parquet as pq
import pytest

from gym_llm.cli import export as export_command
from gym_llm.cli import main
from gym_llm.export import FORMATS, KINDS, PAIRS, ExportError, PushError, export, output_kind, to_dataset


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("fmt", ["raw", "sft", "dpo", "prompts", "verl"])
def test_every_output_kind_holds_the_same_records(mixed_rollouts, tmp_path, fmt):
    expected = to_dataset(mixed_rollouts, fmt).to_list()
    assert expected
    disk = export(mixed_rollouts, tmp_path / "ds", fmt)
    parquet = export(mixed_rollouts, tmp_path / "ds.parquet", fmt)
    jsonl = export(mixed_rollouts, tmp_path / "ds.jsonl", fmt)
    assert (disk.kind, parquet.kind, jsonl.kind) == ("disk", "parquet", "jsonl")
    assert datasets.load_from_disk(str(tmp_path / "ds")).to_list() == expected
    assert pq.read_table(tmp_path / "ds.parquet").to_pylist() == expected
    # JSONL holds the records as made, without the None fields Arrow gives keys a record lacks
    assert [drop_none(r) for r in read_rows(tmp_path / "ds.jsonl")] == [drop_none(r) for r in expected]
    assert not list(tmp_path.glob(".*.partial"))


def drop_none(value):
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


def test_to_overrides_the_suffix(mixed_rollouts, tmp_path):
    result = export(mixed_rollouts, tmp_path / "sft.out", "sft", to="parquet")
    assert result.kind == "parquet"
    assert pq.read_table(tmp_path / "sft.out").num_rows == 18
    assert output_kind("x.JSONL") == "jsonl"
    with pytest.raises(ExportError, match="unknown output kind 'csv'"):
        export(mixed_rollouts, tmp_path / "x", to="csv")


def test_push_gets_the_dataset_and_the_repository(mixed_rollouts, tmp_path):
    calls = []

    def recorder(dataset, repo_id, **kwargs):
        calls.append((dataset.to_list(), repo_id, kwargs))

    result = export(
        mixed_rollouts,
        tmp_path / "p.parquet",
        "prompts",
        push_to_hub="me/prompts",
        private=True,
        push=recorder,
    )
    assert result.repo_id == "me/prompts" and result.rows == 6
    [(records, repo_id, kwargs)] = calls
    assert repo_id == "me/prompts" and kwargs == {"split": "train", "private": True}
    assert records == pq.read_table(tmp_path / "p.parquet").to_pylist()


def test_a_failed_push_is_one_error_naming_the_repository(mixed_rollouts):
    def unreachable(dataset, repo_id, **kwargs):
        raise ConnectionError("Connection refused\nmore detail")

    with pytest.raises(
        PushError,
        match=r"^could not push to the Hugging Face Hub \(me/x\): ConnectionError: "
        r"Connection refused$",
    ):
        export(mixed_rollouts, None, "sft", push_to_hub="me/x", push=unreachable)
    with pytest.raises(ExportError, match="nothing to do"):
        export(mixed_rollouts)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_push_to_an_unreachable_hub_fails_with_a_message(mixed_rollouts, tmp_path):
    env = {
        **os.environ,
        "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
        "HF_TOKEN": "hf_test_token",
        "HF_HOME": str(tmp_path / "hf"),
    }
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gym_llm.cli",
            "export",
            str(mixed_rollouts),
            "--format",
            "sft",
            "--push-to-hub",
            "me/rollouts",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "gym-llm: error: could not push to the Hugging Face Hub (me/rollouts): " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_writes_and_reports(mixed_rollouts, tmp_path, capsys):
    out = tmp_path / "sft.parquet"
    assert main(["export", str(mixed_rollouts), "--format", "sft", "--min-reward", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Exported 12 sft rows from 24 rollouts in " in printed
    assert f"-> {out} (parquet)" in printed
    assert "skipped: below_min_reward=12" in printed
    assert pq.read_table(out).num_rows == 12


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "missing.jsonl", "-o", "x.parquet"], "rollouts file not found: missing.jsonl"),
        (["export", "{rollouts}"], "give an output with -o, or a Hub repository with --push-to-hub"),
        (["export", "{bad}", "-o", "{tmp}/x.parquet"], "bad.jsonl line 2: not valid JSON"),
        (
            ["export", "{rollouts}", "--format", "dpo", "--min-reward", "1", "-o", "{tmp}/x.parquet"],
            "min_reward applies to the raw and sft formats, not dpo",
        ),
        (["export", "{rollouts}", "-o", "{tmp}"], "is a directory; a parquet export needs a file path"),
    ],
)
def test_cli_bad_input_gets_one_line(mixed_rollouts, tmp_path, capsys, argv, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reward": 1}\n{not json}\n')
    values = {"rollouts": str(mixed_rollouts), "bad": str(bad), "tmp": str(tmp_path)}
    argv = [arg.format(**values) for arg in argv]
    if argv[-1] == str(tmp_path):
        argv += ["--to", "parquet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("gym-llm: error: ") and message in err and "Traceback" not in err


def test_cli_choices_match_the_library():
    assert (export_command.FORMATS, export_command.KINDS, export_command.PAIRS) == (FORMATS, KINDS, PAIRS)
