"""StatefulCounter: ``increment_counter`` and ``get_counter_value`` over per-episode state.

Port of NeMo Gym's ``example_session_state_mgmt`` (formerly ``example_stateful_counter``). The
counter starts at the row's ``initial_count``; the reward is 1.0 iff it ends at ``expected_count``.
NeMo keeps the counter in a server-side dict keyed by session cookie and never frees it; here it
lives on the env instance and is rebuilt at every reset.

``verify`` replays the episode's successful ``increment_counter`` calls on a fresh counter, so a
recorded rollout re-verifies from its data alone.
"""

from __future__ import annotations

import json
from typing import Any

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict


class CounterTask(TaskRow):
    expected_count: int
    initial_count: int = 0
    increments: list[int] | None = None  # ours, optional: the ground-truth calls for the reference policy


class StatefulCounterEnv(LLMEnv):
    task_model = CounterTask
    max_turns = 8

    def setup(self, task: dict[str, Any]) -> None:
        self.counter = task.get("initial_count", 0)

    @tool
    def increment_counter(self, count: int) -> dict[str, bool]:
        """Add a number to the counter.

        Args:
            count: The amount to add.
        """
        self.counter += count
        return {"success": True}

    @tool
    def get_counter_value(self) -> dict[str, int]:
        """Get the counter's current value."""
        return {"count": self.counter}

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        final = task.get("initial_count", 0) + sum(_applied_increments(response["output"]))
        return Verdict(float(final == task["expected_count"]), details={"final_count": final})

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        history = observation["input"]
        increments = task.get("increments")
        if increments is None:
            increments = [task["expected_count"] - task.get("initial_count", 0)]
        if not it.function_calls(history, "increment_counter"):
            return [
                it.function_call("increment_counter", {"count": n}, f"call_inc_{i}")
                for i, n in enumerate(increments)
            ]
        if not it.function_calls(history, "get_counter_value"):
            return [it.function_call("get_counter_value", {}, "call_get")]
        count = json.loads(history[-1]["output"]).get("count")
        return [it.message(f"The count is {count}.")]


def _applied_increments(output: list[dict[str, Any]]) -> list[int]:
    """The ``count`` of every ``increment_counter`` call whose output reported success."""
    succeeded = {
        item["call_id"]
        for item in output
        if item.get("type") == "function_call_output"
        and (it.parse_arguments({"arguments": item.get("output")}) or {}).get("success") is True
    }
    counts = []
    for call in it.function_calls(output, "increment_counter"):
        args = it.parse_arguments(call) or {}
        if call.get("call_id") in succeeded and isinstance(args.get("count"), int):
            counts.append(args["count"])
    return counts
