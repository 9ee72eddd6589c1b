"""Adapters for RL trainers (installed as ``gym_llm.integrations``); each imports its trainer lazily.

- :mod:`gym_llm.integrations.trl`: ``grpo_kwargs(...)`` for TRL's ``GRPOTrainer`` (``pip install
  gym-llm[trl]``), in TRL's environment mode or with gym_llm's own rollout loop.
- :mod:`gym_llm.integrations.verl`: ``GymLLMAgentLoop``, ``write_parquet``, ``agent_loop_yaml`` and
  ``compute_score`` for VeRL (``pip install gym-llm[verl]``).
- :mod:`gym_llm.integrations.nemo_rl`: ``GymLLMEnvironment`` and ``datum_specs`` for NeMo RL.

They share :mod:`.episodes` (envs by id, tasks as trainer rows), :mod:`.chat_tokens` (prompts and
tool outputs as token ids in the model's chat format), :mod:`.tool_methods` (typed methods for
tools) and :mod:`.rewards` (per-env reward metrics).
"""
