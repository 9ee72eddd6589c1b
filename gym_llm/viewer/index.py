"""An index of a rollouts file: each row's byte offset and the few fields the list shows.

The index is all the viewer keeps in memory (about 200 bytes a rollout); a rollout opened in the
page is read from its offset. Filtering, sorting and paging run over the index.
"""

from __future__ import annotations

import math
import operator
import os
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_llm import items as it
from gym_llm.export.source import RolloutFileError, iter_lines, read_line

SORT_KEYS = ("index", "env_id", "task_index", "repeat_index", "reward", "num_turns", "failure_kind")
NO_FAILURE = "(none)"
PREVIEW_CHARS = 120


@dataclass(frozen=True, slots=True)
class Summary:
    """What the list shows of one rollout, and where the row is in the file."""

    index: int
    offset: int
    length: int
    env_id: str | None
    task_index: int | None
    repeat_index: int | None
    reward: float | None
    num_turns: int | None
    failure_kind: str | None
    masked: bool
    preview: str

    def as_json(self) -> dict[str, Any]:
        """The fields the page reads (not the file position)."""
        return {
            "index": self.index,
            "env_id": self.env_id,
            "task_index": self.task_index,
            "repeat_index": self.repeat_index,
            "reward": self.reward,
            "num_turns": self.num_turns,
            "failure_kind": self.failure_kind,
            "masked": self.masked,
            "preview": self.preview,
        }


def summarize(index: int, offset: int, length: int, row: Mapping[str, Any]) -> Summary:
    """The list entry of a rollout row."""
    reward = row.get("reward")
    return Summary(
        index=index,
        offset=offset,
        length=length,
        env_id=_str(row.get("env_id")),
        task_index=_int(row.get("task_index")),
        repeat_index=_int(row.get("repeat_index")),
        reward=float(reward) if isinstance(reward, (int, float)) and math.isfinite(reward) else None,
        num_turns=_int(row.get("num_turns")),
        failure_kind=_str(row.get("failure_kind")),
        masked=bool(row.get("mask_sample")),
        preview=_preview(row),
    )


def facets(entries: list[Summary]) -> dict[str, Any]:
    """Counts for the filters.

    Returns:
        ``total`` rollouts, rollouts per env (``envs``) and per failure kind (``failure_kinds``,
        ``"(none)"`` for none), ``masked`` rollouts, and ``reward_min``/``reward_max``.
    """
    rewards = [e.reward for e in entries if e.reward is not None]
    failures = Counter(e.failure_kind or NO_FAILURE for e in entries)
    return {
        "total": len(entries),
        "envs": dict(sorted(Counter(e.env_id or "" for e in entries).items())),
        "failure_kinds": dict(sorted(failures.items())),
        "masked": sum(e.masked for e in entries),
        "reward_min": min(rewards, default=None),
        "reward_max": max(rewards, default=None),
    }


@dataclass(frozen=True)
class Query:
    """Which rollouts to list and in what order.

    Attributes:
        env: Only this env (``""``: all).
        failure: Only this failure kind; ``"(none)"``: rollouts without one (``""``: all).
        masked: ``"all"``, ``"hide"`` (unmasked only) or ``"only"``.
        min_reward: Only rewards at least this (rollouts without a reward are then left out).
        max_reward: Only rewards at most this.
        sort: One of :data:`SORT_KEYS`.
        descending: Largest first.
    """

    env: str = ""
    failure: str = ""
    masked: str = "all"
    min_reward: float | None = None
    max_reward: float | None = None
    sort: str = "index"
    descending: bool = False


class RolloutIndex:
    """The index of a rollouts file, brought up to date with :meth:`refresh` as the file grows.

    Args:
        path: A JSONL rollouts file.

    Raises:
        RolloutFileError: The file is missing or a line is not a JSON object.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.entries: list[Summary] = []
        self._end = 0
        self._next_number = 1
        self._lock = threading.Lock()
        self._cache: dict[Query, list[Summary]] = {}
        self.refresh()

    def refresh(self) -> int:
        """Index the rows added to the file since the last call (all of them if it was replaced).

        Returns:
            How many rows were added to the index.
        """
        with self._lock:
            if not self.path.is_file():
                raise RolloutFileError(f"rollouts file not found: {self.path}")
            if self.path.stat().st_size < self._end:  # rewritten: start over
                self.entries, self._end, self._next_number = [], 0, 1
            before = len(self.entries)
            for line in iter_lines(self.path, self._end, self._next_number):
                self.entries.append(summarize(len(self.entries), line.offset, line.length, line.row))
                self._end = line.offset + line.length
                self._next_number = line.number + 1
            if len(self.entries) != before:
                self._cache.clear()
            return len(self.entries) - before

    def facets(self) -> dict[str, Any]:
        """What the filters offer (see :func:`facets`)."""
        with self._lock:
            entries = list(self.entries)
        return facets(entries)

    def query(self, query: Query, offset: int = 0, limit: int = 50) -> tuple[int, list[Summary]]:
        """One page of the rollouts ``query`` selects.

        Returns:
            How many rollouts match, and those of the page (``offset``, at most ``limit``).
        """
        if query.sort not in SORT_KEYS:
            raise ValueError(f"unknown sort key {query.sort!r}; choose one of {', '.join(SORT_KEYS)}")
        with self._lock:
            matching = self._cache.get(query)
            if matching is None:
                matching = self._select(query)
                if len(self._cache) >= 16:  # paging through a selection reuses it
                    self._cache.pop(next(iter(self._cache)))
                self._cache[query] = matching
        start = max(offset, 0)
        return len(matching), matching[start : start + max(limit, 0)]

    def read(self, index: int) -> dict[str, Any]:
        """The full row of rollout ``index``, read from the file.

        Raises:
            IndexError: No such rollout.
        """
        if not 0 <= index < len(self.entries):
            raise IndexError(f"no rollout {index}; the file has {len(self.entries)}")
        entry = self.entries[index]
        return read_line(self.path, entry.offset, entry.length)

    def _select(self, query: Query) -> list[Summary]:
        def keep(e: Summary) -> bool:
            if query.env and e.env_id != query.env:
                return False
            if query.failure and (e.failure_kind or NO_FAILURE) != query.failure:
                return False
            if (query.masked == "hide" and e.masked) or (query.masked == "only" and not e.masked):
                return False
            if query.min_reward is not None and (e.reward is None or e.reward < query.min_reward):
                return False
            return query.max_reward is None or (e.reward is not None and e.reward <= query.max_reward)

        unfiltered = query == Query(sort=query.sort, descending=query.descending)
        selected = list(self.entries) if unfiltered else [e for e in self.entries if keep(e)]
        if query.sort != "index":
            value = operator.attrgetter(query.sort)
            # rollouts without the value go last in both directions
            present = [e for e in selected if value(e) is not None]
            absent = [e for e in selected if value(e) is None]
            present.sort(key=operator.attrgetter(query.sort, "index"), reverse=query.descending)
            return present + absent
        return selected[::-1] if query.descending else selected


def _preview(row: Mapping[str, Any]) -> str:
    """The task's last user message, on one line and cut short."""
    params = row.get("responses_create_params")
    raw_input = params.get("input") if isinstance(params, Mapping) else None
    text = ""
    if isinstance(raw_input, str):
        text = raw_input
    elif isinstance(raw_input, list):
        for item in raw_input:
            if isinstance(item, Mapping) and item.get("role") == "user":
                text = it.content_text(item.get("content"))
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
