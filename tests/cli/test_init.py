"""``gym-llm init``: a new env that is registered, passes its own test and ``gym-llm check`` at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [*args], capture_output=True, text=True, cwd=cwd, timeout=600, env={**os.environ, **(env or {})}
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def gym_llm(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "-m", "gym_llm.cli", *args, cwd=cwd, env=env)


@pytest.mark.parametrize("flags", [[], ["--tools", "--multi-turn"], ["--judge"]])
def test_init_in_the_checkout_is_registered_and_passes_its_checks(flags: list[str]) -> None:
    name = f"zz_init_probe_{os.getpid()}_{len(flags)}"
    env_id = "llm/" + "".join(part.capitalize() for part in name.split("_")) + "-v0"
    made = [REPO / "envs" / name, REPO / "tests" / "envs" / f"test_{name}.py"]
    try:
        out = gym_llm("init", name, *flags, cwd=REPO)
        assert all(path.exists() for path in made), out.stdout
        assert env_id in gym_llm("list", "--ids", cwd=REPO).stdout.split()
        if "--judge" not in flags:  # a judge env is checked with a judge: its own test passes one
            checked = gym_llm("check", env_id, "--episodes", "50", "--fuzz-examples", "10", cwd=REPO)
            assert "all checks passed" in checked.stdout
        run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(made[1]), cwd=REPO)
        run(sys.executable, "-m", "ruff", "check", "--no-cache", *map(str, made), cwd=REPO)
    finally:
        shutil.rmtree(made[0], ignore_errors=True)
        made[1].unlink(missing_ok=True)


def test_init_elsewhere_makes_an_installable_package(tmp_path: Path) -> None:
    gym_llm("init", "demo", "--tools", cwd=tmp_path)
    project = tmp_path / "gym_llm_demo"
    assert (project / "pyproject.toml").is_file()
    site = tmp_path / "site"
    run(
        sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
        "--target", str(site), str(project), cwd=tmp_path,
    )  # fmt: skip
    installed = {"PYTHONPATH": str(site)}
    # the package's entry point registers the env: no import of the package is needed
    checked = gym_llm(
        "check", "llm/Demo-v0", "--episodes", "50", "--fuzz-examples", "10", cwd=tmp_path, env=installed
    )
    assert "all checks passed" in checked.stdout
    run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=project, env=installed)


def test_init_refuses_bad_names_and_existing_envs(tmp_path: Path) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "gym_llm.cli", "init", "Bad-Name"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 1 and "lowercase letters" in bad.stderr and "Traceback" not in bad.stderr
    gym_llm("init", "demo", cwd=tmp_path)
    again = subprocess.run(
        [sys.executable, "-m", "gym_llm.cli", "init", "demo"], capture_output=True, text=True, cwd=tmp_path
    )
    assert again.returncode == 1 and "exists already" in again.stderr
