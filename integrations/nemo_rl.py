"""NeMo RL: gym_llm envs as a NeMo RL environment (``EnvironmentInterface``).

NeMo RL's multi-turn rollout generates an assistant turn, hands each sample's message log (role
and text) with its metadata to the env's ``step``, and appends the observation's text to the token
stream as it is, tokenized without a chat template. :class:`GymLLMEnvironment` therefore:

- keeps one live gym_llm env per episode (keyed by an id carried in the metadata) and steps it
  with the assistant's text (the env parses the tool calls, runs them, keeps its turn rules);
- renders the tool outputs **and the next assistant header** in the model's own chat format
  (through the tokenizer's chat template) as the observation;
- rewards 0 until the episode ends, then the verified reward (a dict of tensors, one per reward
  component plus ``reward``, with ``reward_components=True`` for multi-reward training);
- returns ``metadata`` ``None`` once an episode is over.

:func:`datum_spec` builds NeMo RL's ``DatumSpec`` for a task (the first user message is the
rendered prompt with its token ids; ``extra_env_info`` names the env and task), and
:func:`ray_actor` starts the env as the Ray actor NeMo RL expects. The model must end each turn
with its end-of-turn token (``next_stop_strings`` stays ``None``), so a turn's text alone tells
where it ended.

NeMo RL is not on PyPI: when ``nemo_rl`` is importable this class is a real
``EnvironmentInterface`` and returns its ``EnvironmentReturn``; otherwise a NamedTuple with the
same fields stands in, so the adapter can be built and tested without it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from gym_llm.env import LLMEnv
from gym_llm.sync import run_sync

from .chat_tokens import ChatTokens
from .episodes import env_id_list, iter_tasks, make_env, tasks_by_env

try:  # NeMo RL's own types when it is installed
    from nemo_rl.environments.interfaces import EnvironmentInterface, EnvironmentReturn
except ImportError:  # the same fields, in the same order

    class EnvironmentReturn(NamedTuple):  # type: ignore[no-redef]
        """NeMo RL's ``EnvironmentReturn`` fields (all batched)."""

        observations: list[dict[str, str]]
        metadata: list[Any]
        next_stop_strings: list[list[str] | None]
        rewards: Any
        terminateds: Any
        answers: list[str | None] | None

    class EnvironmentInterface:  # type: ignore[no-redef]
        """Stands in for NeMo RL's abstract base class."""


__all__ = ["TASK_NAME", "EnvironmentReturn", "GymLLMEnvironment", "datum_spec", "datum_specs", "ray_actor"]

TASK_NAME = "gym_llm"


class GymLLMEnvironment(EnvironmentInterface):
    """NeMo RL environment playing gym_llm envs; each sample's metadata names its env and task.

    Args:
        cfg: ``tokenizer`` (a tokenizer object, or a name or path for ``AutoTokenizer``; its chat
            template renders the observations), ``env_kwargs`` (for every env),
            ``chat_template_kwargs`` (e.g. ``{"enable_thinking": False}``) and
            ``reward_components`` (return a dict of reward tensors: ``reward`` and each component).
    """

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        tokenizer = cfg.get("tokenizer")
        if tokenizer is None:
            raise ValueError("GymLLMEnvironment needs cfg['tokenizer']: the policy's tokenizer or its name")
        if isinstance(tokenizer, str):
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        self.chat = ChatTokens(tokenizer, **dict(cfg.get("chat_template_kwargs") or {}))
        self.env_kwargs = dict(cfg.get("env_kwargs") or {})
        self.reward_components = bool(cfg.get("reward_components", False))
        self._episodes: dict[str, tuple[str, LLMEnv]] = {}
        self._idle: dict[str, list[LLMEnv]] = {}

    def step(self, message_log_batch: list[list[dict[str, Any]]], metadata: list[Any]) -> EnvironmentReturn:
        """Step each sample's episode with its last assistant message.

        Args:
            message_log_batch: Each sample's messages (``role``, ``content``), the latest last.
            metadata: Each sample's metadata: ``extra_env_info`` from :func:`datum_spec` on its first
                turn, then what this method returned for it.

        Returns:
            ``EnvironmentReturn``: observations (``{"role": "environment", "content": text}``, empty
            once over), metadata (``None`` once over), ``next_stop_strings`` (``None``), rewards,
            terminateds, answers (the final turn's text once over).
        """
        results = run_sync(
            _gather([self._step(log, meta) for log, meta in zip(message_log_batch, metadata, strict=True)])
        )
        import torch

        rewards = [reward for _, _, reward, _, _ in results]
        terminateds = torch.tensor([done for _, _, _, done, _ in results], dtype=torch.bool)
        reward_tensor = torch.tensor(rewards, dtype=torch.float32)
        reward_out: Any = reward_tensor
        if self.reward_components:
            names = sorted({name for *_, components in results for name in components})
            reward_out = {"reward": reward_tensor}
            for name in names:
                reward_out[name] = torch.tensor([c.get(name, 0.0) for *_, c in results], dtype=torch.float32)
        return EnvironmentReturn(
            observations=[{"role": "environment", "content": obs} for obs, *_ in results],
            metadata=[meta for _, meta, *_ in results],
            next_stop_strings=[None] * len(results),
            rewards=reward_out,
            terminateds=terminateds,
            answers=[
                _last_text(log) if done else None
                for log, (_, _, _, done, _) in zip(message_log_batch, results, strict=True)
            ],
        )

    def global_post_process_and_metrics(self, batch: Any) -> tuple[Any, dict[str, float]]:
        """The batch unchanged, and its success rate and mean reward.

        Returns:
            ``(batch, {"gym_llm/success_rate": ..., "gym_llm/mean_reward": ...})``.
        """
        metrics: dict[str, float] = {}
        if "total_reward" in batch:
            total = batch["total_reward"].float()
            metrics["gym_llm/success_rate"] = float((total > 0).float().mean()) if len(total) else 0.0
            metrics["gym_llm/mean_reward"] = float(total.mean()) if len(total) else 0.0
        return batch, metrics

    async def _step(self, messages: list[dict[str, Any]], meta: Mapping[str, Any]) -> tuple:
        """One sample: (observation text, next metadata, reward, terminated, reward components)."""
        episode = meta.get("episode_id")
        if episode is None or episode not in self._episodes:
            episode, env_id = uuid.uuid4().hex, str(meta["env_id"])
            env = self._take(env_id)
            await env.areset(options={"task": _task_of(meta)})
            self._episodes[episode] = (env_id, env)
        env_id, env = self._episodes[episode]
        _, reward, terminated, truncated, info = await env.astep(_last_text(messages))
        if terminated or truncated:
            del self._episodes[episode]
            self._idle.setdefault(env_id, []).append(env)
            value = 0.0 if info["mask_sample"] else float(reward)
            return "", None, value, True, dict(info["reward_components"])
        observation = self.chat.tool_outputs(info["new_items"]).text
        return observation, {**meta, "episode_id": episode}, 0.0, False, {}

    def _take(self, env_id: str) -> LLMEnv:
        idle = self._idle.get(env_id)
        return idle.pop() if idle else make_env(env_id, **self.env_kwargs)


