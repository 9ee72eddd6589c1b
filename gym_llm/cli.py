"""The ``gym-llm`` command: ``list``, ``collect``, ``verify``.

Bad input (an unknown env, a missing file, a bad row or flag) gets one message naming the
problem and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium

import gym_llm
from gym_llm.policies import make_policy
from gym_llm.rollouts import collect
from gym_llm.tasks import TaskError, read_jsonl


class CLIError(Exception):
    """A user error: printed as one line, exit status 1."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (CLIError, TaskError, ValueError, OSError, RuntimeError) as exc:
        print(f"gym-llm: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("gym-llm: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gym-llm", description="Gymnasium environments for LLM RL.")
    parser.add_argument("--version", action="version", version=f"gym-llm {gym_llm.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    listing = commands.add_parser("list", help="list the registered envs")
    listing.set_defaults(run=_list)

    col = commands.add_parser("collect", help="collect verified rollouts as JSONL")
    col.add_argument("env_id", help="env id, e.g. llm/Weather-v0 (see `gym-llm list`)")
    col.add_argument("-o", "--output", required=True, help="output JSONL file")
    col.add_argument("--input", help="task rows (JSONL) instead of the env's bundled tasks")
    col.add_argument("--limit", type=_positive, help="use only the first N tasks")
    col.add_argument("--num-repeats", type=_positive, default=1, help="rollouts per task (default 1)")
    col.add_argument("--concurrency", type=_positive, default=32, help="episodes in flight (default 32)")
    col.add_argument("--model", help="model name; without it the reference policy plays offline")
    col.add_argument("--base-url", help="OpenAI-compatible base URL (default https://api.openai.com/v1)")
    col.add_argument("--api", choices=["responses", "chat"], default="responses", help="API to call")
    col.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    col.add_argument("--temperature", type=float, help="override the rows' temperature")
    col.add_argument("--max-output-tokens", type=_positive, help="override the rows' max_output_tokens")
    col.add_argument("--max-turns", type=_positive, help="override the env's turn budget")
    col.add_argument(
        "--env-kwargs",
        type=_json_object,
        default={},
        metavar="JSON",
        help='keyword arguments for the env, e.g. \'{"judge": {"model": "m", "base_url": "http://..."}}\'',
    )
    col.add_argument("--resume", action="store_true", help="skip rollouts already in the output file")
    col.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the episodes on Ray workers: a local Ray, or the cluster at ADDRESS (needs gym-llm[ray])",
    )
    col.add_argument(
        "--ray-workers", type=_positive, help="Ray workers to shard over (default: the cluster's CPUs)"
    )
    col.add_argument("--no-progress", action="store_true", help="no progress bar")
    col.set_defaults(run=_collect)

    ver = commands.add_parser("verify", help="re-verify recorded rollouts and compare with their rewards")
    ver.add_argument("rollouts", help="rollouts JSONL file")
    ver.add_argument("--env", help="env id (default: each row's env_id)")
    ver.add_argument("-o", "--output", help="write the re-verified rows here")
    ver.set_defaults(run=_verify)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def _check_env_id(env_id: str) -> None:
    if env_id not in gymnasium.registry:
        known = ", ".join(gym_llm.env_ids())
        raise CLIError(f"unknown env {env_id!r}; registered envs: {known}")


def _list(args: argparse.Namespace) -> int:
    for env_id in gym_llm.env_ids():
        entry = gymnasium.registry[env_id].entry_point
        print(f"{env_id:34} {entry}")
    return 0


def _collect(args: argparse.Namespace) -> int:
    _check_env_id(args.env_id)
    if args.model is None and (args.base_url or args.api_key):
        raise CLIError("--base-url/--api-key need --model")
    if args.model is None:
        print("No --model given: playing the reference solution (the task's ground truth), offline.")
    api_key = args.api_key or os.environ.get("OPENAI_API_KEY")
    if args.model and not args.base_url and not api_key:
        raise CLIError("calling api.openai.com needs an API key: set OPENAI_API_KEY or pass --api-key")
    policy = make_policy(args.model, base_url=args.base_url, api_key=api_key, api=args.api)
    overrides = {
        key: value
        for key, value in (("temperature", args.temperature), ("max_output_tokens", args.max_output_tokens))
        if value is not None
    }
    env_kwargs = dict(args.env_kwargs)
    if args.max_turns:
        env_kwargs["max_turns"] = args.max_turns
    result = asyncio.run(
        collect(
            args.env_id,
            args.output,
            policy=policy,
            tasks=args.input,
            env_kwargs=env_kwargs,
            limit=args.limit,
            num_repeats=args.num_repeats,
            concurrency=args.concurrency,
            resume=args.resume,
            overrides=overrides,
            progress=not args.no_progress and sys.stderr.isatty(),
            ray_address=args.ray,
            ray_workers=args.ray_workers,
        )
    )
    _print_summary(result)
    summary = result.summary
    if result.written and summary["num_masked"] == summary["num_rollouts"]:
        first = next(iter(read_jsonl(result.output)), {})
        raise CLIError(f"every rollout failed to reach the model; first error: {first.get('failure_reason')}")
    return 0


def _print_summary(result: Any) -> None:
    s = result.summary
    skipped = f" ({result.skipped} already done)" if result.skipped else ""
    print(
        f"Collected {result.written} rollouts{skipped} in {result.seconds:.2f} s "
        f"({result.rollouts_per_second:.1f} rollouts/s) -> {result.output}"
    )
    line = f"mean reward {s['mean_reward']:.4f} over {s['num_rollouts'] - s['num_masked']} rollouts"
    if s["num_masked"]:
        line += f"; {s['num_masked']} masked (model errors)"
    extras = [f"{key} {value:.4f}" for key, value in s.items() if key.startswith(("pass@", "majority@"))]
    print("; ".join([line, *extras]))
    if s["failure_kinds"]:
        print("failure kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(s["failure_kinds"].items())))
    print(f"metrics: {result.metrics_path}")


def _verify(args: argparse.Namespace) -> int:
    rows = read_jsonl(args.rollouts)
    if not rows:
        raise CLIError(f"{args.rollouts}: no rows")
    if args.env:
        _check_env_id(args.env)
    agree = 0
    out = open(args.output, "w", encoding="utf-8") if args.output else None
    try:
        for number, row in enumerate(rows, 1):
            env_id = args.env or row.get("env_id")
            if not env_id:
                raise CLIError(f"{args.rollouts} line {number}: no env_id in the row; pass --env")
            _check_env_id(env_id)
            try:
                verdict = gym_llm.verify(env_id, row)
            except TaskError as exc:
                raise CLIError(f"{args.rollouts} line {number}: {exc}") from None
            agree += verdict.reward == row.get("reward")
            if out is not None:
                out.write(
                    json.dumps({**row, "reward": verdict.reward, "recorded_reward": row.get("reward")}) + "\n"
                )
    finally:
        if out is not None:
            out.close()
    total = len(rows)
    print(f"re-verified {total} rollouts: {agree} agree with the recorded reward ({agree / total:.1%})")
    return 0 if agree == total else 3


if __name__ == "__main__":
    sys.exit(main())
