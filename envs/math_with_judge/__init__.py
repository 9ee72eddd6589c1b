"""``llm/MathWithJudge-v0``: math graded by math-verify, then an LLM judge (NeMo Gym's math_with_judge)."""

ENVS = {"llm/MathWithJudge-v0": "gym_llm.envs.math_with_judge.env:MathWithJudgeEnv"}
