"""``llm/EquivalenceLLMJudge-v0``: short answers graded by an LLM judge (NeMo Gym's equivalence_llm_judge)."""

ENVS = {"llm/EquivalenceLLMJudge-v0": "gym_llm.envs.equivalence_llm_judge.env:EquivalenceLLMJudgeEnv"}
