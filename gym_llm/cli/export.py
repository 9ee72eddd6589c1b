"""``gym-llm export``: rollouts to a HuggingFace dataset (a directory, parquet or JSONL, the Hub)."""

from __future__ import annotations

import argparse
from typing import Any

from gym_llm.cli.common import CLIError

# the names gym_llm.export has (it needs pyarrow and datasets, imported only when the command runs)
FORMATS = ("raw", "sft", "dpo", "prompts", "verl")
KINDS = ("disk", "parquet", "jsonl")
PAIRS = ("best-worst", "all")


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser(
        "export",
        help="export rollouts as a HuggingFace dataset (raw, SFT, DPO, prompts, VeRL)",
        description="Export rollouts (JSONL) as a HuggingFace dataset. The output kind follows the -o "
        "suffix: .parquet, .jsonl, anything else a save_to_disk directory.",
    )
    parser.add_argument("rollouts", help="rollouts file (JSONL), e.g. from `gym-llm collect`")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="raw",
        help="raw: every field; sft: chat messages + tools; dpo: chosen/rejected pairs of a task's "
        "repeats; prompts: one prompt per task with the task as JSON (GRPO); verl: VeRL's parquet "
        "schema (default raw)",
    )
    parser.add_argument("-o", "--output", help="output directory (save_to_disk), .parquet or .jsonl file")
    parser.add_argument("--to", choices=KINDS, help="output kind, instead of guessing it from the suffix")
    parser.add_argument(
        "--min-reward", type=float, metavar="R", help="raw/sft: keep only rollouts with reward >= R"
    )
    parser.add_argument(
        "--pairs",
        choices=PAIRS,
        default="best-worst",
        help="dpo: one pair per task (its best and worst rollouts) or every pair with different rewards",
    )
    parser.add_argument(
        "--split", default="train", help="verl: extra_info.split; also the Hub split (default train)"
    )
    parser.add_argument("--push-to-hub", metavar="REPO", help="also push the dataset to this Hub repository")
    parser.add_argument("--private", action="store_true", help="make a new Hub repository private")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    if args.output is None and args.push_to_hub is None:
        raise CLIError("give an output with -o, or a Hub repository with --push-to-hub")
    try:
        from gym_llm.export import export
    except ImportError as exc:
        raise CLIError(
            f"gym-llm export needs pyarrow and datasets: pip install 'gym-llm[export]' ({exc})"
        ) from None
    result = export(
        args.rollouts,
        args.output,
        args.format,
        to=args.to,
        min_reward=args.min_reward,
        pairs=args.pairs,
        split=args.split,
        push_to_hub=args.push_to_hub,
        private=args.private or None,
    )
    where = [f"{result.output} ({result.kind})"] if result.output is not None else []
    if result.repo_id:
        where.append(f"hub:{result.repo_id}")
    print(
        f"Exported {result.rows} {result.format} rows from {result.rollouts} rollouts in "
        f"{result.seconds:.2f} s -> {', '.join(where)}"
    )
    if result.skipped:
        print("skipped: " + ", ".join(f"{why}={n}" for why, n in sorted(result.skipped.items())))
    if result.json_columns:
        columns = ", ".join(result.json_columns)
        print(f"columns stored as JSON strings (their types differ between rows): {columns}")
    return 0
