"""MultiStep: ``get_synonym_value`` for each relevant synonym, then ``extract_synonym_values``.

Port of NeMo Gym's ``example_multi_step``. The reward is 1.0 iff the arguments of the *last*
``extract_synonym_values`` call equal ``expected_synonym_values`` (order matters). Extra metrics,
as NeMo: ``accuracy``, ``set_overlap``, ``original_term_minefield_hit`` (the original term or its
value was extracted) and ``order_instruction_following_failure`` (right values, wrong order).
"""

from __future__ import annotations

import json
from typing import Any

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict


class MultiStepTask(TaskRow):
    expected_synonyms: list[str]
    expected_synonym_values: list[int]
    minefield_label: str | None = None
    minefield_label_value: int | None = None


def synonym_value(synonym: str) -> int:
    return sum(map(ord, synonym))


class MultiStepEnv(LLMEnv):
    task_model = MultiStepTask
    max_turns = 8
    reward_components = (
        "accuracy",
        "set_overlap",
        "original_term_minefield_hit",
        "order_instruction_following_failure",
    )

    @tool
    def get_synonym_value(self, synonym: str) -> dict[str, int]:
        """Get the value of a synonym.

        Args:
            synonym: The synonym to get the value for.
        """
        return {"synonym_value": synonym_value(synonym)}

    @tool
    def extract_synonym_values(self, synonym_values: list[int]) -> dict[str, bool]:
        """Extract the values of the synonyms, in the order the terms were given.

        Args:
            synonym_values: The synonym values.
        """
        return {"success": True}

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        expected = task["expected_synonym_values"]
        actual: list[Any] = []
        for call in reversed(it.function_calls(response["output"], "extract_synonym_values")):
            args = it.parse_arguments(call) or {}
            values = args.get("synonym_values")
            actual = values if isinstance(values, list) else []
            break
        accuracy = actual == expected
        hashable = [v for v in actual if isinstance(v, (int, float, str))]
        set_overlap = len(set(hashable) & set(expected)) / len(expected) if expected else float(accuracy)
        minefield = task.get("minefield_label") in hashable or task.get("minefield_label_value") in hashable
        order_failure = not accuracy and set_overlap == 1.0
        return Verdict(
            float(accuracy),
            components={
                "accuracy": float(accuracy),
                "set_overlap": set_overlap,
                "original_term_minefield_hit": float(minefield),
                "order_instruction_following_failure": float(order_failure),
            },
            details={"parsed_synonym_values": actual},
        )

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        history = observation["input"]
        if not any(item.get("type") == "function_call_output" for item in history):
            return [
                it.function_call("get_synonym_value", {"synonym": synonym}, f"call_syn_{i}")
                for i, synonym in enumerate(task["expected_synonyms"])
            ]
        if not it.function_calls(history, "extract_synonym_values"):
            outputs = {
                item["call_id"]: item["output"]
                for item in history
                if item.get("type") == "function_call_output"
            }
            values = [
                json.loads(outputs[call["call_id"]])["synonym_value"]
                for call in it.function_calls(history, "get_synonym_value")
            ]
            return [it.function_call("extract_synonym_values", {"synonym_values": values}, "call_extract")]
        return [it.message("I have extracted the synonym values.")]
