"""``gym-llm collect``: verified rollouts of an env as JSONL, with a metrics summary."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from gym_llm.cli.common import CLIError, check_env_id, json_object, positive_int
from gym_llm.policies import make_policy
from gym_llm.policies.http import ModelCallError
from gym_llm.policies.token_ids import TokenIdsUnavailable
from gym_llm.registry import make_llm_env
from gym_llm.rollouts import CollectError, collect


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    col = commands.add_parser("collect", help="collect verified rollouts as JSONL")
    col.add_argument("env_id", help="env id, e.g. llm/Weather-v0 (see `gym-llm list`)")
    col.add_argument("-o", "--output", required=True, help="output JSONL file")
    col.add_argument("--input", help="task rows (JSONL) instead of the env's bundled tasks")
    col.add_argument("--limit", type=positive_int, help="use only the first N tasks")
    col.add_argument("--num-repeats", type=positive_int, default=1, help="rollouts per task (default 1)")
    col.add_argument("--concurrency", type=positive_int, default=32, help="episodes in flight (default 32)")
    col.add_argument("--model", help="model name; without it the reference policy plays offline")
    col.add_argument("--base-url", help="OpenAI-compatible base URL (default https://api.openai.com/v1)")
    col.add_argument("--api", choices=["responses", "chat"], default="responses", help="API to call")
    col.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    col.add_argument("--temperature", type=float, help="override the rows' temperature")
    col.add_argument("--max-output-tokens", type=positive_int, help="override the rows' max_output_tokens")
    col.add_argument("--max-turns", type=positive_int, help="override the env's turn budget")
    col.add_argument(
        "--env-kwargs",
        type=json_object,
        default={},
        metavar="JSON",
        help='keyword arguments for the env, e.g. \'{"judge": {"model": "m", "base_url": "http://..."}}\'',
    )
    col.add_argument(
        "--resume",
        action="store_true",
        help="go on with the output file of the same run: skip its rollouts, play its masked ones again",
    )
    col.add_argument(
        "--keep-failed",
        action="store_true",
        help="with --resume: keep masked rollouts instead of replaying them",
    )
    col.add_argument("--overwrite", action="store_true", help="replace the output file if it exists")
    col.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run the episodes on Ray workers: a local Ray, or the cluster at ADDRESS "
        '(needs the ray extra: pip install -e ".[ray]")',
    )
    col.add_argument(
        "--ray-workers", type=positive_int, help="Ray workers to shard over (default: the cluster's CPUs)"
    )
    col.add_argument(
        "--return-token-ids",
        action="store_true",
        help="keep prompt/generation token ids and log probs on the output items (vLLM, NeMo Gym servers)",
    )
    col.add_argument(
        "--no-progress", action="store_true", help="no progress (a bar on a terminal, else periodic lines)"
    )
    col.add_argument(
        "--progress-interval",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="seconds between progress lines when stderr is not a terminal (default 10)",
    )
    col.set_defaults(run=run)


def _seconds(text: str) -> float:
    """An ``argparse`` type: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text}")
    return value


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    check_env_id(args.env_id)
    if args.model is None and (args.base_url or args.api_key):
        raise CLIError("--base-url/--api-key need --model")
    if args.model is None:
        print("No --model given: playing the reference solution (the task's ground truth), offline.")
    api_key = args.api_key or os.environ.get("OPENAI_API_KEY")
    if args.model and not args.base_url and not api_key:
        raise CLIError("calling api.openai.com needs an API key: set OPENAI_API_KEY or pass --api-key")
    if args.return_token_ids and args.model is None:
        raise CLIError("--return-token-ids needs --model: the reference policy generates no tokens")
    policy = make_policy(
        args.model,
        base_url=args.base_url,
        api_key=api_key,
        api=args.api,
        return_token_ids=args.return_token_ids,
    )
    overrides = {
        key: value
        for key, value in (("temperature", args.temperature), ("max_output_tokens", args.max_output_tokens))
        if value is not None
    }
    env_kwargs = dict(args.env_kwargs)
    if args.max_turns:
        env_kwargs["max_turns"] = args.max_turns
    if args.return_token_ids:  # the first call tells whether the server can: stop there if not
        try:
            asyncio.run(_first_call(policy, args.env_id, env_kwargs, args.input, overrides))
        except TokenIdsUnavailable as exc:  # it says what is missing
            raise CLIError(str(exc)) from None
        except ModelCallError as exc:  # e.g. HTTP 422: a server that refuses the token-id fields
            raise CLIError(
                f"--return-token-ids: the first request, which asks for token ids, failed, so this server "
                f"cannot return them (see docs/servers.md): {exc}"
            ) from None
    if args.keep_failed and not args.resume:
        raise CLIError("--keep-failed goes with --resume")
    if args.resume and args.overwrite:
        raise CLIError("--resume and --overwrite exclude each other")
    _show_engine_warnings()
    try:
        result = collect(
            args.env_id,
            args.output,
            policy=policy,
            tasks=args.input,
            env_kwargs=env_kwargs,
            limit=args.limit,
            num_repeats=args.num_repeats,
            concurrency=args.concurrency,
            resume=args.resume,
            overwrite=args.overwrite,
            keep_failed=args.keep_failed,
            overrides=overrides,
            progress=not args.no_progress,
            progress_interval=args.progress_interval,
            ray_address=args.ray,
            ray_workers=args.ray_workers,
        )
    except CollectError as exc:
        if exc.result is not None:  # the run stopped after writing some: say what is there
            print_summary(exc.result)
        raise CLIError(str(exc)) from None
    except KeyboardInterrupt:
        print(f"gym-llm: stopped; what finished is in {args.output}: add --resume to go on", file=sys.stderr)
        raise
    print_summary(result)
    return 0


def _show_engine_warnings() -> None:
    """Show the engine's warnings (a lost Ray worker) as one ``gym-llm:`` line each on stderr."""
    logger = logging.getLogger("gym_llm.rollouts")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("gym-llm: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False


async def _first_call(policy: Any, env_id: str, env_kwargs: dict, tasks: Any, overrides: dict) -> None:
    """One model call on the first task; the policy raises if the reply lacks token ids."""

    kwargs = {**env_kwargs, **({"tasks": tasks} if tasks is not None else {})}
    env = make_llm_env(env_id, **kwargs)
    try:
        obs, info = await env.areset(options={"task_index": 0})
        await policy(obs, {**info["params"], **overrides})
    finally:
        env.close()
        await policy.aclose()


def print_summary(result: Any) -> None:
    """What a run did, its metrics, and where they are."""
    s = result.summary
    skipped = f" ({result.skipped} already done)" if result.skipped else ""
    if result.retried:
        skipped = skipped[:-1] + f", {result.retried} masked ones played again)"
    print(
        f"Collected {result.written} rollouts{skipped} in {result.seconds:.2f} s "
        f"({result.rollouts_per_second:.1f} rollouts/s) -> {result.output}"
    )
    line = f"mean reward {s['mean_reward']:.4f} over {s['num_rollouts'] - s['num_masked']} rollouts"
    if s["num_masked"]:
        line += f"; {s['num_masked']} masked (failed outside the model's answer; --resume plays them again)"
    extras = [f"{key} {value:.4f}" for key, value in s.items() if key.startswith(("pass@", "majority@"))]
    print("; ".join([line, *extras]))
    if s["failure_kinds"]:
        print("failure kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(s["failure_kinds"].items())))
    print(f"metrics: {result.metrics_path}")
