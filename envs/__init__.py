"""The bundled environments, one package each (installed as ``gym_llm.envs``)."""
