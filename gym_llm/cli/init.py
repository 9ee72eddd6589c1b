"""``gym-llm init NAME``: a new env from a template (env module, example data, README, test)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gym_llm.cli.common import CLIError
from gym_llm.scaffold import create_env, env_id_for, is_gym_llm_checkout


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser("init", help="create a new env from a template")
    parser.add_argument("name", help="the env's folder name, e.g. demo (its id becomes llm/Demo-v0)")
    parser.add_argument("--tools", action="store_true", help="an example tool and a multi-turn tool loop")
    parser.add_argument("--judge", action="store_true", help="grade with an LLM judge")
    parser.add_argument("--multi-turn", action="store_true", help="a simulated user answers the model")
    parser.add_argument(
        "--package",
        action="store_true",
        help="make a pip-installable package (the default outside a gym_llm checkout)",
    )
    parser.add_argument("--dir", default=".", help="where: a gym_llm checkout, or a folder (default: here)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    where = Path(args.dir)
    if not where.is_dir():
        raise CLIError(f"--dir {where}: no such folder")
    package = args.package or not is_gym_llm_checkout(where)
    try:
        made = create_env(
            args.name, where, tools=args.tools, judge=args.judge, multi_turn=args.multi_turn, package=package
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    env_id = env_id_for(args.name)
    for path in made:
        print(f"created {path}")
    judge = ' --env-kwargs \'{"judge": {"model": "...", "base_url": "..."}}\'' if args.judge else ""
    if package:
        print(f"next: pip install -e {made[0].parent.parent}  (registers {env_id} with gym_llm)")
    print(f"then: gym-llm check {env_id}{judge}  and  pytest {made[-2] if package else made[-1]}")
    return 0
