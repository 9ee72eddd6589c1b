"""``llm/MultiStep-v0``: look up synonym values, then extract them (NeMo Gym's example_multi_step)."""

ENVS = {"llm/MultiStep-v0": "gym_llm.envs.multi_step.env:MultiStepEnv"}
