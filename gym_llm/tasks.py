"""Task rows in NeMo Gym's dataset format: loading and validation.

A row is ``{"responses_create_params": {"input": ..., "tools": [...], ...}, **verifier_fields}``.
Rows are validated once, at load, against the env's :class:`TaskRow` model and kept as the
original dicts, so they load and echo unchanged.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class TaskSet(tuple):
    """Rows already validated against ``model``: passing them to another env skips the work.

    ``frozen`` caches, by row index, what every env built on these rows derives from a row once
    (the marshalled prompt and tools), so many envs sharing the rows share it too.
    """

    model: type[BaseModel]
    frozen: dict[int, Any]


class TaskError(ValueError):
    """A task source or row that cannot be used; the message names the row and field."""


class ResponsesCreateParams(BaseModel):
    """The Responses API request of a row; sampling fields beyond ``input``/``tools`` pass through."""

    model_config = ConfigDict(extra="allow")

    input: str | list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None


class TaskRow(BaseModel):
    """The fields every row has. Envs subclass it to declare their verifier fields."""

    model_config = ConfigDict(extra="allow")

    responses_create_params: ResponsesCreateParams


def load_tasks(source: Any, model: type[BaseModel] = TaskRow) -> TaskSet:
    """Load and validate task rows.

    Args:
        source: A list of row dicts, a JSONL file path, a ``datasets.Dataset``, or ``"hf:ID"`` /
            ``"hf:ID:SPLIT"`` for a HuggingFace dataset.
        model: The row model to validate against.

    Raises:
        TaskError: The source is missing or empty, or a row is invalid (naming row and field).
    """
    if isinstance(source, TaskSet) and issubclass(source.model, model):
        return source
    if isinstance(source, (str, os.PathLike)):
        text = str(source)
        if text.startswith("hf:"):
            return _validated(_load_hf(text[3:]), model, text)
        path = Path(source)
        if not path.is_file():
            raise TaskError(f"task file not found: {path}")
        stat = path.stat()
        return _load_jsonl_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size, model)
    if source is None:
        raise TaskError("no tasks given and the env has no default task file")
    return _validated(list(source), model, "tasks")


@lru_cache(maxsize=64)
def _load_jsonl_cached(path: str, _mtime: int, _size: int, model: type[BaseModel]) -> TaskSet:
    return _validated(read_jsonl(path), model, path)


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of a JSONL file; blank lines are skipped, a bad line raises :class:`TaskError`."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise TaskError(f"{path} line {number}: not valid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise TaskError(f"{path} line {number}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return rows


def _validated(rows: list[Any], model: type[BaseModel], origin: str) -> TaskSet:
    if not rows:
        raise TaskError(f"{origin}: no task rows")
    for index, row in enumerate(rows):
        check_row(row, model, f"{origin} row {index + 1}")
    tasks = TaskSet(rows)
    tasks.model = model
    tasks.frozen = {}
    return tasks


def check_row(row: Any, model: type[BaseModel], where: str) -> None:
    """Raise :class:`TaskError` naming ``where`` and the offending field if ``row`` is invalid."""
    if not isinstance(row, dict):
        raise TaskError(f"{where}: expected a dict, got {type(row).__name__}")
    try:
        model.model_validate(row)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "row"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise TaskError(f"{where}: field '{field}': {err['msg']}{more}") from None


def _load_hf(spec: str) -> list[dict[str, Any]]:
    try:
        import datasets
    except ImportError:
        raise TaskError("loading 'hf:' tasks needs the datasets package: pip install datasets") from None
    name, _, split = spec.partition(":")
    return list(datasets.load_dataset(name, split=split or "train"))
