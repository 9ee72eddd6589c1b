"""The ``gym-llm`` command. Each sub-command lives in its own module of this package and adds its
parser with ``add_parser(commands)``; its handler is ``run(args) -> exit status``.

Bad input (an unknown env, a missing file, a bad row or flag) gets one message naming the
problem and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import gym_llm
from gym_llm.cli import check, collect, export, init, list_envs, serve, verify, view
from gym_llm.cli.common import CLIError, import_modules
from gym_llm.tasks import TaskError

# in the order `gym-llm --help` lists them
COMMANDS = (list_envs, collect, verify, check, export, view, serve, init)

__all__ = ["CLIError", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``gym-llm`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        import_modules(args.imports)
        return args.run(args)
    except (CLIError, TaskError, ValueError, OSError, RuntimeError) as exc:
        print(f"gym-llm: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gym-llm: interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gym-llm", description="Gymnasium environments for LLM RL.")
    parser.add_argument("--version", action="version", version=f"gym-llm {gym_llm.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    for sub in commands.choices.values():
        sub.add_argument(
            "--import",
            dest="imports",
            action="append",
            metavar="MODULE",
            help="import MODULE first, for envs it registers (repeatable)",
        )
    return parser
