"""The export formats: what each makes of the rollout rows, as records of one fixed Arrow schema.

Every format reads the rows as a stream and yields its records one by one; :class:`Counts` tells
what was read, written and skipped (and why). Masked rollouts (``mask_sample``: the failure lay
outside the model's answer) never become training data: ``sft`` and ``dpo`` skip them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa

from gym_llm import fastjson
from gym_llm.export import raw
from gym_llm.export.messages import (
    MESSAGES,
    chat_tools_json,
    hf_messages,
    output_items,
    prompt_items,
    task_row,
)
from gym_llm.export.source import RolloutSource, Row, iter_lines, read_line
from gym_llm.export.verl_rows import VERL_SCHEMA, verl_row

FORMATS = ("raw", "sft", "dpo", "prompts", "verl")
PAIRS = ("best-worst", "all")


class ExportError(ValueError):
    """Rollouts or options that cannot make the asked format; the message names the problem."""


class Counts(Counter[str]):
    """What an export read and wrote: ``rollouts`` read, ``rows`` written, ``skipped_<why>``."""

    def skipped(self) -> dict[str, int]:
        """The skipped rollouts (or tasks, pairs) by reason."""
        prefix = "skipped_"
        return {key.removeprefix(prefix): n for key, n in self.items() if key.startswith(prefix) and n}


@dataclass(frozen=True)
class Options:
    """What the formats take.

    Attributes:
        min_reward: ``raw``/``sft``: keep only rollouts with at least this reward.
        pairs: ``dpo``: ``"best-worst"`` (one pair per task: its best and worst rollouts) or
            ``"all"`` (every two rollouts of a task with different rewards).
        split: ``verl``: the ``extra_info.split`` value.
    """

    min_reward: float | None = None
    pairs: str = "best-worst"
    split: str = "train"


@dataclass
class Plan:
    """A format applied to a source: the records' schema and the records (made lazily)."""

    schema: pa.Schema
    records: Iterator[Row]
    counts: Counts


def plan(source: RolloutSource, format: str, options: Options) -> Plan:
    """The records of ``format`` for the rollouts of ``source``.

    Raises:
        ExportError: An unknown format, or an option the format does not take.
    """
    if format not in FORMATS:
        raise ExportError(f"unknown format {format!r}; formats: {', '.join(FORMATS)}")
    if options.min_reward is not None and format not in ("raw", "sft"):
        raise ExportError(f"min_reward applies to the raw and sft formats, not {format}")
    if options.pairs not in PAIRS:
        raise ExportError(f"unknown pairs {options.pairs!r}; choose one of {', '.join(PAIRS)}")
    counts = Counts()
    if format == "raw":
        kept = _kept(source, options, counts=Counts())
        raw_schema = raw.infer_schema(kept)
        records = raw.encode_rows(_kept(source, options, counts), raw_schema)
        return Plan(raw_schema.schema, _counted(records, counts), counts)
    make: Callable[[RolloutSource, Options, Counts], Iterator[Row]] = {
        "sft": _sft,
        "dpo": _dpo,
        "prompts": _prompts,
        "verl": _verl,
    }[format]
    return Plan(SCHEMAS[format], _counted(make(source, options, counts), counts), counts)


SCHEMAS = {
    "sft": pa.schema(
        [
            ("messages", MESSAGES),
            ("tools", pa.string()),
            ("env_id", pa.string()),
            ("task_index", pa.int64()),
            ("repeat_index", pa.int64()),
            ("reward", pa.float64()),
        ]
    ),
    "dpo": pa.schema(
        [
            ("prompt", MESSAGES),
            ("chosen", MESSAGES),
            ("rejected", MESSAGES),
            ("tools", pa.string()),
            ("env_id", pa.string()),
            ("task_index", pa.int64()),
            ("chosen_reward", pa.float64()),
            ("rejected_reward", pa.float64()),
            ("chosen_repeat_index", pa.int64()),
            ("rejected_repeat_index", pa.int64()),
        ]
    ),
    "prompts": pa.schema(
        [
            ("prompt", MESSAGES),
            ("tools", pa.string()),
            ("env_id", pa.string()),
            ("task_index", pa.int64()),
            ("task", pa.string()),
        ]
    ),
    "verl": VERL_SCHEMA,
}


def task_key(row: Row) -> tuple[Any, Any, bytes]:
    """What identifies a rollout's task: env, task index and a digest of the request."""
    params = orjson.dumps(row.get("responses_create_params"), option=orjson.OPT_SORT_KEYS)
    return row.get("env_id"), row.get("task_index"), hashlib.blake2b(params, digest_size=16).digest()


# --------------------------------------------------------------------- formats
def _kept(source: RolloutSource, options: Options, counts: Counts) -> Iterator[Row]:
    """The rollouts, less those under ``min_reward``."""
    for row in source.rows():
        counts["rollouts"] += 1
        if options.min_reward is not None and not _reward(row) >= options.min_reward:
            counts["skipped_below_min_reward"] += 1
            continue
        yield row


def _counted(records: Iterator[Row], counts: Counts) -> Iterator[Row]:
    for record in records:
        counts["rows"] += 1
        yield record


