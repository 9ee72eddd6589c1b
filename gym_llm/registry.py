"""Registration of every env under the ``llm/`` namespace.

Each package in ``gym_llm.envs`` declares its ids in its ``__init__.py`` as
``ENVS = {"llm/Name-v0": "gym_llm.envs.name.env:NameEnv"}``; importing that ``__init__`` is cheap
(the env module itself is imported only by ``gymnasium.make``).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from functools import cache
from importlib.metadata import entry_points
from typing import Any

import gymnasium

from gym_llm.env import LLMEnv
from gym_llm.verdict import Verdict

log = logging.getLogger(__name__)

# per-id vector entry points: make_vec does not tell the factory which env it is building
VECTOR_ENTRY_POINT = "gym_llm.wrappers.vector:{env_id}"


# Installed packages of envs name a module with an ``ENVS`` dict in this entry-point group, e.g. in
# their pyproject.toml: [project.entry-points."gym_llm.envs"] demo = "gym_llm_demo"
ENTRY_POINT_GROUP = "gym_llm.envs"


def discover() -> dict[str, str]:
    """Every env id declared by the packages in ``gym_llm.envs`` and by installed env packages
    (the ``gym_llm.envs`` entry-point group), mapped to its entry point."""
    # by name: envs/ installs as gym_llm.envs (setup.cfg's package_dir), which the type checker,
    # reading the source tree, knows as the top-level package envs
    envs_pkg = importlib.import_module("gym_llm.envs")

    found: dict[str, str] = {}
    for module in pkgutil.iter_modules(envs_pkg.__path__):
        if module.ispkg:
            package = importlib.import_module(f"gym_llm.envs.{module.name}")
            found.update(getattr(package, "ENVS", {}))
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.update(getattr(entry.load(), "ENVS", {}))
        except Exception as exc:  # one broken env package must not take every env down
            log.warning("gym_llm: env package %r (%s) failed to load: %s", entry.name, entry.value, exc)
    return dict(sorted(found.items()))


# Envs whose episodes run on a server (they take a base_url and have no tasks of their own): registered,
# but not among the bundled envs that env_ids() lists and the per-env checks play.
CLIENT_ENVS = {
    "llm/Remote-v0": "gym_llm.remote.env:RemoteEnv",
    "llm/NeMoGym-v0": "gym_llm.remote.nemo_gym:NeMoGymEnv",
}


def register_envs() -> None:
    """Register every discovered env and the client envs with gymnasium (``import gym_llm`` does)."""
    for env_id, entry_point in {**discover(), **CLIENT_ENVS}.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=VECTOR_ENTRY_POINT.format(env_id=env_id),
            )


def env_ids() -> list[str]:
    """The registered ``llm/`` env ids with tasks of their own (not the client envs)."""
    return sorted(e for e in gymnasium.registry if e.startswith("llm/") and e not in CLIENT_ENVS)


def make_llm_env(env_id: str, **kwargs: Any) -> LLMEnv:
    """``gymnasium.make(env_id, **kwargs)`` unwrapped, for code that drives the env's own API.

    Raises:
        TypeError: ``env_id`` names an env that is no :class:`~gym_llm.env.LLMEnv`.
    """
    env = gymnasium.make(env_id, disable_env_checker=True, **kwargs).unwrapped
    if not isinstance(env, LLMEnv):
        raise TypeError(f"{env_id} is a {type(env).__name__}, not a gym_llm LLMEnv")
    return env


@cache
def _verifier(env_id: str) -> Any:
    return gymnasium.make(env_id, disable_env_checker=True).unwrapped


def verify(env_id: str, row: dict[str, Any]) -> Verdict:
    """Re-verify a recorded rollout row (task fields + ``response``) with ``env_id``'s verifier.

    Args:
        env_id: A registered env id, e.g. ``"llm/Weather-v0"``.
        row: A rollout row: the task row's fields plus ``response``, whose ``output`` holds the
            model's items.

    Returns:
        The verifier's :class:`~gym_llm.verdict.Verdict` for that response.

    Example:
        >>> call = {"type": "function_call", "name": "get_weather", "arguments": '{"city": "Paris"}',
        ...         "call_id": "call_1"}
        >>> row = {"responses_create_params": {"input": "What is the weather in Paris?"},
        ...        "response": {"output": [call]}}
        >>> verify("llm/Weather-v0", row).reward
        1.0
    """
    return _verifier(env_id).verify_row(row)
