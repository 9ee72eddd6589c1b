"""Append-only JSONL output: one flushed line per rollout, read back line by line, rewritten atomically."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gym_llm import fastjson

FSYNC_INTERVAL_S = 1.0


class RolloutWriter:
    """Append records as JSON lines; every write is flushed (it survives a killed process) and the
    file is fsync'd at most once per second and at close (it survives a machine crash up to then)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")
        self._last_sync = time.monotonic()

    def write(self, record: dict[str, Any]) -> None:
        """Append one record as one line."""
        self.write_lines(fastjson.dumps_line(record))

    def write_lines(self, lines: bytes) -> None:
        """Append complete, already encoded lines (each ending in a newline) in one write."""
        self._file.write(lines)
        self._file.flush()
        now = time.monotonic()
        if now - self._last_sync >= FSYNC_INTERVAL_S:
            os.fsync(self._file.fileno())
            self._last_sync = now

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes, bool]]:
    """The lines of ``path``, one at a time.

    Yields:
        ``(line_number, line, complete)``; ``complete`` is False only for a last line that lacks
        its newline (a writer killed mid-line). Blank lines are skipped.
    """
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            complete = line.endswith(b"\n")
            if line.strip():
                yield number, line, complete


def load_finished(path: str | Path) -> list[dict[str, Any]]:
    """Every complete record in ``path`` (a torn last line is left out), for inspection and tests.

    Returns:
        The records, in file order (an empty list if there is no file).

    Raises:
        ValueError: A complete line is not valid JSON.
    """
    path = Path(path)
    if not path.exists():
        return []
    records = []
    for number, line, complete in iter_lines(path):
        if not complete:
            break
        try:
            records.append(fastjson.loads(line))
        except fastjson.JSONDecodeError:
            raise ValueError(f"{path} line {number}: not valid JSON") from None
    return records


def rewrite_keeping(path: Path, keep: Callable[[int], bool]) -> None:
    """Replace ``path`` by a copy that holds only its complete lines whose number ``keep`` accepts.

    The copy is written beside the file, fsync'd, then renamed over it: at every moment the path
    holds either the whole old file or the whole new one.
    """
    temporary = path.with_name(f".{path.name}.rewrite")
    with open(temporary, "wb") as out:
        for number, line, complete in iter_lines(path):
            if complete and keep(number):
                out.write(line)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    _fsync_dir(path.parent)


def cut_torn_tail(path: Path) -> None:
    """Cut a last line that lacks its newline off ``path`` (a writer killed mid-line)."""
    size = path.stat().st_size
    if not size:
        return
    with open(path, "r+b") as handle:
        # a torn line is at most as long as a record; read back in blocks until a newline
        position, block = size, 1 << 16
        while position > 0:
            start = max(0, position - block)
            handle.seek(start)
            data = handle.read(position - start)
            newline = data.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            position = start
        else:
            end = 0
        if end < size:
            handle.truncate(end)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
