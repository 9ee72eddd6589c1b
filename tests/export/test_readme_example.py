"""The README's export example runs as written, on collected rollouts."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_export_example_runs_unchanged(mixed_rollouts, tmp_path):
    code = next(
        block
        for block in re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
        if "from gym_llm.export import" in block
    )
    shutil.copy(mixed_rollouts, tmp_path / "rollouts.jsonl")
    code += "print(len(sft), [m['role'] for m in messages])\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    count, roles = out.stdout.split(" ", 1)
    assert count == "12"
    assert roles.strip() == "['system', 'user', 'assistant', 'tool', 'assistant']"
    assert pq.read_table(tmp_path / "prompts.parquet").num_rows == 6
