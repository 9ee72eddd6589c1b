"""Rollouts to HuggingFace datasets: ``to_dataset``, ``export`` and ``gym-llm export``.

Formats (one record per ...):

- ``raw``: rollout: every field, the nested ``response`` kept as Arrow structs; a field whose
  values differ in type across rows is stored as a JSON string (:func:`json_columns` names them).
- ``sft``: unmasked rollout: ``messages`` (HF chat messages with tool calls and tool messages),
  ``tools`` (JSON), ``env_id``, ``task_index``, ``repeat_index``, ``reward``; ``min_reward`` keeps
  only rewarded rollouts.
- ``dpo``: pair of rollouts of one task with different rewards: ``prompt``, ``chosen``,
  ``rejected`` (messages), ``tools``, the two rewards and repeat indices; ties are skipped.
- ``prompts``: task (repeats dropped): ``prompt`` messages, ``tools``, ``env_id``,
  ``task_index`` and ``task``, the task row as JSON, to verify completions with (GRPO).
- ``verl``: task: VeRL's ``RLHFDataset`` columns (``data_source``, ``prompt``, ``ability``,
  ``reward_model``, ``extra_info``, ``agent_name``).

Masked rollouts never become training data. Tool-call ``arguments`` and ``tools`` are JSON strings
so that every row has one Arrow type (:func:`template_messages` turns messages read back into
what a chat template takes).

Needs ``pyarrow`` and ``datasets`` (``pip install gym-llm[export]``); the names below are
imported on first use, so :mod:`gym_llm.export.source` works without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gym_llm.export.exporter import KINDS, ExportResult, PushError, export, output_kind, to_dataset
    from gym_llm.export.formats import FORMATS, PAIRS, ExportError
    from gym_llm.export.messages import template_messages
    from gym_llm.export.raw import json_columns
    from gym_llm.export.source import RolloutFileError

__all__ = [
    "FORMATS",
    "KINDS",
    "PAIRS",
    "ExportError",
    "ExportResult",
    "PushError",
    "RolloutFileError",
    "export",
    "json_columns",
    "output_kind",
    "template_messages",
    "to_dataset",
]

_WHERE = {
    "KINDS": "exporter",
    "ExportResult": "exporter",
    "PushError": "exporter",
    "export": "exporter",
    "output_kind": "exporter",
    "to_dataset": "exporter",
    "FORMATS": "formats",
    "PAIRS": "formats",
    "ExportError": "formats",
    "template_messages": "messages",
    "json_columns": "raw",
    "RolloutFileError": "source",
}


def __getattr__(name: str) -> Any:
    # pyarrow and datasets load only when an export is asked for
    if name not in _WHERE:
        raise AttributeError(f"module 'gym_llm.export' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"gym_llm.export.{_WHERE[name]}"), name)
