"""``llm/InstructionFollowing-v0``: IFEval's verifiable instructions (NeMo Gym's instruction_following)."""

ENVS = {"llm/InstructionFollowing-v0": "gym_llm.envs.instruction_following.env:InstructionFollowingEnv"}
