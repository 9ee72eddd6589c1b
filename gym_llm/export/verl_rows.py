"""One row of a VeRL RL dataset (``RLHFDataset``'s columns) for one gym_llm task.

Both ``gym-llm export --format verl`` (from rollouts) and
``gym_llm.integrations.verl.write_parquet`` (from an env's tasks) write these rows, and
``gym_llm.integrations.verl.GymLLMAgentLoop`` reads them back: the env id and the task row (JSON)
travel in ``extra_info``.

Example:
    >>> row = verl_row("llm/MCQA-v0", 3, {"responses_create_params": {"input": "Q?"}, "expected_answer": "B"},
    ...                [{"role": "user", "content": "Q?"}], index=0)
    >>> row["ability"], row["reward_model"], row["extra_info"]["env_id"]
    ('MCQA', {'style': 'rule', 'ground_truth': 'B'}, 'llm/MCQA-v0')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

# the agent loop gym_llm registers with VeRL (gym_llm.integrations.verl.agent_loop_yaml)
VERL_AGENT_NAME = "gym_llm"
VERL_PROMPT = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
VERL_SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", VERL_PROMPT),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [
                    ("index", pa.int64()),
                    ("split", pa.string()),
                    ("env_id", pa.string()),
                    ("task_index", pa.int64()),
                    ("task", pa.string()),
                ]
            ),
        ),
        ("agent_name", pa.string()),
    ]
)


def verl_row(
    env_id: str,
    task_index: int | None,
    task: Mapping[str, Any],
    prompt: Sequence[Mapping[str, Any]],
    *,
    index: int,
    split: str = "train",
    agent_name: str = VERL_AGENT_NAME,
) -> dict[str, Any]:
    """The dataset row of one task.

    Args:
        env_id: The env that plays and verifies it (``data_source``).
        task_index: Its index among the env's tasks.
        task: The task row (kept as JSON in ``extra_info.task``).
        prompt: Role/content chat messages (``developer`` already as ``system``).
        index: The row's index in the dataset.
        split: Recorded in ``extra_info``.
        agent_name: The agent loop VeRL runs for the row.

    Returns:
        ``data_source``, ``prompt``, ``ability`` (the env's name), ``reward_model`` (``style``
        ``"rule"``; ``ground_truth``: the row's ``expected_answer`` or ``ground_truth`` as text, for
        reward managers that read it, else ``""``), ``extra_info`` (``index``, ``split``,
        ``env_id``, ``task_index``, ``task``) and ``agent_name``.
    """
    truth = task.get("expected_answer", task.get("ground_truth", ""))
    return {
        "data_source": env_id,
        "prompt": [{"role": m["role"], "content": m.get("content") or ""} for m in prompt],
        "ability": env_name(env_id),
        "reward_model": {
            "style": "rule",
            "ground_truth": truth if isinstance(truth, str) else json.dumps(truth),
        },
        "extra_info": {
            "index": index,
            "split": split,
            "env_id": env_id,
            "task_index": task_index,
            "task": json.dumps(task),
        },
        "agent_name": agent_name,
    }


def env_name(env_id: Any) -> str:
    """``"llm/MathWithJudge-v0"`` -> ``"MathWithJudge"``."""
    name = str(env_id or "unknown").rsplit("/", 1)[-1]
    return name.rsplit("-v", 1)[0] if "-v" in name else name
