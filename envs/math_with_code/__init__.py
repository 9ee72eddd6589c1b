"""``llm/MathWithCode-v0``: math with a stateful, sandboxed Python tool (NeMo Gym's math_with_code)."""

ENVS = {"llm/MathWithCode-v0": "gym_llm.envs.math_with_code.env:MathWithCodeEnv"}
