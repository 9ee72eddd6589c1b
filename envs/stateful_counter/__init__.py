"""``llm/StatefulCounter-v0``: a per-episode counter (NeMo Gym's example_session_state_mgmt)."""

ENVS = {"llm/StatefulCounter-v0": "gym_llm.envs.stateful_counter.env:StatefulCounterEnv"}
