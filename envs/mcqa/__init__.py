"""``llm/MCQA-v0``: multiple-choice questions graded by answer extraction (port of NeMo Gym's mcqa)."""

ENVS = {"llm/MCQA-v0": "gym_llm.envs.mcqa.env:MCQAEnv"}
