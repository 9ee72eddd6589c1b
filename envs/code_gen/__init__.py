"""``llm/CodeGen-v0``: competitive programming graded by unit tests in a sandbox (NeMo Gym's code_gen)."""

ENVS = {"llm/CodeGen-v0": "gym_llm.envs.code_gen.env:CodeGenEnv"}
