"""``llm/MiniSWE-v0``: fix a bug in a small Python repository with a ``bash`` tool (SWE-bench style)."""

ENVS = {"llm/MiniSWE-v0": "gym_llm.envs.mini_swe.env:MiniSWEEnv"}
