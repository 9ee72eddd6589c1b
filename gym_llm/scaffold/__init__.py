"""``gym-llm init``: a new env from a template, ready to run, test and check.

Inside a gym_llm checkout the env becomes a folder of ``envs/`` (registered at once through the
editable install) with a test in ``tests/envs/``; anywhere else it becomes a pip-installable package
whose ``pyproject.toml`` names it in the ``gym_llm.envs`` entry-point group, so ``import gym_llm``
registers it once installed.

Example:
    >>> import tempfile
    >>> created = create_env("demo", tempfile.mkdtemp(), package=True)
    >>> sorted(path.name for path in created)[:3]
    ['README.md', '__init__.py', 'env.py']
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gym_llm.scaffold import templates as t

NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def env_id_for(name: str) -> str:
    """The env id a new env gets: ``demo`` -> ``llm/Demo-v0``, ``my_task`` -> ``llm/MyTask-v0``."""
    return f"llm/{_class_name(name)}-v0"


def is_gym_llm_checkout(path: Path) -> bool:
    """Whether ``path`` is the root of a gym_llm checkout (where envs go in ``envs/``)."""
    setup = path / "setup.cfg"
    return (
        (path / "envs" / "__init__.py").is_file()
        and setup.is_file()
        and "name = gym-llm" in setup.read_text()
    )


def create_env(
    name: str,
    where: str | Path = ".",
    *,
    tools: bool = False,
    judge: bool = False,
    multi_turn: bool = False,
    package: bool | None = None,
) -> list[Path]:
    """Write a new env and return the files made.

    Args:
        name: The env's folder and module name (lowercase letters, digits, ``_``).
        where: A gym_llm checkout (the env goes in ``envs/``), or the folder for a new package.
        tools: Give the env an example tool (a multi-turn tool loop).
        judge: Grade with an LLM judge (after an exact-match shortcut).
        multi_turn: A simulated user answers the model (see :mod:`gym_llm.user_sim`).
        package: Make a pip-installable package; default: only when ``where`` is no checkout.

    Raises:
        ValueError: A bad name, or the env's files exist already.
    """
    if not NAME.match(name):
        raise ValueError(
            f"env name {name!r}: use lowercase letters, digits and underscores, starting with a letter"
        )
    root = Path(where)
    in_repo = is_gym_llm_checkout(root) if package is None else not package
    cls = _class_name(name)
    if in_repo:
        module, env_dir, test_path = f"gym_llm.envs.{name}", root / "envs" / name, root / "tests" / "envs"
        test_path = test_path / f"test_{name}.py"
        extra: dict[Path, str] = {}
    else:
        project = root / f"gym_llm_{name}"
        module, env_dir, test_path = f"gym_llm_{name}", project / f"gym_llm_{name}", project / "tests"
        test_path = test_path / f"test_{name}.py"
        extra = {project / "pyproject.toml": _pyproject(name)}
    if env_dir.exists():
        raise ValueError(f"{env_dir} exists already: pick another name")
    tokens = {
        "__ID__": env_id_for(name),
        "__CLASS__": cls,
        "__MODULE__": module,
        "__TITLE__": cls,
        "__SUMMARY__": _summary(tools, judge, multi_turn),
    }
    files = {
        env_dir / "__init__.py": t.INIT_PY,
        env_dir / "env.py": _env_module(tools, judge, multi_turn),
        env_dir / "data" / "example.jsonl": _rows(tools, multi_turn),
        (env_dir if in_repo else env_dir.parent) / "README.md": _readme(tools, judge, multi_turn),
        test_path: _test(judge, in_repo),
        **extra,
    }
    made = []
    for path, text in files.items():
        for token, value in tokens.items():
            text = text.replace(token, value)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        made.append(path)
    return made


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part)


def _summary(tools: bool, judge: bool, multi_turn: bool) -> str:
    what = "A simulated user's questions" if multi_turn else "A question"
    how = ", looked up with a tool" if tools else ""
    return f"{what}{how}, graded by {'an LLM judge' if judge else 'exact match'}."


def _env_module(tools: bool, judge: bool, multi_turn: bool) -> str:
    names = {"TaskRow", "Verdict"} | ({"ToolError", "tool"} if tools else set())
    base = "UserSimEnv" if multi_turn else ("LLMEnv" if tools else "SingleTurnEnv")
    if not multi_turn:
        names.add(base)
    imports = [
        f"from gym_llm import {', '.join(sorted(names, key=lambda n: (n.islower(), n)))}",
        "from gym_llm import items as it",
    ]
    if judge:
        imports.append("from gym_llm.judge import make_judge, parse_verdict")
    if multi_turn:
        imports.append("from gym_llm.user_sim import UserSimEnv")
    fields = []
    if multi_turn:
        fields += ["    expected_answers: list[str]  # one per user message", "    user_script: list[str]"]
    else:
        fields.append("    expected_answer: str")
    if tools:
        fields += ["    facts: dict[str, str]", "    key: str  # ours: what the reference solution looks up"]
    max_turns = (8 if tools else 6) if multi_turn else (3 if tools else 1)
    header = (
        t.ENV_HEADER.replace("__IMPORTS__", "\n".join(imports) + "\n")
        .replace("__FIELDS__", "\n".join(fields) + "\n")
        .replace("__BASE__", base)
        .replace("__MAX_TURNS__", str(max_turns))
        .replace("__INIT__", t.JUDGE_INIT if judge else "")
    )
    body = (t.TOOL if tools else "") + (t.JUDGED if judge else t.EXACT)
    if multi_turn:
        reference = t.MULTI_REFERENCE_TOOL if tools else t.MULTI_REFERENCE_PLAIN
        body += t.MULTI_VERIFY.replace("__MULTI_REFERENCE__", reference)
    else:
        body += t.SINGLE_VERIFY.replace("__REFERENCE__", t.REFERENCE_TOOL if tools else t.REFERENCE_PLAIN)
    return header + body.rstrip("\n") + "\n" + t.MAYBE_AWAIT


def _rows(tools: bool, multi_turn: bool) -> str:
    facts = {"capital_of_france": "Paris", "capital_of_spain": "Madrid", "capital_of_japan": "Tokyo"}
    rows = []
    for key, (country, capital) in zip(
        facts, [("France", "Paris"), ("Spain", "Madrid"), ("Japan", "Tokyo")], strict=True
    ):
        ask = f"What is the capital of {country}? Answer with the city's name only."
        if tools:
            ask = f"Look up `{key}` with the lookup tool, then answer with the city's name only."
        row: dict = {"responses_create_params": {"input": [{"role": "user", "content": ask}]}}
        if multi_turn:
            row["user_script"] = ["And what is 2 + 2? Answer with the number only."]
            row["expected_answers"] = [capital, "4"]
        else:
            row["expected_answer"] = capital
        if tools:
            row["facts"], row["key"] = facts, key
        rows.append(json.dumps(row))
    return "\n".join(rows) + "\n"


def _readme(tools: bool, judge: bool, multi_turn: bool) -> str:
    fields = "`expected_answers`, `user_script`" if multi_turn else "`expected_answer`"
    if tools:
        fields += ", `facts`, `key`"
    return (
        t.README.replace("__TOOLS_LINE__", "`lookup(key)` over the row's `facts`." if tools else "none.")
        .replace(
            "__REWARD_LINE__",
            ("1.0 iff every reply matches" if multi_turn else "1.0 iff the answer matches")
            + (" (an LLM judge decides what is not an exact match)." if judge else " exactly (case aside)."),
        )
        .replace("__FIELDS_LINE__", fields)
        .replace(
            "__REFERENCE_LINE__",
            ("look the fact up, then " if tools else "") + "answer with the expected text.",
        )
        .replace(
            "__CHECK_HINT__", ' --env-kwargs \'{"judge": {"model": ..., "base_url": ...}}\'' if judge else ""
        )
    )


def _test(judge: bool, in_repo: bool) -> str:
    return (
        t.TEST.replace("__TEST_IMPORTS__", t.TEST_IMPORTS_IN_REPO if in_repo else t.TEST_IMPORTS_PACKAGE)
        .replace("__JUDGE_FIXTURE__", t.JUDGE_FIXTURE if judge else "")
        .replace("__ENV_KWARGS__", ", judge=strict_judge" if judge else "")
        .replace("__CHECK_KWARGS__", ', env_kwargs={"judge": strict_judge}' if judge else "")
    )


def _pyproject(name: str) -> str:
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "gym-llm-{name.replace("_", "-")}"
version = "0.1.0"
description = "A gym_llm environment: {env_id_for(name)}"
requires-python = ">=3.10"
dependencies = ["gym-llm"]

# `import gym_llm` registers the envs named in this module's ENVS once the package is installed
[project.entry-points."gym_llm.envs"]
{name} = "gym_llm_{name}"

[tool.setuptools]
packages = ["gym_llm_{name}"]

[tool.setuptools.package-data]
gym_llm_{name} = ["data/*.jsonl"]
"""