async def _gather(coroutines: list) -> list:
    import asyncio

    return list(await asyncio.gather(*coroutines))


def _last_text(messages: Sequence[Mapping[str, Any]]) -> str:
    content = messages[-1].get("content") if messages else ""
    return content if isinstance(content, str) else str(content or "")


def _task_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    task = meta.get("task")
    if isinstance(task, str):
        return json.loads(task)
    if isinstance(task, Mapping):
        return dict(task)
    raise ValueError(
        "the sample's metadata has no 'task': build the data with gym_llm.integrations.nemo_rl.datum_spec"
    )


def datum_spec(
    task: Mapping[str, Any],
    tokenizer: Any,
    idx: int,
    env_id: str,
    *,
    task_name: str = TASK_NAME,
    **template_kwargs: Any,
) -> dict[str, Any]:
    """NeMo RL's ``DatumSpec`` for one task: the rendered prompt and the env's metadata.

    Args:
        task: The task row.
        tokenizer: The policy's tokenizer (its chat template renders the prompt with the tools).
        idx: The datum's index.
        env_id: The gym_llm env that plays it.
        task_name: The key of this environment in NeMo RL's ``task_to_env``.
        **template_kwargs: For ``apply_chat_template``.

    Returns:
        ``message_log`` (one user message: the prompt text ending with the assistant header, and
        its ``token_ids`` tensor), ``length``, ``extra_env_info`` (``env_id``, ``task``),
        ``loss_multiplier`` 1.0, ``idx`` and ``task_name``.
    """
    import torch

    env = make_env(env_id, [dict(task)])
    obs, _ = env.reset(options={"task_index": 0})
    rendered = ChatTokens(tokenizer, **template_kwargs).prompt(obs)
    ids = torch.tensor(rendered.token_ids, dtype=torch.long)
    return {
        "message_log": [{"role": "user", "content": rendered.text, "token_ids": ids}],
        "length": len(rendered.token_ids),
        "extra_env_info": {"env_id": env_id, "task": json.dumps(dict(task))},
        "loss_multiplier": 1.0,
        "idx": idx,
        "task_name": task_name,
    }


def datum_specs(
    env_ids: str | Sequence[str], tokenizer: Any, *, tasks: Any = None, **template_kwargs: Any
) -> Iterator[dict[str, Any]]:
    """A ``DatumSpec`` for every task of the envs (see :func:`datum_spec`), numbered in order."""
    ids = env_id_list(env_ids)
    sources = tasks_by_env(ids, tasks)
    envs = {env_id: make_env(env_id, sources[env_id]) for env_id in ids}
    for number, (env_id, _, task) in enumerate(iter_tasks(envs)):
        yield datum_spec(task, tokenizer, number, env_id, **template_kwargs)


def ray_actor(cfg: Mapping[str, Any], **options: Any) -> Any:
    """Start :class:`GymLLMEnvironment` as a Ray actor (no GPU), as NeMo RL's ``task_to_env`` holds it.

    Returns:
        The actor handle.
    """
    import ray

    return ray.remote(GymLLMEnvironment).options(num_gpus=0, **options).remote(dict(cfg))
