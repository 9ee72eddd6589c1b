"""Rollouts to read: a JSONL file, read line by line (never whole), or rows already in memory.

A file is read as a stream of lines; :class:`LineIndex` keeps only each line's byte offset, so
that any row can be read again later (the viewer's pages, the export's preference pairs) without
holding the file in memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_llm import fastjson

log = logging.getLogger(__name__)

Row = dict[str, Any]


class RolloutFileError(ValueError):
    """A rollouts file that cannot be read: missing, or a line that is not a JSON object."""


@dataclass(frozen=True, slots=True)
class Line:
    """One rollout row of a file, with where it starts and ends (bytes)."""

    number: int
    offset: int
    length: int
    row: Row


def iter_lines(path: str | os.PathLike[str], start: int = 0, first_number: int = 1) -> Iterator[Line]:
    """The rows of a JSONL rollouts file, one line at a time, with their byte offsets.

    Blank lines are skipped. A last line without its newline that does not parse is a writer
    still at work (or killed): it is skipped with a warning, as the collector's resume does.

    Args:
        path: The file.
        start: The byte offset to start reading at (the start of a line).
        first_number: The line number of the line at ``start`` (for messages).

    Raises:
        RolloutFileError: The file is missing, or a line is not a JSON object (naming the line).
    """
    path = Path(path)
    if not path.is_file():
        raise RolloutFileError(f"rollouts file not found: {path}")
    offset = start
    with open(path, "rb") as handle:
        handle.seek(start)
        for number, raw in enumerate(handle, first_number):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                row = fastjson.loads(raw)
            except fastjson.JSONDecodeError as exc:
                if not raw.endswith(b"\n"):
                    log.warning("%s line %d: incomplete last line skipped", path, number)
                    return
                raise RolloutFileError(f"{path} line {number}: not valid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise RolloutFileError(
                    f"{path} line {number}: expected a JSON object, got {type(row).__name__}"
                )
            yield Line(number, start, len(raw), row)


def read_line(path: str | os.PathLike[str], offset: int, length: int) -> Row:
    """The row stored at ``offset`` (``length`` bytes) of a file, as :func:`iter_lines` found it."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        return fastjson.loads(handle.read(length))


class RolloutSource:
    """Rollout rows from a JSONL path or from rows in memory, readable more than once.

    Args:
        rollouts: A JSONL file path, or an iterable of row dicts (a list, a generator, a
            ``datasets.Dataset``). A one-shot iterator is kept in memory so that formats that
            read twice can; a path is streamed every time.

    Raises:
        RolloutFileError: The path does not exist.
    """

    def __init__(self, rollouts: str | os.PathLike[str] | Iterable[Row]) -> None:
        self.path: Path | None = None
        self._rows: Sequence[Row] | Iterable[Row] = ()
        if isinstance(rollouts, (str, os.PathLike)):
            self.path = Path(rollouts)
            if not self.path.is_file():
                raise RolloutFileError(f"rollouts file not found: {self.path}")
        elif isinstance(rollouts, (dict, bytes)):
            raise TypeError("rollouts must be a JSONL path or an iterable of rows, not a single row")
        elif hasattr(rollouts, "__len__") and hasattr(rollouts, "__getitem__"):
            self._rows = rollouts  # a list or a datasets.Dataset: iterates again
        else:
            self._rows = list(rollouts)

    @property
    def name(self) -> str:
        """The file's path, or ``"rows"`` for rows in memory (for messages)."""
        return str(self.path) if self.path is not None else "rows"

    def rows(self) -> Iterator[Row]:
        """Every row, in order.

        Raises:
            RolloutFileError: A line of the file is not a JSON object.
            TypeError: A row in memory is not a dict.
        """
        if self.path is not None:
            for line in iter_lines(self.path):
                yield line.row
            return
        for number, row in enumerate(self._rows, 1):
            if not isinstance(row, dict):
                raise TypeError(f"rollout {number}: expected a dict, got {type(row).__name__}")
            yield row
