"""Envs whose episodes run on a server: client envs.

- ``llm/Remote-v0`` (:class:`RemoteEnv`): a gym_llm env served by ``gym-llm serve``, over its
  reset/step protocol.
- ``llm/NeMoGym-v0`` (:class:`NeMoGymEnv`): any NeMo Gym resources server (``gym-llm serve`` is
  one), over NeMo's protocol, with task rows given here.

They take a ``base_url`` and have no tasks of their own, so they are not among the bundled envs
that :func:`gym_llm.env_ids` lists (and the per-env checks play). ``import gym_llm`` registers
them with gymnasium::

    import gymnasium, gym_llm

    env = gymnasium.make("llm/Remote-v0", base_url="http://127.0.0.1:8000")
"""

from __future__ import annotations

import gymnasium

from gym_llm.registry import CLIENT_ENVS, VECTOR_ENTRY_POINT
from gym_llm.remote.client import RemoteError, RemoteRequestError, ServerClient
from gym_llm.remote.env import RemoteEnv
from gym_llm.remote.nemo_gym import NeMoGymEnv

__all__ = [
    "CLIENT_ENVS",
    "NeMoGymEnv",
    "RemoteEnv",
    "RemoteError",
    "RemoteRequestError",
    "ServerClient",
    "register_client_envs",
]


def register_client_envs() -> None:
    """Register :data:`CLIENT_ENVS` with gymnasium again (``import gym_llm`` does it once; call this
    after removing them from the registry)."""
    for env_id, entry_point in CLIENT_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=VECTOR_ENTRY_POINT.format(env_id=env_id),
            )
