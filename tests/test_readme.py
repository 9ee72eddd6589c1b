"""The README's Python example runs as written (against the test model server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs_unchanged(oracle_server, tmp_path):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.DOTALL).group(1)
    env = {**os.environ, "OPENAI_BASE_URL": oracle_server.base_url, "OPENAI_API_KEY": "test"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.0", "2"]  # reward, turns: a get_weather call, then the answer
