"""``gym-llm verify``: re-score recorded rollouts and compare with their recorded rewards.

Masked rows (``mask_sample: true``: the model, judge or sandbox failed, not the answer) carry no
reward to reproduce: they are counted apart, not compared. A row whose re-verification itself fails
that way (e.g. the judge cannot be reached now) is counted apart too, as not verified.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import gym_llm
from gym_llm import fastjson
from gym_llm.cli.common import CLIError, check_env_id
from gym_llm.failures import is_masked
from gym_llm.rollouts.output import iter_lines
from gym_llm.tasks import TaskError

DISAGREEMENT_EXIT = 3


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    ver = commands.add_parser("verify", help="re-verify recorded rollouts and compare with their rewards")
    ver.add_argument("rollouts", help="rollouts JSONL file")
    ver.add_argument("--env", help="env id (default: each row's env_id)")
    ver.add_argument("-o", "--output", help="write the re-verified rows here")
    ver.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    if args.env:
        check_env_id(args.env)
    counts = {"rows": 0, "agree": 0, "masked": 0, "unverified": 0}
    checked: set[str] = set()
    out = open(args.output, "w", encoding="utf-8") if args.output else None
    try:
        for number, line, _ in iter_lines(args.rollouts):
            row = _parse(args.rollouts, number, line)
            counts["rows"] += 1
            if row.get("mask_sample"):
                counts["masked"] += 1
                if out is not None:
                    out.write(json.dumps(row) + "\n")
                continue
            env_id = args.env or row.get("env_id")
            if not env_id:
                raise CLIError(f"{args.rollouts} line {number}: no env_id in the row; pass --env")
            if env_id not in checked:
                check_env_id(env_id)
                checked.add(env_id)
            try:
                verdict = gym_llm.verify(env_id, row)
            except TaskError as exc:
                raise CLIError(f"{args.rollouts} line {number}: {exc}") from None
            if is_masked(verdict.failure_kind):
                counts["unverified"] += 1
            else:
                counts["agree"] += verdict.reward == row.get("reward")
            if out is not None:
                out.write(
                    json.dumps({**row, "reward": verdict.reward, "recorded_reward": row.get("reward")}) + "\n"
                )
    finally:
        if out is not None:
            out.close()
    if not counts["rows"]:
        raise CLIError(f"{args.rollouts}: no rows")
    print(_report(counts))
    compared = counts["rows"] - counts["masked"] - counts["unverified"]
    return 0 if counts["agree"] == compared else DISAGREEMENT_EXIT


def _parse(path: str, number: int, line: bytes) -> dict[str, Any]:
    try:
        row = fastjson.loads(line)
    except fastjson.JSONDecodeError:
        raise CLIError(f"{path} line {number}: not valid JSON") from None
    if not isinstance(row, dict):
        raise CLIError(f"{path} line {number}: expected a JSON object")
    return row


def _report(counts: dict[str, int]) -> str:
    """One line, e.g. ``re-verified 10 of 12 rollouts: 10 agree with the recorded reward (100.0%); …``."""
    compared = counts["rows"] - counts["masked"] - counts["unverified"]
    share = f" ({counts['agree'] / compared:.1%})" if compared else ""
    text = f"re-verified {compared} of {counts['rows']} rollouts: "
    text += f"{counts['agree']} agree with the recorded reward{share}"
    if counts["masked"]:
        text += f"; {counts['masked']} masked (mask_sample), not compared"
    if counts["unverified"]:
        text += f"; {counts['unverified']} could not be verified now (judge, sandbox or verify failed)"
    return text
