"""What every trainer adapter shares: env ids and their tasks, envs by id, prompts as chat messages.

Trainers see tasks as dataset rows; gym_llm plays them on envs built once per env id and reset per
episode. A row names its task by ``env_id`` and ``task_index`` (an index into the env's task list),
so an adapter never ships whole task rows through a trainer's data pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import gymnasium

import gym_llm  # noqa: F401 - registers the llm/ envs
from gym_llm.chat_format import to_hf_messages
from gym_llm.env import LLMEnv
from gym_llm.items import input_items


def env_id_list(env_ids: str | Sequence[str]) -> list[str]:
    """One env id or several as a list, each checked to be a registered gym_llm env.

    Raises:
        ValueError: An id is not registered, or an id is given twice.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if not ids:
        raise ValueError("give at least one env id, e.g. 'llm/Weather-v0'")
    for env_id in ids:
        if env_id not in gymnasium.registry:
            raise ValueError(f"unknown env id {env_id!r}; see `gym-llm list` for the registered ones")
    if len(set(ids)) != len(ids):
        raise ValueError(f"env ids given twice: {ids}")
    return ids


def tasks_by_env(env_ids: list[str], tasks: Any) -> dict[str, Any]:
    """The task source of each env: ``tasks`` itself for one env, a mapping by env id for several.

    Returns:
        ``{env_id: tasks or None}`` (None: the env's bundled tasks).

    Raises:
        ValueError: Several envs but ``tasks`` is not a mapping, or it names unknown envs.
    """
    if tasks is None:
        return dict.fromkeys(env_ids)
    if len(env_ids) == 1 and not (isinstance(tasks, Mapping) and set(tasks) <= set(env_ids)):
        return {env_ids[0]: tasks}
    if not isinstance(tasks, Mapping):
        raise ValueError("with several env ids, give tasks as a mapping {env_id: tasks}")
    unknown = set(tasks) - set(env_ids)
    if unknown:
        raise ValueError(f"tasks given for env ids that are not trained on: {sorted(unknown)}")
    return {env_id: tasks.get(env_id) for env_id in env_ids}


def make_env(env_id: str, tasks: Any = None, **env_kwargs: Any) -> LLMEnv:
    """The unwrapped env for ``env_id`` (no gymnasium checker: trainers step it millions of times)."""
    if tasks is not None:
        env_kwargs["tasks"] = tasks
    env = gymnasium.make(env_id, disable_env_checker=True, **env_kwargs).unwrapped
    if not isinstance(env, LLMEnv):
        raise TypeError(f"{env_id} is not a gym_llm env")
    return env


def prompt_messages(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A task's prompt as chat messages for a HuggingFace chat template (``developer`` -> ``system``)."""
    return to_hf_messages(input_items(task["responses_create_params"]["input"]))


def iter_tasks(envs: Mapping[str, LLMEnv]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Every ``(env_id, task_index, task)`` of the envs, env by env."""
    for env_id, env in envs.items():
        for index, task in enumerate(env.tasks):
            yield env_id, index, task


class EnvPool:
    """Envs built once per env id and handed out per episode: construct once, reset often.

    Args:
        env_ids: The env ids played.
        tasks: The task source per env id (see :func:`tasks_by_env`).
        env_kwargs: Keyword arguments for every env (e.g. ``max_turns``).
    """

    def __init__(self, env_ids: Iterable[str], tasks: Mapping[str, Any], env_kwargs: Mapping[str, Any]):
        self.env_kwargs = dict(env_kwargs)
        self.templates = {
            env_id: make_env(env_id, tasks.get(env_id), **self.env_kwargs) for env_id in env_ids
        }
        self._free: dict[str, list[LLMEnv]] = {env_id: [env] for env_id, env in self.templates.items()}

    def take(self, env_id: str) -> LLMEnv:
        """An env of ``env_id`` that no episode uses (a new one when all are busy)."""
        free = self._free[env_id]
        if free:
            return free.pop()
        template = self.templates[env_id]
        return make_env(env_id, template.tasks, **self.env_kwargs)

    def give_back(self, env_id: str, env: LLMEnv) -> None:
        """Return an env after its episode."""
        self._free[env_id].append(env)
