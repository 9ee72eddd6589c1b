"""Registration of every env under the ``llm/`` namespace.

Each package in ``gym_llm.envs`` declares its ids in its ``__init__.py`` as
``ENVS = {"llm/Name-v0": "gym_llm.envs.name.env:NameEnv"}``; importing that ``__init__`` is cheap
(the env module itself is imported only by ``gymnasium.make``).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

import gymnasium

from gym_llm.verdict import Verdict

# per-id vector entry points: make_vec does not tell the factory which env it is building
VECTOR_ENTRY_POINT = "gym_llm.wrappers.vector:{env_id}"


def discover() -> dict[str, str]:
    """Every env id declared by the packages in ``gym_llm.envs``, mapped to its entry point."""
    import gym_llm.envs as envs_pkg

    found: dict[str, str] = {}
    for module in pkgutil.iter_modules(envs_pkg.__path__):
        if module.ispkg:
            package = importlib.import_module(f"gym_llm.envs.{module.name}")
            found.update(getattr(package, "ENVS", {}))
    return dict(sorted(found.items()))


def register_envs() -> None:
    for env_id, entry_point in discover().items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=VECTOR_ENTRY_POINT.format(env_id=env_id),
            )


def env_ids() -> list[str]:
    """The registered ``llm/`` env ids."""
    return sorted(env_id for env_id in gymnasium.registry if env_id.startswith("llm/"))


@cache
def _verifier(env_id: str) -> Any:
    return gymnasium.make(env_id, disable_env_checker=True).unwrapped


def verify(env_id: str, row: dict[str, Any]) -> Verdict:
    """Re-verify a recorded rollout row (task fields + ``response``) with ``env_id``'s verifier.

    Example:
        >>> verdict = gym_llm.verify("llm/Weather-v0", row)  # doctest: +SKIP
        >>> verdict.reward
        1.0
    """
    return _verifier(env_id).verify_row(row)
