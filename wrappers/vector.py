"""``LLMVectorEnv``: N LLM episodes stepped concurrently on one event loop.

``gymnasium.make_vec("llm/<Env>-v0", num_envs=N)`` builds one. ``step(actions)`` awaits every
sub-env's ``astep`` together (``asyncio.gather``), so the tool calls and verifiers of N episodes
overlap instead of running one after another; ``areset``/``astep`` give the same from async code.

Batching follows gymnasium's ``VectorEnv`` API:

- observations: a tuple of per-env observation dicts (``{"input": ..., "tools": ...}``), so
  ``client.responses.create(model=m, **obs[i])`` works for each ``i``;
- actions: a sequence of N model turns, one per sub-env;
- rewards, terminations, truncations: numpy arrays of shape ``(N,)``;
- infos: one dict, each key batched with a boolean ``_key`` mask (gymnasium's ``_add_info``).

All three autoreset modes: ``NEXT_STEP`` (default), ``SAME_STEP`` (the finished episode's
observation and info in ``info["final_obs"]``/``info["final_info"]``) and ``DISABLED`` (reset
finished sub-envs with ``reset(options={"reset_mask": mask})``).

Example:
    >>> import gymnasium as gym, gym_llm
    >>> envs = gym.make_vec("llm/Weather-v0", num_envs=4)
    >>> obs, info = envs.reset(seed=0)
    >>> call = '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>'
    >>> obs, rewards, terminations, truncations, info = envs.step([call] * 4)
    >>> obs, rewards, terminations, truncations, info = envs.step(["It is cold."] * 4)
    >>> rewards.tolist(), terminations.tolist()
    ([1.0, 1.0, 1.0, 1.0], [True, True, True, True])

The batch of the observation space (:class:`gym_llm.spaces.ObservationDict`) is a tuple of
per-env dicts, here and in gymnasium's own ``SyncVectorEnv``/``AsyncVectorEnv``.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gym_llm.env import LLMEnv, Observation
from gym_llm.spaces import ObservationDict
from gym_llm.sync import run_sync

__all__ = ["LLMVectorEnv", "make_vector_env"]

# make_vec arguments that may sit in a spec's kwargs but are not env constructor arguments
_VECTOR_SPEC_KEYS = ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers")


# --------------------------------------------------------------------------- the vector env
@dataclass(slots=True)
class _Outcome:
    """What one sub-env produced in one vector step."""

    obs: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    final_obs: Observation | None = None
    final_info: dict[str, Any] | None = None


class LLMVectorEnv(VectorEnv):
    """N :class:`~gym_llm.env.LLMEnv` sub-envs stepped concurrently on one event loop.

    Args:
        envs: The sub-envs (instances with the ``areset``/``astep`` async core).
        autoreset_mode: ``AutoresetMode`` (or its value, e.g. ``"SameStep"``).
        max_episode_steps: Truncate an episode after this many steps, as ``gymnasium.make``'s
            ``TimeLimit`` would (the env's own ``max_turns`` also truncates, and verifies).

    Example:
        >>> from gym_llm.envs.weather.env import WeatherEnv
        >>> envs = LLMVectorEnv([WeatherEnv() for _ in range(2)], autoreset_mode="SameStep")
        >>> obs, info = envs.reset(seed=0)
        >>> len(obs), sorted(obs[0])
        (2, ['input', 'tools'])
    """

    def __init__(
        self,
        envs: Sequence[LLMEnv],
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
    ) -> None:
        if not envs:
            raise ValueError("LLMVectorEnv needs at least one sub-env")
        for env in envs:
            if not (hasattr(env, "areset") and hasattr(env, "astep")):
                raise TypeError(f"{type(env).__name__} has no areset/astep async core (is it an LLMEnv?)")
        if max_episode_steps is not None and max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be at least 1, got {max_episode_steps}")
        self.envs = list(envs)
        self.num_envs = len(self.envs)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.max_episode_steps = max_episode_steps

        first = self.envs[0]
        single_obs = first.observation_space
        if isinstance(single_obs, spaces.Dict) and not isinstance(single_obs, ObservationDict):
            single_obs = ObservationDict(dict(single_obs.spaces))  # batch as a tuple of per-env dicts
        self.single_observation_space = single_obs
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {**getattr(first, "metadata", {}), "autoreset_mode": self.autoreset_mode}
        self.render_mode = getattr(first, "render_mode", None)

        self._obs: list[Observation] = []  # each sub-env's latest, from the first reset() on
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._done: np.ndarray = np.zeros(self.num_envs, dtype=np.bool_)  # finished, awaiting a reset
        self._started = False

    # ----------------------------------------------------------------- sync API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Observation, ...], dict[str, Any]]:
        """Reset every sub-env, or those in ``options["reset_mask"]``; see :meth:`areset`."""
        return run_sync(self.areset(seed=seed, options=options))

    def step(
        self, actions: Sequence[Any]
    ) -> tuple[tuple[Observation, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action, concurrently; see :meth:`astep`."""
        return run_sync(self.astep(actions))

    def render(self) -> tuple[Any, ...]:
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()

    # ----------------------------------------------------------------- async core
    async def areset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Observation, ...], dict[str, Any]]:
        """Reset the sub-envs concurrently.

        Args:
            seed: ``None``, an int (sub-env ``i`` gets ``seed + i``, as gymnasium does) or one seed
                per sub-env.
            options: Passed to every sub-env's reset (e.g. ``{"task_index": 3}``), except
                ``"reset_mask"``: a boolean array of shape ``(num_envs,)`` that picks which
                sub-envs to reset (the others keep their episode and observation).
        """
        seeds = self._seeds(seed)
        options = dict(options) if options else {}  # never mutate the caller's dict: wrappers reread it
        mask = _reset_mask(options.pop("reset_mask", None), self.num_envs)
        if not self._started and not mask.all():
            raise RuntimeError("the first reset() must reset every sub-env: call it without reset_mask")
        env_options = options or None
        indices = np.flatnonzero(mask).tolist()
        results = await _gather([self.envs[i].areset(seed=seeds[i], options=env_options) for i in indices])

        infos: dict[str, Any] = {}
        if not self._started:
            self._obs = [obs for obs, _ in results]  # the first reset() resets every sub-env
        for i, (obs, info) in zip(indices, results, strict=True):
            self._obs[i] = obs
            infos = self._add_info(infos, info, i)
        self._elapsed[mask] = 0
        self._done[mask] = False
        self._started = True
        # Sub-envs that were not reset hand back their last observation: copy it, as each call
        # returns fresh objects (callers may keep or edit what they were given).
        obs_out = tuple(
            self._obs[i] if mask[i] else copy.deepcopy(self._obs[i]) for i in range(self.num_envs)
        )
        return obs_out, infos

    async def astep(
        self, actions: Sequence[Any]
    ) -> tuple[tuple[Observation, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step the sub-envs concurrently: sub-env ``i`` takes ``actions[i]``.

        With ``NEXT_STEP`` autoreset, a sub-env whose episode ended on the previous call is reset
        instead (its action is ignored, reward 0). With ``SAME_STEP``, a sub-env whose episode ends
        is reset in this call. With ``DISABLED``, stepping a finished sub-env raises.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if isinstance(actions, (str, bytes, dict)) or len(actions) != self.num_envs:
            raise ValueError(f"expected a sequence of {self.num_envs} actions, one per sub-env")
        if self.autoreset_mode == AutoresetMode.DISABLED and self._done.any():
            finished = np.flatnonzero(self._done).tolist()
            raise RuntimeError(
                f"sub-envs {finished} have finished their episodes and autoreset is DISABLED: "
                "reset them with reset(options={'reset_mask': mask}) before stepping"
            )
        outcomes = await _gather([self._step_one(i, action) for i, action in enumerate(actions)])

        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, out in enumerate(outcomes):
            self._obs[i] = out.obs
            rewards[i], terminations[i], truncations[i] = out.reward, out.terminated, out.truncated
            if out.final_info is not None:
                infos = self._add_info(infos, {"final_obs": out.final_obs, "final_info": out.final_info}, i)
            infos = self._add_info(infos, out.info, i)
        # Under SAME_STEP a finished sub-env is already on its next episode.
        if self.autoreset_mode != AutoresetMode.SAME_STEP:
            self._done = terminations | truncations
        return tuple(self._obs), rewards, terminations, truncations, infos

    async def _step_one(self, i: int, action: Any) -> _Outcome:
        env = self.envs[i]
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._done[i]:
            obs, info = await env.areset()
            self._elapsed[i] = 0
            return _Outcome(obs, 0.0, False, False, info)
        obs, reward, terminated, truncated, info = await env.astep(action)
        self._elapsed[i] += 1
        if self.max_episode_steps is not None and self._elapsed[i] >= self.max_episode_steps:
            truncated = truncated or not terminated
        out = _Outcome(obs, float(reward), bool(terminated), bool(truncated), info)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and (out.terminated or out.truncated):
            out.final_obs, out.final_info = out.obs, out.info
            out.obs, out.info = await env.areset()
            self._elapsed[i] = 0
        return out

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} seeds, one per sub-env, got {len(seeds)}")
        return seeds

    def __repr__(self) -> str:
        name = type(self.envs[0]).__name__
        return f"LLMVectorEnv({name}, num_envs={self.num_envs}, autoreset_mode={self.autoreset_mode.name})"


async def _gather(coros: list[Any]) -> list[Any]:
    """Await all; if any raised, re-raise the first error once every one has finished."""
    results = await asyncio.gather(*coros, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def _autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        return value
    try:
        return AutoresetMode(value)
    except ValueError:
        pass
    try:
        return AutoresetMode[str(value).upper().replace("-", "_")]
    except KeyError:
        valid = ", ".join(f"{m.value!r}" for m in AutoresetMode)
        raise ValueError(f"unknown autoreset_mode {value!r}; expected one of {valid}") from None


def _reset_mask(mask: Any, num_envs: int) -> np.ndarray:
    """Validate ``options["reset_mask"]`` as gymnasium's vector envs do; ``None`` means all."""
    if mask is None:
        return np.ones(num_envs, dtype=np.bool_)
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask).__name__}")
    if mask.shape != (num_envs,):
        raise ValueError(f"options['reset_mask'] must have shape ({num_envs},), got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"options['reset_mask'] must have dtype bool, got {mask.dtype}")
    if not mask.any():
        raise ValueError("options['reset_mask'] must select at least one sub-env")
    return mask


# --------------------------------------------------------------------------- vector entry point
def make_vector_env(
    num_envs: int = 1,
    *,
    env_id: str | None = None,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    max_episode_steps: int | None = None,
    disable_env_checker: bool | None = None,
    **env_kwargs: Any,
) -> LLMVectorEnv:
    """The ``vector_entry_point`` of every ``llm/`` env: what ``gymnasium.make_vec`` calls.

    Args:
        num_envs: Number of sub-envs.
        env_id: The env id. ``make_vec`` does not pass it; the per-id entry point
            ``"gym_llm.wrappers.vector:llm/Weather-v0"`` (module ``__getattr__``) does.
        autoreset_mode: See :class:`LLMVectorEnv`.
        max_episode_steps: See :class:`LLMVectorEnv` (``make_vec`` passes the spec's).
        disable_env_checker: Accepted for ``make`` compatibility; sub-envs are never wrapped.
        **env_kwargs: Constructor arguments of each sub-env (``tasks``, ``max_turns``, ...).

    Example:
        >>> envs = make_vector_env(2, env_id="llm/Weather-v0", autoreset_mode="SameStep")
        >>> envs.num_envs
        2
    """
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    if env_id is None:
        raise ValueError("make_vector_env needs env_id= (make_vec passes it through the per-id entry point)")
    spec = gymnasium.spec(env_id)
    if spec.entry_point is None:
        raise ValueError(f"{spec.id} has no entry point")
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    spec_kwargs = {k: v for k, v in spec.kwargs.items() if k not in _VECTOR_SPEC_KEYS}
    kwargs = {**spec_kwargs, **env_kwargs}
    if max_episode_steps is None:
        max_episode_steps = spec.max_episode_steps
    envs = [_llm_env(creator(**kwargs), spec.id) for _ in range(num_envs)]
    vector_env = LLMVectorEnv(envs, autoreset_mode=autoreset_mode, max_episode_steps=max_episode_steps)
    vector_env.spec = spec
    return vector_env


def _llm_env(env: Any, env_id: str) -> LLMEnv:
    if not isinstance(env, LLMEnv):
        raise TypeError(f"{env_id}'s entry point made a {type(env).__name__}, not an LLMEnv")
    return env


def __getattr__(name: str) -> Callable[..., LLMVectorEnv]:
    """Per-id vector entry points: ``"gym_llm.wrappers.vector:llm/Weather-v0"`` names one.

    ``gymnasium.register(..., vector_entry_point="gym_llm.wrappers.vector:" + env_id)`` keeps
    the spec a plain string (JSON-serialisable) while telling the factory which env to build.
    """
    if "/" in name or name in gymnasium.registry:
        return functools.partial(make_vector_env, env_id=name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

