"""Shared fixtures: a real OpenAI-compatible test server on 127.0.0.1; a sandbox that breaks."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from gym_llm.testing import ModelServer


@pytest.fixture(scope="session")
def oracle_server():
    """A server that plays every registered env's reference solution over HTTP."""
    with ModelServer(record=False) as server:
        yield server


@pytest.fixture
def broken_unshare(tmp_path: Path) -> Callable[[str], subprocess.CompletedProcess[str]]:
    """Run Python code in a subprocess whose sandbox breaks once it has been detected.

    From then on ``unshare`` fails as it does when the kernel's namespace limits are reached, so
    the sandbox cannot start any program (an infrastructure failure, not the program's).
    """
    from gym_llm.sandbox import sandbox_support

    real = shutil.which("unshare")
    if real is None or sandbox_support().mode == "none":
        pytest.skip("the sandbox uses no namespaces on this machine")
    bin_dir, flag = tmp_path / "bin", tmp_path / "unshare_broken"
    bin_dir.mkdir()
    fake = bin_dir / "unshare"
    fake.write_text(
        f"#!/bin/sh\nif [ -e {shlex.quote(str(flag))} ]; then\n"
        '  echo "unshare: unshare failed: No space left on device" >&2\n  exit 1\nfi\n'
        f'exec {shlex.quote(real)} "$@"\n'
    )
    fake.chmod(0o755)
    prelude = (
        "from gym_llm.sandbox import sandbox_support\n"
        "assert sandbox_support().mode != 'none'\n"
        f"open({str(flag)!r}, 'w').close()\n"
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}

    def run(code: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", prelude + textwrap.dedent(code)]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180, check=False)

    return run
