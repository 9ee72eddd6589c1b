"""Adapters for RL trainers (installed as ``gym_llm.integrations``); each imports its trainer lazily."""
