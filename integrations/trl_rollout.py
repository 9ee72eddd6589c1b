"""The rollout loop gym_llm owns inside TRL's ``GRPOTrainer`` (``rollout_func``).

Every prompt of the batch is one episode on its env. Turn by turn, the active episodes' token
streams go to the trainer's own generation in one batch (vLLM when the trainer uses it, else
``transformers`` ``generate``); each reply is one :meth:`~gym_llm.env.LLMEnv.astep`, all of them
concurrently, so the env keeps its rules (tool-call parsing, unknown tools, turn budget, invalid
actions) and its verifier gives the reward. Tool outputs are rendered in the model's chat format
and masked out of the loss (``env_mask`` 0). An episode whose completion reaches
``max_completion_length`` is finished (:meth:`~gym_llm.env.LLMEnv.afinish`) and verified as it is.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from gym_llm.env import LLMEnv
from gym_llm.sync import run_sync

from .chat_tokens import ChatTokens
from .episodes import EnvPool

TASK_KEY = "gym_llm_task"


@dataclass
class _Episode:
    """One rollout's env and token stream."""

    env_id: str
    env: LLMEnv
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    reward: float = 0.0
    info: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        return self.info is not None

    def add(self, ids: list[int], *, model: bool, logprobs: list[float] | None = None) -> None:
        self.completion_ids += ids
        self.env_mask += [int(model)] * len(ids)
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)


class RolloutLoop:
    """``rollout_func(prompts, trainer) -> dict`` for ``GRPOTrainer``, playing gym_llm episodes.

    Args:
        pool: The envs to play on (built by :func:`gym_llm.integrations.trl.grpo_kwargs`).

    The returned dict holds ``prompt_ids``, ``completion_ids``, ``logprobs`` (None unless the
    backend returns them), ``env_mask``, and per completion ``verified_reward``, ``verified_info``
    (the final step's info) and ``env_id``, which reach the reward function.
    """

    def __init__(self, pool: EnvPool) -> None:
        self.pool = pool
        self._chat: ChatTokens | None = None
        self._chat_for: Any = None
        # a task's first prompt never changes: render it once per (env id, task index)
        self._prompts: dict[tuple[str, int], list[int]] = {}
        self.__name__ = "gym_llm_rollout"

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        return run_sync(self.arun(prompts, trainer))

    def chat_tokens(self, trainer: Any) -> ChatTokens:
        """The trainer's tokenizer with a prefix-preserving chat template (TRL's training template)."""
        tokenizer = getattr(trainer, "_tokenizer", None) or getattr(
            trainer.processing_class, "tokenizer", trainer.processing_class
        )
        if self._chat is None or self._chat_for is not tokenizer:
            from trl.chat_template_utils import get_training_chat_template

            template = getattr(trainer, "chat_template", None) or get_training_chat_template(tokenizer)
            kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})
            if template is not None:
                kwargs["chat_template"] = template
            self._chat, self._chat_for = ChatTokens(tokenizer, **kwargs), tokenizer
            self._prompts.clear()
        return self._chat

    async def arun(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        """Play one episode per prompt to the end; the async core of :meth:`__call__`."""
        chat = self.chat_tokens(trainer)
        budget = int(trainer.max_completion_length)
        eos_ids = set(getattr(trainer, "eos_token_ids", None) or [chat.tokenizer.eos_token_id])
        episodes = [await self._start(prompt, chat) for prompt in prompts]
        with_logprobs = True
        try:
            active = episodes
            while active:
                inputs = [ep.prompt_ids + ep.completion_ids for ep in active]
                generated, logprobs = trainer._generate_single_turn(inputs, None, {}, 1)
                with_logprobs = with_logprobs and logprobs is not None
                turns = []
                for index, ep in enumerate(active):
                    ids = list(generated[index])[: budget - len(ep.completion_ids)]
                    lps = list(logprobs[index])[: len(ids)] if logprobs is not None else None
                    ep.add(ids, model=True, logprobs=lps)
                    ended = bool(ids) and ids[-1] in eos_ids
                    turns.append(self._play_turn(ep, chat, ids, ended, budget))
                await asyncio.gather(*turns)
                active = [ep for ep in active if not ep.done]
        finally:
            for ep in episodes:
                self.pool.give_back(ep.env_id, ep.env)
        return {
            "prompt_ids": [ep.prompt_ids for ep in episodes],
            "completion_ids": [ep.completion_ids for ep in episodes],
            "logprobs": [ep.logprobs for ep in episodes] if with_logprobs else None,
            "env_mask": [ep.env_mask for ep in episodes],
            "verified_reward": [ep.reward for ep in episodes],
            "verified_info": [ep.info for ep in episodes],
            "env_id": [ep.env_id for ep in episodes],
        }

    async def _start(self, prompt: Any, chat: ChatTokens) -> _Episode:
        env_id, task_index = task_of(prompt)
        env = self.pool.take(env_id)
        obs, _ = await env.areset(options={"task_index": task_index})
        prompt_ids = self._prompts.get((env_id, task_index))
        if prompt_ids is None:
            prompt_ids = self._prompts[env_id, task_index] = chat.prompt(obs).token_ids
        return _Episode(env_id, env, prompt_ids)

    async def _play_turn(
        self, ep: _Episode, chat: ChatTokens, ids: list[int], ended: bool, budget: int
    ) -> None:
        text = chat.tokenizer.decode(ids, skip_special_tokens=True)
        if not ended:  # cut by the completion budget: verify the episode as it stands
            ep.reward, ep.info = await ep.env.afinish(text)
            return
        _, reward, terminated, truncated, info = await ep.env.astep(text)
        if terminated or truncated:
            ep.reward, ep.info = reward, info
            return
        suffix = chat.tool_outputs(info["new_items"]).token_ids
        if len(ep.completion_ids) + len(suffix) >= budget:  # no room left for another model turn
            ep.reward, ep.info = await ep.env.afinish()
            return
        ep.add(suffix, model=False)


def task_of(prompt: Any) -> tuple[str, int]:
    """The ``(env_id, task_index)`` a rollout-mode prompt carries on its first message.

    Raises:
        ValueError: The prompt carries none (a dataset not made by gym_llm).
    """
    tag = (
        prompt[0].get(TASK_KEY)
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict)
        else None
    )
    if not isinstance(tag, str) or "#" not in tag:
        raise ValueError(
            f"rollout prompt carries no {TASK_KEY!r} on its first message; use the train_dataset that "
            "gym_llm.integrations.trl.grpo_kwargs(..., mode='rollout') returns"
        )
    env_id, _, index = tag.rpartition("#")
    return env_id, int(index)
