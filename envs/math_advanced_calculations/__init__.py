"""``llm/MathAdvancedCalculations-v0``: "multiverse math" with twisted calculator tools.

Port of NeMo Gym's ``math_advanced_calculations``.
"""

_ENTRY = "gym_llm.envs.math_advanced_calculations.env:MathAdvancedCalculationsEnv"
ENVS = {"llm/MathAdvancedCalculations-v0": _ENTRY}
