"""The authoring tutorial's Python blocks run, in order, as a new user would paste them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "authoring.md"


def test_authoring_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), re.DOTALL)
    assert len(blocks) >= 7
    script = tmp_path / "tutorial.py"
    script.write_text("\n".join(blocks))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "1.0 {'correct': 1.0, 'tool_calls': 1.0}" in out.stdout
    assert "field 'value'" in out.stdout  # the bad row was refused, naming its field
    assert "PASS fuzz" in out.stdout and "FAIL" not in out.stdout