def _sft(source: RolloutSource, options: Options, counts: Counts) -> Iterator[Row]:
    for row in _kept(source, options, counts):
        if row.get("mask_sample"):
            counts["skipped_masked"] += 1
            continue
        output = output_items(row)
        if not output:
            counts["skipped_no_output"] += 1
            continue
        yield {
            "messages": hf_messages(_prompt(row, counts["rollouts"]) + output),
            "tools": chat_tools_json(row),
            "env_id": row.get("env_id"),
            "task_index": row.get("task_index"),
            "repeat_index": row.get("repeat_index"),
            "reward": _reward(row),
        }


def _prompts(source: RolloutSource, options: Options, counts: Counts) -> Iterator[Row]:
    for number, row in _first_of_each_task(source, counts):
        yield {
            "prompt": hf_messages(_prompt(row, number)),
            "tools": chat_tools_json(row),
            "env_id": row.get("env_id"),
            "task_index": row.get("task_index"),
            "task": fastjson.dumps(task_row(row)).decode(),
        }


def _verl(source: RolloutSource, options: Options, counts: Counts) -> Iterator[Row]:
    for index, (number, row) in enumerate(_first_of_each_task(source, counts)):
        prompt = hf_messages(_prompt(row, number))
        if any(m["role"] not in ("system", "user", "assistant") or "tool_calls" in m for m in prompt):
            raise ExportError(
                f"rollout {number}: VeRL prompts are role/content messages, and this task's input holds "
                "tool calls or tool outputs"
            )
        env_id, task = str(row.get("env_id")), task_row(row)
        yield verl_row(env_id, row.get("task_index"), task, prompt, index=index, split=options.split)


@dataclass(slots=True)
class _Entry:
    """One scored rollout of a task, held by where it is in the file (or the row itself)."""

    reward: float
    order: int
    repeat_index: Any
    offset: int = 0
    length: int = 0
    row: Row | None = None


def _dpo(source: RolloutSource, options: Options, counts: Counts) -> Iterator[Row]:
    groups = _scored_groups(source, counts)
    for entries in groups.values():
        # best first; among equal rewards the earlier rollout first
        entries.sort(key=lambda e: (-e.reward, e.order))
        if len(entries) < 2:
            counts["skipped_single_rollout_tasks"] += 1
            continue
        if entries[0].reward == entries[-1].reward:
            counts["skipped_tied_tasks"] += 1
            continue
        if options.pairs == "best-worst":
            pairs = [(entries[0], entries[-1])]
        else:
            pairs = [(a, b) for i, a in enumerate(entries) for b in entries[i + 1 :] if a.reward > b.reward]
            counts["skipped_tied_pairs"] += len(entries) * (len(entries) - 1) // 2 - len(pairs)
        for chosen, rejected in pairs:
            yield _pair(_load(source, chosen), _load(source, rejected), chosen, rejected)


def _scored_groups(source: RolloutSource, counts: Counts) -> dict[Any, list[_Entry]]:
    """The unmasked, scored rollouts of each task, in the order tasks first appear."""
    groups: dict[Any, list[_Entry]] = {}
    if source.path is not None:
        lines = ((line.row, line.offset, line.length) for line in iter_lines(source.path))
    else:
        lines = ((row, 0, 0) for row in source.rows())
    for order, (row, offset, length) in enumerate(lines):
        counts["rollouts"] += 1
        if row.get("mask_sample"):
            counts["skipped_masked"] += 1
            continue
        reward = _reward(row)
        if reward != reward:  # NaN: no reward recorded
            counts["skipped_unscored"] += 1
            continue
        entry = _Entry(reward, order, row.get("repeat_index"), offset, length)
        if source.path is None:
            entry.row = row
        groups.setdefault(task_key(row), []).append(entry)
    return groups


def _load(source: RolloutSource, entry: _Entry) -> Row:
    if entry.row is not None:
        return entry.row
    assert source.path is not None
    return read_line(source.path, entry.offset, entry.length)


def _pair(chosen: Row, rejected: Row, chosen_entry: _Entry, rejected_entry: _Entry) -> Row:
    return {
        "prompt": hf_messages(_prompt(chosen, chosen_entry.order + 1)),
        "chosen": hf_messages(output_items(chosen)),
        "rejected": hf_messages(output_items(rejected)),
        "tools": chat_tools_json(chosen),
        "env_id": chosen.get("env_id"),
        "task_index": chosen.get("task_index"),
        "chosen_reward": chosen_entry.reward,
        "rejected_reward": rejected_entry.reward,
        "chosen_repeat_index": chosen_entry.repeat_index,
        "rejected_repeat_index": rejected_entry.repeat_index,
    }


# --------------------------------------------------------------------- helpers
def _first_of_each_task(source: RolloutSource, counts: Counts) -> Iterator[tuple[int, Row]]:
    """Each task once (its first rollout), with the rollout's number; repeats are counted."""
    seen: set[tuple[Any, Any, bytes]] = set()
    for number, row in enumerate(source.rows(), 1):
        counts["rollouts"] += 1
        key = task_key(row)
        if key in seen:
            counts["skipped_repeats"] += 1
            continue
        seen.add(key)
        yield number, row


def _prompt(row: Row, number: int) -> list[dict[str, Any]]:
    try:
        return prompt_items(row)
    except (ValueError, TypeError) as exc:
        raise ExportError(f"rollout {number}: {exc}") from None


def _reward(row: Row) -> float:
    """The row's reward as a float (NaN when it has none)."""
    reward = row.get("reward")
    return float(reward) if isinstance(reward, (int, float)) else float("nan")
