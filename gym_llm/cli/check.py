"""``gym-llm check ENV_ID``: the author's conformance checks, one line each."""

from __future__ import annotations

import argparse
from typing import Any

from gym_llm.check import check
from gym_llm.cli.common import check_env_id, json_object, positive_int


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser("check", help="run the conformance checks on an env (for env authors)")
    parser.add_argument("env_id", help="env id, e.g. llm/Weather-v0, or MODULE:ID for an env of your own")
    parser.add_argument(
        "--episodes", type=positive_int, default=1000, help="episodes of the boundedness check (default 1000)"
    )
    parser.add_argument("--fuzz-examples", type=positive_int, default=200, help="fuzzed episodes")
    parser.add_argument("--only", action="append", metavar="CHECK", help="run only this check (repeatable)")
    parser.add_argument(
        "--env-kwargs", type=json_object, default={}, metavar="JSON", help="keyword arguments for the env"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    check_env_id(args.env_id)
    report = check(
        args.env_id,
        env_kwargs=args.env_kwargs,
        episodes=args.episodes,
        fuzz_examples=args.fuzz_examples,
        only=args.only,
    )
    for result in report.results:
        print(result, flush=True)
    failed = [result.name for result in report.results if not result.passed]
    print(f"{args.env_id}: {'all checks passed' if not failed else 'FAILED: ' + ', '.join(failed)}")
    return 0 if not failed else 1
