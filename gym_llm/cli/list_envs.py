"""``gym-llm list``: the registered envs, with what each does, its tools and its bundled task count."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

import gym_llm
from gym_llm.registry import make_llm_env


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser("list", help="list the registered envs")
    parser.add_argument("--ids", action="store_true", help="print the ids only")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    for env_id in gym_llm.env_ids():
        if args.ids:
            print(env_id)
            continue
        print(f"{env_id}: {describe(env_id)}")
    return 0


MAX_TOOLS = 6


def summary(env_class: type) -> str:
    """The first paragraph of the env class's own docstring, else of its module's."""
    doc = env_class.__dict__.get("__doc__") or inspect.getdoc(inspect.getmodule(env_class)) or ""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())


def describe(env_id: str) -> str:
    """One line on an env: its docstring's summary, its tools and the number of bundled tasks."""
    try:
        env = make_llm_env(env_id)
    except Exception as exc:  # one env that cannot be built must not hide the others
        return f"cannot be built here ({type(exc).__name__}: {exc})"
    try:
        names = list(env.tools)
        tools = ", ".join(names[:MAX_TOOLS]) + (f", … ({len(names)} tools)" if len(names) > MAX_TOOLS else "")
        return f"{summary(type(env))} [tools: {tools or 'none'}; {len(env.tasks)} tasks]"
    finally:
        env.close()
