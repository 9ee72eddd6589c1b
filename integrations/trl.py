"""TRL: train on gym_llm envs with ``GRPOTrainer`` (``pip install gym-llm[trl]``).

:func:`grpo_kwargs` returns the keyword arguments that plug one or several envs into TRL::

    from trl import GRPOConfig, GRPOTrainer
    from gym_llm.integrations.trl import grpo_kwargs

    trainer = GRPOTrainer(model=model, args=GRPOConfig(...), processing_class=tokenizer,
                          **grpo_kwargs("llm/Weather-v0"))
    trainer.train()

Two modes:

- ``mode="environment"`` (default): TRL runs the conversation and calls the env's tools itself
  (``environment_factory``). The dataset's ``prompt`` is the task's conversation; one class per env
  exposes exactly the env's tools as typed methods; the reward function finishes each episode
  with the model's final turn and returns the verified reward. A tool error is raised to TRL, so
  it counts in TRL's ``tools/failure_frequency``. Needs a chat template TRL can parse tool calls
  for (Qwen, Llama 3, …; see TRL's ``add_response_schema``).
- ``mode="rollout"``: gym_llm owns the loop (``rollout_func``, :mod:`.trl_rollout`): every turn is
  an env step, so the env's turn rules hold (unknown tools, turn budget, invalid actions), the
  full tool schemas reach the chat template, and tool tokens are masked out of the loss
  (``env_mask``). Generation is the trainer's own (its vLLM client when configured, else
  ``transformers`` ``generate``).

Reward components are logged through TRL's ``log_metric`` as ``gym_llm/<env id>/<component>``.
Rollouts whose failure lies outside the model's answer (a judge or sandbox error) get reward
``None``: TRL leaves them out of the advantage.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from gym_llm.env import LLMEnv

from .episodes import (
    EnvPool,
    env_id_list,
    iter_tasks,
    make_env,
    prompt_messages,
    tasks_by_env,
)
from .rewards import RewardLog
from .tool_methods import tool_method

__all__ = ["GymLLMToolError", "environment_class", "grpo_kwargs", "train_dataset"]

MODES = ("environment", "rollout")
# the prompt's first message carries its task in rollout mode (TRL hands rollout_func the prompts only)
TASK_KEY = "gym_llm_task"


def grpo_kwargs(
    env_ids: str | Sequence[str],
    *,
    mode: str = "environment",
    tasks: Any = None,
    **env_kwargs: Any,
) -> dict[str, Any]:
    """Keyword arguments for ``trl.GRPOTrainer`` that train on gym_llm envs.

    Args:
        env_ids: One env id (``"llm/Weather-v0"``) or several (TRL's multi-environment form: each
            row is played on its own env, with that env's tools).
        mode: ``"environment"`` (TRL's ``environment_factory``) or ``"rollout"`` (gym_llm's own
            loop as ``rollout_func``).
        tasks: The task rows (a list, a JSONL path, ``"hf:ID"``); with several envs a mapping
            ``{env_id: tasks}``. Default: each env's bundled tasks.
        **env_kwargs: Keyword arguments for every env (e.g. ``max_turns=4``).

    Returns:
        ``train_dataset`` (a ``datasets.Dataset``: ``prompt``, ``env_id``, ``task_index``, and
        ``environment`` with several envs) and ``reward_funcs``, plus ``environment_factory``
        (a class, or ``{env_id: class}``) in environment mode or ``rollout_func`` in rollout mode.

    Raises:
        ValueError: An unknown mode or env id, or tasks for envs not trained on.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    ids = env_id_list(env_ids)
    pool = EnvPool(ids, tasks_by_env(ids, tasks), env_kwargs)
    dataset = train_dataset(pool.templates, tag_tasks=mode == "rollout")
    if mode == "rollout":
        from .trl_rollout import RolloutLoop

        return {"train_dataset": dataset, "rollout_func": RolloutLoop(pool), "reward_funcs": [gym_llm_reward]}
    classes = {
        env_id: environment_class(env_id, tasks=env.tasks, **env_kwargs)
        for env_id, env in pool.templates.items()
    }
    factory: Any = classes[ids[0]] if len(ids) == 1 else classes
    return {"train_dataset": dataset, "environment_factory": factory, "reward_funcs": [gym_llm_reward]}


def train_dataset(envs: Mapping[str, LLMEnv], *, tag_tasks: bool = False) -> Any:
    """One row per task: the conversational ``prompt``, ``env_id`` and ``task_index``.

    With several envs each row also names its ``environment`` (TRL routes it to that env's class).
    With ``tag_tasks`` the prompt's first message carries ``gym_llm_task: "<env id>#<index>"``, which
    chat templates ignore and the rollout loop reads.

    Returns:
        A ``datasets.Dataset``.
    """
    from datasets import Dataset

    rows = []
    for env_id, index, task in iter_tasks(envs):
        prompt = prompt_messages(task)
        if tag_tasks:
            prompt[0] = {**prompt[0], TASK_KEY: f"{env_id}#{index}"}
        row = {"prompt": prompt, "env_id": env_id, "task_index": index}
        if len(envs) > 1:
            row["environment"] = env_id
        rows.append(row)
    return Dataset.from_list(rows)


class GymLLMToolError(RuntimeError):
    """A tool call that failed in the env; TRL shows the model ``{"error": message}`` and counts it."""


class GymLLMEnvironment:
    """Base of the per-env classes TRL instantiates: one gym_llm env, one episode per ``reset``.

    Its only public method is ``reset``; the subclasses add one typed method per tool.
    """

    _env_id: ClassVar[str]
    _tasks: ClassVar[Any]
    _env_kwargs: ClassVar[dict[str, Any]]

    def __init__(self) -> None:
        self._env = make_env(self._env_id, self._tasks, **self._env_kwargs)
        self._result: tuple[float, dict[str, Any]] | None = None

    def reset(self, **row: Any) -> None:
        """Start the episode of the row's task (``task_index``); the prompt is the row's own.

        Raises:
            ValueError: The row names no ``task_index``.
        """
        if row.get("task_index") is None:
            raise ValueError(
                f"{type(self).__name__}.reset: the dataset row has no 'task_index' column "
                "(use gym_llm.integrations.trl.train_dataset)"
            )
        self._env.reset(options={"task_index": int(row["task_index"])})
        self._result = None

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        failed_before = self._env.tool_errors
        output = await self._env.acall_tool(name, arguments)
        if self._env.tool_errors > failed_before:  # the env counted it: an error output, not a result
            raise GymLLMToolError(_error_message(output))
        return output

    async def _finish(self, final_turn: Any) -> tuple[float, dict[str, Any]]:
        """End the episode with the model's last turn and verify it (once; later calls repeat it)."""
        if self._result is None:
            self._result = await self._env.afinish(final_turn)
        return self._result


def environment_class(env_id: str, *, tasks: Any = None, **env_kwargs: Any) -> type:
    """The TRL environment class of ``env_id``: zero-argument constructor, ``reset``, one method per tool.

    Raises:
        ValueError: A tool is named ``reset`` or ``get_reward`` (reserved by TRL), or is no identifier.
    """
    template = make_env(env_id, tasks, **env_kwargs)
    methods: dict[str, Callable[..., Any]] = {}
    for name, spec in template.tools.items():
        if name in ("reset", "get_reward"):
            raise ValueError(f"{env_id}: tool {name!r} collides with a method TRL reserves")
        methods[name] = tool_method(spec)
    class_name = "".join(part for part in env_id.replace("llm/", "").replace("-", "_").split("_") if part)
    namespace = {
        **methods,
        "_env_id": env_id,
        "_tasks": template.tasks,
        "_env_kwargs": dict(env_kwargs),
        "__doc__": f"The gym_llm env {env_id} for TRL's environment_factory.",
        "__module__": __name__,
    }
    return type(class_name, (GymLLMEnvironment,), namespace)


def final_turn(completion: Any) -> Any:
    """The model's last turn in a TRL completion (a message list or text); None if there is none."""
    if isinstance(completion, str):
        return {"role": "assistant", "content": completion}
    if completion and completion[-1].get("role") == "assistant":
        return completion[-1]
    return None


async def gym_llm_reward(
    completions: list[Any],
    environments: list[Any] | None = None,
    verified_reward: list[float] | None = None,
    verified_info: list[dict[str, Any]] | None = None,
    env_id: list[str] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """TRL reward function: the verified reward of each episode (None for masked rollouts).

    In environment mode it finishes each episode with its completion's last turn; in rollout mode
    the loop has already verified it (``verified_reward``, ``verified_info``).

    Returns:
        One reward per completion.
    """
    if verified_reward is not None and verified_info is not None:
        results = list(zip(verified_reward, verified_info, strict=True))
    elif environments is not None:
        results = await asyncio.gather(
            *(env._finish(final_turn(c)) for env, c in zip(environments, completions, strict=True))
        )
    else:
        raise ValueError("gym_llm_reward needs TRL's environments or the rollout loop's verified_reward")
    ids = env_id or [getattr(env, "_env_id", "") for env in environments or ()]
    log = RewardLog()
    for eid, (_, info) in zip(ids, results, strict=True):
        log.add(eid, info)
    if log_metric is not None:
        for name, value in log.means().items():
            log_metric(name, value)
    return [None if info.get("mask_sample") else float(reward) for reward, info in results]


def _error_message(output: str) -> str:
    """The message of a tool error output (``{"error": ...}``)."""
    try:
        value = json.loads(output)
    except ValueError:
        return output
    return str(value["error"]) if isinstance(value, dict) and "error" in value else output
