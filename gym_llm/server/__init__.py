"""Any gym_llm env over HTTP.

:class:`EnvServer` (and ``gym-llm serve ENV_ID``) serves one registered env over two protocols at
once, on one port:

- NeMo Gym's resources-server protocol (``/seed_session``, one ``/<tool>`` per tool, ``/verify``,
  ``/close_session``, ``/aggregate_metrics``), so that NeMo Gym's agents, NeMo RL's NeMo Gym path
  and other NeMo Gym clients run gym_llm envs unchanged;
- a reset/step protocol (``/reset``, ``/step``, ``/finish``, ``/call_tool``, ``/close``) for
  ``gymnasium.make("llm/Remote-v0", base_url=...)``: an env whose episodes run on the server.

Each session is an env instance; sessions are freed on close, on verify (NeMo) and after an idle
timeout. See :mod:`gym_llm.server.app` for the safety defaults.
"""

from gym_llm.server.app import build_app
from gym_llm.server.runner import EnvServer
from gym_llm.server.served_env import ServedEnv

__all__ = ["EnvServer", "ServedEnv", "build_app"]
