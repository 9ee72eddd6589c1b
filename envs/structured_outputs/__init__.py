"""``llm/StructuredOutputs-v0``: a schema-valid document as the answer (NeMo Gym's structured_outputs)."""

ENVS = {"llm/StructuredOutputs-v0": "gym_llm.envs.structured_outputs.env:StructuredOutputsEnv"}
