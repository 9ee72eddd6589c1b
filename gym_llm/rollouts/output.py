"""Append-only JSONL output: one flushed line per finished rollout, and resume from it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gym_llm import fastjson

FSYNC_INTERVAL_S = 1.0


class RolloutWriter:
    """Append records as JSON lines; every line is flushed (survives a killed process) and the
    file is fsync'd at most once per second and at close (survives a machine crash up to then)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "ab")
        self._last_sync = time.monotonic()

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(fastjson.dumps_line(record))
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


def load_finished(path: str | Path) -> list[dict[str, Any]]:
    """The complete records in ``path``; a torn last line (a killed writer) is cut off the file."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as handle:
            handle.truncate(end)
    records = []
    for number, line in enumerate(data[:end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            raise ValueError(f"{path} line {number}: not valid JSON; cannot resume from this file") from None
    return records
