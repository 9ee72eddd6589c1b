"""Gymnasium wrappers and vector envs for gym_llm envs (installed as ``gym_llm.wrappers``)."""
