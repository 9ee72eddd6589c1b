"""WorkplaceAssistant: carry out office requests with 27 tools over a small synthetic company.

Port of NeMo Gym's ``workplace_assistant`` resources server (itself a port of WorkBench). The
model gets the company directory and the email, calendar, analytics, project management and CRM
tools; every episode starts from the same company (tables copied at ``reset``).

Reward (as NeMo's ``is_correct``): the predicted ``function_call`` items of the response are
replayed in order on a fresh copy of the company, and so are the row's ``ground_truth`` calls;
the reward is 1.0 iff the two final states are the same. States compare table by table (calendar
events, emails, plots, project tasks, CRM customers) as multisets of rows, case-insensitively
except for ``status``, ``list_name`` and ``board``; seeded records are matched by id and records
the calls created by content only. Read-only calls, and calls that fail, change nothing.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

from .company import DATA_DIR, Company, StateTracker, seed_company
from .toolkit import TOOL_SCHEMAS, Toolkit, parse_calls, replay

SYSTEM_PROMPT = (
    "Today's date is Thursday, 2023-11-30 and the current time is 23:59:00. Remember the current date "
    "and time when answering queries. Meetings must not start before 9am or end after 6pm."
)

# failure_kind values
BAD_GROUND_TRUTH = "bad_ground_truth"
STATE_MISMATCH = "state_mismatch"

__all__ = ["SYSTEM_PROMPT", "WorkplaceAssistantEnv", "WorkplaceTask"]


class WorkplaceTask(TaskRow):
    """A NeMo Gym workplace_assistant row.

    ``ground_truth`` is a Python-literal (or JSON) string of ``[{"name", "arguments"}]`` calls,
    ``arguments`` being a JSON string, as in ``nvidia/Nemotron-RL-agent-workplace_assistant``;
    the list itself is accepted too (NeMo's multi-turn rows).
    """

    ground_truth: Any
    category: str | None = None
    environment_name: str | None = None
    id: int | str | None = None

    @field_validator("ground_truth")
    @classmethod
    def _valid_calls(cls, value: Any) -> Any:
        parse_calls(value)  # raises ValueError naming the bad call
        return value


class WorkplaceAssistantEnv(LLMEnv, Toolkit):
    task_model = WorkplaceTask
    max_turns = 6  # NeMo's max_steps for this server
    reward_components = ("num_calls", "invalid_calls")

    company: Company

    def __init__(self, tasks: Any = None, *, data_dir: str | Path | None = None, **kwargs: Any) -> None:
        """Create the env.

        Args:
            tasks: Task rows (default: the bundled examples); see :class:`~gym_llm.env.LLMEnv`.
            data_dir: A folder of ``company_<table>.jsonl`` files to use instead of the bundled
                company (for rows written against other data, e.g. WorkBench's tables converted).
            **kwargs: ``max_turns``, ``tool_call_parser``, ... as for :class:`~gym_llm.env.LLMEnv`.
        """
        super().__init__(tasks, **kwargs)
        self.data_dir = Path(data_dir).resolve() if data_dir is not None else DATA_DIR
        # Rows without tools get NeMo's schemas (optional arguments, strict false), not the
        # all-required strict schemas the core derives from the signatures.
        self.default_tool_schemas = TOOL_SCHEMAS

    def setup(self, task: dict[str, Any]) -> None:
        self.company = seed_company(self.data_dir)

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response["output"]
        try:
            expected = _expected_state(task["ground_truth"], self.data_dir)
        except (KeyError, TypeError, ValueError) as exc:
            return Verdict(0.0, failure_kind=BAD_GROUND_TRUTH, details={"error": str(exc)})
        predicted = [
            (item.get("name"), item.get("arguments"))
            for item in output
            if isinstance(item, dict) and item.get("type") == "function_call"
        ]
        state, invalid = replay(predicted, self.data_dir)
        mismatched = state.mismatched_tables(expected)
        reward = 0.0 if mismatched else 1.0
        return Verdict(
            reward,
            components={"num_calls": float(len(predicted)), "invalid_calls": float(invalid)},
            details={"mismatched_tables": mismatched},
            failure_kind=STATE_MISMATCH if mismatched else None,
        )

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """The ground-truth calls one per turn (all the rest at once if turns run short), then a message."""
        calls = parse_calls(task["ground_truth"])
        issued = sum(
            1
            for item in it.function_calls(observation["input"])
            if str(item.get("call_id")).startswith("ref_")
        )
        remaining = calls[issued:]
        if not remaining:
            return [it.message("Done: I have carried out your request.")]
        turns_left = self.max_turns - self.num_turns
        batch = remaining[:1] if len(remaining) < turns_left else remaining
        return [
            it.function_call(call["name"], call["arguments"], f"ref_{issued + offset}")
            for offset, call in enumerate(batch)
        ]


def _expected_state(ground_truth: Any, data_dir: Path) -> StateTracker:
    """The final state the ground-truth calls lead to (cached for string rows; never mutate it)."""
    if isinstance(ground_truth, str):
        return _expected_state_cached(ground_truth, data_dir)
    return replay(((call["name"], call["arguments"]) for call in parse_calls(ground_truth)), data_dir)[0]


@lru_cache(maxsize=128)  # each entry holds a company copy (~60 kB)
def _expected_state_cached(ground_truth: str, data_dir: Path) -> StateTracker:
    return replay(((call["name"], call["arguments"]) for call in parse_calls(ground_truth)), data_dir)[0]
