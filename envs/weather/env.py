"""Weather: one tool, ``get_weather(city)``; the reward is 1.0 iff the model called it.

Port of NeMo Gym's ``example_single_tool_call`` (formerly ``example_simple_weather``): same tool,
same output, same reward rule (the final answer is not graded).
"""

from __future__ import annotations

from typing import Any

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict


class WeatherTask(TaskRow):
    """NeMo's rows carry no verifier fields; ``city`` (ours, optional) feeds the reference policy."""

    city: str | None = None


class WeatherEnv(LLMEnv):
    task_model = WeatherTask
    max_turns = 4

    @tool
    def get_weather(self, city: str) -> dict[str, str]:
        """Get the current weather in a city.

        Args:
            city: The name of the city.
        """
        return {"city": city, "weather_description": f"The weather in {city} is cold."}

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        called = bool(it.function_calls(response["output"], "get_weather"))
        return Verdict(1.0 if called else 0.0)

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        outputs = [item for item in observation["input"] if item.get("type") == "function_call_output"]
        if not outputs:
            city = task.get("city") or "San Francisco"
            return [it.function_call("get_weather", {"city": city}, "call_weather")]
        weather = it.parse_arguments({"arguments": outputs[-1]["output"]}) or {}
        return [it.message(weather.get("weather_description", "I could not get the weather."))]
