"""Rollouts to a ``datasets.Dataset``, to files and to the HuggingFace Hub."""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gym_llm.export import raw
from gym_llm.export.formats import Counts, ExportError, Options, Plan, plan
from gym_llm.export.source import RolloutSource, Row
from gym_llm.export.writing import ArrowStreamSink, JsonlSink, ParquetSink, Sink, write

if TYPE_CHECKING:
    import datasets

KINDS = ("disk", "parquet", "jsonl")

Push = Callable[..., Any]


class PushError(RuntimeError):
    """The dataset could not be pushed to the Hub (unreachable, no token, no rights, ...)."""


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` did.

    Attributes:
        format: The format written.
        rows: Records written.
        rollouts: Rollout rows read.
        skipped: Rollouts (``dpo``: tasks, pairs) left out, by reason.
        output: The file or directory written (``None``: only pushed).
        kind: ``"disk"`` (``save_to_disk``), ``"parquet"`` or ``"jsonl"``.
        repo_id: The Hub repository pushed to, if any.
        seconds: Wall time.
        json_columns: ``raw``: the columns written as JSON strings.
    """

    format: str
    rows: int
    rollouts: int
    skipped: dict[str, int]
    output: Path | None
    kind: str | None
    repo_id: str | None
    seconds: float
    json_columns: tuple[str, ...] = field(default=())


def output_kind(output: str | os.PathLike[str], to: str | None = None) -> str:
    """How ``output`` is written: ``to`` if given, else by its suffix.

    Example:
        >>> output_kind("sft.parquet"), output_kind("sft.jsonl"), output_kind("sft_dataset")
        ('parquet', 'jsonl', 'disk')
    """
    if to is not None:
        if to not in KINDS:
            raise ExportError(f"unknown output kind {to!r}; choose one of {', '.join(KINDS)}")
        return to
    suffix = Path(output).suffix.lower()
    return {".parquet": "parquet", ".jsonl": "jsonl", ".json": "jsonl"}.get(suffix, "disk")


def to_dataset(
    rollouts: str | os.PathLike[str] | Iterable[Row],
    format: str = "raw",
    *,
    min_reward: float | None = None,
    pairs: str = "best-worst",
    split: str = "train",
    cache_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 1000,
) -> datasets.Dataset:
    """Rollouts as a ``datasets.Dataset`` of one of the export formats.

    The records are written in batches to an Arrow file that the dataset maps from disk, so a
    file of any size exports in flat memory.

    Args:
        rollouts: A JSONL rollouts file (streamed) or an iterable of rollout rows.
        format: ``"raw"``, ``"sft"``, ``"dpo"``, ``"prompts"`` or ``"verl"`` (see
            :mod:`gym_llm.export`).
        min_reward: ``raw``/``sft``: keep only rollouts with at least this reward.
        pairs: ``dpo``: ``"best-worst"`` or ``"all"``.
        split: ``verl``: the ``extra_info.split`` value.
        cache_dir: Where the Arrow file goes (default: a temporary directory removed at exit).
        batch_size: Records converted and written at a time.

    Returns:
        The dataset. Its ``info.description`` names the format (and, for ``raw``, the columns
        written as JSON strings).

    Raises:
        ExportError: An unknown format or bad option, a rollout the format cannot use.
        RolloutFileError: The rollouts file is missing or has a line that is not JSON.

    Example:
        >>> ds = to_dataset("rollouts.jsonl", "sft", min_reward=1.0)  # doctest: +SKIP
        >>> ds[0]["messages"][-1]["role"]  # doctest: +SKIP
        'assistant'
    """
    the_plan = plan(RolloutSource(rollouts), format, Options(min_reward, pairs, split))
    return _dataset(the_plan, format, cache_dir, batch_size)


def export(
    rollouts: str | os.PathLike[str] | Iterable[Row],
    output: str | os.PathLike[str] | None = None,
    format: str = "raw",
    *,
    to: str | None = None,
    min_reward: float | None = None,
    pairs: str = "best-worst",
    split: str = "train",
    push_to_hub: str | None = None,
    private: bool | None = None,
    push: Push | None = None,
    batch_size: int = 1000,
) -> ExportResult:
    """Export rollouts to a dataset directory, a parquet or JSONL file, and/or the Hub.

    Args:
        rollouts: A JSONL rollouts file (streamed) or an iterable of rollout rows.
        output: Where to write (optional when pushing): a directory for ``save_to_disk``, or a
            ``.parquet`` / ``.jsonl`` file; ``to`` overrides the guess from the suffix.
        format: ``"raw"``, ``"sft"``, ``"dpo"``, ``"prompts"`` or ``"verl"``.
        to: ``"disk"``, ``"parquet"`` or ``"jsonl"``.
        min_reward: ``raw``/``sft``: keep only rollouts with at least this reward.
        pairs: ``dpo``: ``"best-worst"`` or ``"all"``.
        split: ``verl``: the ``extra_info.split`` value; also the split name pushed to the Hub.
        push_to_hub: A Hub dataset repository (``"user/name"``) to push the dataset to.
        private: Make a new Hub repository private.
        push: Does the push, called as ``push(dataset, repo_id, split=..., private=...)``
            (default: ``datasets.Dataset.push_to_hub``).
        batch_size: Records converted and written at a time.

    Returns:
        What was written (:class:`ExportResult`).

    Raises:
        ExportError: No output and no repository, an unknown format or bad option, a rollout the
            format cannot use, or no rows to write (e.g. every rollout under ``min_reward``).
        RolloutFileError: The rollouts file is missing or has a line that is not JSON.
        PushError: The push failed (the message says why).
    """
    if output is None and push_to_hub is None:
        raise ExportError("nothing to do: give an output path or a Hub repository to push to")
    start = time.perf_counter()
    kind = output_kind(output, to) if output is not None else None
    the_plan = plan(RolloutSource(rollouts), format, Options(min_reward, pairs, split))
    path = Path(output) if output is not None else None
    if path is not None and kind != "disk" and path.is_dir():
        raise ExportError(f"{path} is a directory; a {kind} export needs a file path")
    counts = the_plan.counts
    if kind in ("parquet", "jsonl") and push_to_hub is None:
        assert path is not None
        sink: Sink = ParquetSink(path, the_plan.schema) if kind == "parquet" else JsonlSink(path)
        write(the_plan, [sink], batch_size)
        _refuse_empty(counts, format, [path])
    else:
        file_sinks: list[Sink] = []
        if kind == "parquet":
            file_sinks.append(ParquetSink(path, the_plan.schema))  # type: ignore[arg-type]
        elif kind == "jsonl":
            file_sinks.append(JsonlSink(path))  # type: ignore[arg-type]
        dataset = _dataset(the_plan, format, None, batch_size, file_sinks)
        _refuse_empty(counts, format, [path] if file_sinks and path is not None else [])
        if kind == "disk":
            assert path is not None
            dataset.save_to_disk(str(path))
        if push_to_hub is not None:
            _push(dataset, push_to_hub, push, split=split, private=private)
    return ExportResult(
        format=format,
        rows=counts["rows"],
        rollouts=counts["rollouts"],
        skipped=counts.skipped(),
        output=path,
        kind=kind,
        repo_id=push_to_hub,
        seconds=time.perf_counter() - start,
        json_columns=tuple(raw.json_columns(the_plan.schema)),
    )


def _dataset(
    the_plan: Plan,
    format: str,
    cache_dir: str | os.PathLike[str] | None,
    batch_size: int,
    more_sinks: list[Sink] | None = None,
) -> datasets.Dataset:
    """Write the plan to an Arrow file and map it as a dataset."""
    import datasets

    directory = Path(cache_dir) if cache_dir is not None else _temp_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"gym_llm-{format}-{uuid.uuid4().hex}.arrow"
    write(the_plan, [ArrowStreamSink(path, the_plan.schema), *(more_sinks or [])], batch_size)
    description = f"gym_llm {format} export of rollouts"
    json_list = raw.json_columns(the_plan.schema)
    if json_list:
        description += f"; columns holding JSON strings: {', '.join(json_list)}"
    info = datasets.DatasetInfo(
        description=description, features=datasets.Features.from_arrow_schema(the_plan.schema)
    )
    return datasets.Dataset.from_file(str(path), info=info)


def _refuse_empty(counts: Counts, format: str, written: list[Path]) -> None:
    """No output for no rows (an empty saved dataset does not even load): say why instead."""
    if counts["rows"]:
        return
    for path in written:
        path.unlink(missing_ok=True)
    skipped = ", ".join(f"{why}={n}" for why, n in sorted(counts.skipped().items())) or "none"
    raise ExportError(f"no {format} rows to write from {counts['rollouts']} rollouts (skipped: {skipped})")


def _push(dataset: Any, repo_id: str, push: Push | None, *, split: str, private: bool | None) -> None:
    if push is None:
        import datasets

        push = datasets.Dataset.push_to_hub
    try:
        push(dataset, repo_id, split=split, private=private)
    except Exception as exc:  # the Hub client raises many kinds (network, auth, HTTP); report them as one
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise PushError(
            f"could not push to the Hugging Face Hub ({repo_id}): {type(exc).__name__}: {reason}"
        ) from exc


_TEMP: tempfile.TemporaryDirectory[str] | None = None


def _temp_dir() -> Path:
    """A directory for this process's dataset files, removed when the process exits."""
    global _TEMP
    if _TEMP is None:
        _TEMP = tempfile.TemporaryDirectory(prefix="gym_llm_export_")
    return Path(_TEMP.name)
