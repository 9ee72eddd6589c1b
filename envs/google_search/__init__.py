"""``llm/GoogleSearch-v0``: multiple-choice questions answered with ``search`` and ``browse`` tools.

Port of NeMo Gym's ``google_search``; runs offline by default on a bundled document collection.
"""

ENVS = {"llm/GoogleSearch-v0": "gym_llm.envs.google_search.env:GoogleSearchEnv"}
