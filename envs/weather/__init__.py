"""``llm/Weather-v0``: call ``get_weather`` (port of NeMo Gym's example_single_tool_call)."""

ENVS = {"llm/Weather-v0": "gym_llm.envs.weather.env:WeatherEnv"}
