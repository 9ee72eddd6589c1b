"""The built wheel maps envs/, wrappers/ and integrations/ into the gym_llm namespace."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (path,) = out.glob("gym_llm-*.whl")
    return path


def test_wheel_contains_every_env_package_and_its_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for env_dir in (ROOT / "envs").iterdir():
        if (env_dir / "__init__.py").exists():
            assert f"gym_llm/envs/{env_dir.name}/__init__.py" in names
            for data in (env_dir / "data").glob("*.jsonl"):
                assert f"gym_llm/envs/{env_dir.name}/data/{data.name}" in names
    assert "gym_llm/wrappers/vector.py" in names and "gym_llm/integrations/__init__.py" in names


def test_wheel_marks_the_package_as_typed(wheel):
    """PEP 561: type checkers read gym_llm's hints only when the py.typed marker is installed."""
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "gym_llm/py.typed" in names


def test_installed_wheel_imports_all_namespaces(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
    )
    code = (
        "import gym_llm, gym_llm.envs, gym_llm.wrappers, gym_llm.integrations, gymnasium\n"
        "from gym_llm.testing import play_reference\n"
        f"assert gym_llm.__file__.startswith({str(target)!r}), gym_llm.__file__\n"
        "print(play_reference(gymnasium.make('llm/Weather-v0')).reward)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"
