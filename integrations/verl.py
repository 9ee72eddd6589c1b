"""VeRL: play gym_llm envs in VeRL's agent loop (``pip install gym-llm[verl]``).

- :func:`write_parquet` writes tasks in the dataset schema VeRL's ``RLHFDataset`` reads, each row
  routed to the ``gym_llm`` agent loop (``agent_name``) with its env id and task in ``extra_info``.
- :func:`agent_loop_yaml` writes the YAML that registers :class:`GymLLMAgentLoop` under
  ``gym_llm``; point ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` at it.
- :class:`GymLLMAgentLoop` plays one episode per row: VeRL's server generates each turn, the env
  steps it (its own tool-call parsing and turn rules), and VeRL's token helpers append the tool
  outputs (masked, ``response_mask`` 0). The verified reward becomes ``reward_score`` (VeRL skips
  its reward function) and the env's reward components go to ``reward_extra_info`` under fixed
  names (``<env id>/<component>``, NaN for the other envs of the YAML's ``env_ids``).
- :func:`compute_score` scores a decoded response with the env's verifier, for VeRL's reward
  manager when another agent loop (e.g. ``single_turn_agent``) plays gym_llm rows.

Every ``verl`` import stays inside this module, and happens only when VeRL asks for the loop
class (``GymLLMAgentLoop`` is made on first access): importing verl pulls in torch, ray and
tensordict.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gym_llm.chat_format import to_chat_tools, to_hf_messages
from gym_llm.env import LLMEnv
from gym_llm.sync import run_sync

from .episodes import env_id_list, iter_tasks, make_env, prompt_messages, tasks_by_env

__all__ = ["AGENT_NAME", "agent_loop_yaml", "compute_score", "write_parquet"]

AGENT_NAME = "gym_llm"


def write_parquet(
    env_ids: str | Sequence[str],
    path: str | Path,
    *,
    tasks: Any = None,
    split: str = "train",
    agent_name: str = AGENT_NAME,
    **env_kwargs: Any,
) -> int:
    """Write the envs' tasks as a VeRL RL dataset (one parquet row per task).

    The rows are :func:`gym_llm.export.verl_rows.verl_row`'s, as ``gym-llm export --format verl``
    writes them: ``data_source`` (the env id), ``prompt`` (chat messages, ``developer`` as
    ``system``), ``ability`` (the env's name), ``reward_model``, ``extra_info`` (``index``,
    ``split``, ``env_id``, ``task_index``, ``task``: the task row as JSON) and ``agent_name``.

    Args:
        env_ids: One env id or several.
        path: The parquet file to write.
        tasks: The task rows (as for the envs); with several envs a mapping by env id.
        split: Recorded in ``extra_info``.
        agent_name: The agent loop VeRL runs for these rows.
        **env_kwargs: For the envs (only to load and check their tasks).

    Returns:
        The number of rows written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gym_llm.export.verl_rows import VERL_SCHEMA, verl_row

    ids = env_id_list(env_ids)
    sources = tasks_by_env(ids, tasks)
    envs = {env_id: make_env(env_id, sources[env_id], **env_kwargs) for env_id in ids}
    rows = [
        verl_row(env_id, index, task, prompt_messages(task), index=number, split=split, agent_name=agent_name)
        for number, (env_id, index, task) in enumerate(iter_tasks(envs))
    ]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=VERL_SCHEMA), path)
    return len(rows)


def agent_loop_yaml(
    path: str | Path, *, env_ids: Sequence[str] | None = None, name: str = AGENT_NAME, **env_kwargs: Any
) -> Path:
    """Write the agent-loop registration VeRL loads from ``rollout.agent.agent_loop_config_path``.

    Args:
        path: The YAML file to write.
        env_ids: The env ids trained on together: every sample then reports the reward components
            of all of them (NaN for the other envs), as VeRL needs the same keys in every sample.
        name: The agent name rows select (``agent_name`` column).
        **env_kwargs: Keyword arguments for every env (e.g. ``max_turns``).

    Returns:
        The path written.
    """
    import yaml

    entry: dict[str, Any] = {"name": name, "_target_": f"{__name__}.GymLLMAgentLoop"}
    if env_ids:
        entry["env_ids"] = env_id_list(env_ids)
    if env_kwargs:
        entry["env_kwargs"] = dict(env_kwargs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump([entry], sort_keys=False))
    return path


# One pool of idle envs per (env id, env kwargs) in each worker process: VeRL makes a new agent loop
# object per trajectory, so the envs (and their loaded tasks) must outlive it.
_idle: dict[str, list[LLMEnv]] = {}


def _take(env_id: str, env_kwargs: Mapping[str, Any]) -> tuple[str, LLMEnv]:
    key = json.dumps([env_id, env_kwargs], sort_keys=True, default=str)
    idle = _idle.setdefault(key, [])
    return key, idle.pop() if idle else make_env(env_id, **env_kwargs)


def _task_of(extra_info: Mapping[str, Any]) -> dict[str, Any]:
    task = extra_info.get("task")
    if isinstance(task, str):
        return json.loads(task)
    if isinstance(task, Mapping):
        return dict(task)
    raise ValueError(
        "extra_info has no 'task': write the dataset with gym_llm.integrations.verl.write_parquet"
    )


@functools.cache
def _agent_loop_class() -> type:
    """:class:`GymLLMAgentLoop`, a subclass of VeRL's ``AgentLoopBase`` (imported here, once)."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput

    class GymLLMAgentLoop(AgentLoopBase):
        """A VeRL agent loop that plays the gym_llm env of each row (``extra_info.env_id``).

        Args:
            env_ids: The env ids whose reward components every sample reports (see :func:`agent_loop_yaml`).
            env_kwargs: Keyword arguments for every env.
            *args, **kwargs: What VeRL passes every agent loop (VeRL's own ``tools`` are not used: the
                env runs its tools with their full schemas).
        """

        def __init__(
            self,
            *args: Any,
            env_ids: Sequence[str] | None = None,
            env_kwargs: Mapping[str, Any] | None = None,
            tools: Any = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self.env_ids = list(env_ids or ())
            self.env_kwargs = dict(env_kwargs or {})
            self.response_length = int(self.rollout_config.response_length)

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
            """Play the row's episode to the end.

            Returns:
                The token streams (prompt; model turns and masked tool outputs), the verified
                ``reward_score`` and ``extra_fields``: ``reward_extra_info`` (components) and
                ``gym_llm`` (env id, failure kind, mask flag, tool errors, turns).
            """
            extra_info = kwargs.get("extra_info") or {}
            env_id = str(extra_info.get("env_id") or kwargs.get("data_source"))
            key, env = _take(env_id, self.env_kwargs)
            try:
                return await self._play(env_id, env, _task_of(extra_info), sampling_params)
            finally:
                _idle[key].append(env)

        async def _play(
            self, env_id: str, env: LLMEnv, task: dict[str, Any], sampling_params: dict[str, Any]
        ) -> AgentLoopOutput:
            obs, _ = await env.areset(options={"task": task})
            messages = to_hf_messages(obs["input"])
            tools = to_chat_tools(obs["tools"]) or None
            ids = await self.ct_build_initial_tokens(messages, tools=tools)
            prompt_length = len(ids)
            mask: list[int] = []
            logprobs: list[float] | None = []
            request_id = uuid.uuid4().hex
            while True:
                out = await self.server_manager.generate(
                    request_id, prompt_ids=ids, sampling_params=sampling_params
                )
                if out.log_probs is None:
                    logprobs = None
                merged, mask, logprobs = await self.ct_merge_assistant_token(
                    ids, list(out.token_ids), mask, logprobs, out.log_probs if logprobs is not None else None
                )
                ids = merged.token_ids
                text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
                if len(mask) >= self.response_length:  # out of room: verify the episode as it stands
                    reward, info = await env.afinish(text)
                    break
                obs, reward, terminated, truncated, info = await env.astep(text)
                if terminated or truncated:
                    break
                count = len(info["new_items"])
                before, after = to_hf_messages(obs["input"][:-count]), to_hf_messages(obs["input"])
                merged, mask, logprobs = await self.ct_merge_context_msg(
                    before, after, ids, mask, logprobs, tools=tools
                )
                ids = merged.token_ids
                if len(mask) >= self.response_length:
                    reward, info = await env.afinish()
                    break
            response = ids[prompt_length:][: self.response_length]
            return AgentLoopOutput(
                prompt_ids=ids[:prompt_length],
                response_ids=response,
                response_mask=mask[: len(response)],
                response_logprobs=logprobs[: len(response)] if logprobs is not None else None,
                reward_score=0.0 if info["mask_sample"] else float(reward),
                num_turns=len(to_hf_messages(env.response["output"])) + len(messages),
                metrics=AgentLoopMetrics(),
                extra_fields={
                    "reward_extra_info": self._components(env_id, info),
                    "gym_llm": {
                        "env_id": env_id,
                        "failure_kind": info["failure_kind"],
                        "mask_sample": info["mask_sample"],
                        "tool_errors": info["tool_errors"],
                        "env_turns": info["num_turns"],
                    },
                },
            )

        def _components(self, env_id: str, info: Mapping[str, Any]) -> dict[str, float]:
            """Reward components under names fixed for the run: ``<env id>/<component>`` of every env."""
            values: dict[str, float] = {}
            for other in self.env_ids or [env_id]:
                names = info["reward_components"] if other == env_id else _component_names(other)
                for name in names:
                    values[f"{other}/{name}"] = (
                        float(info["reward_components"][name]) if other == env_id else float("nan")
                    )
            values["tool_errors"] = float(info["tool_errors"])
            return values

    GymLLMAgentLoop.__module__, GymLLMAgentLoop.__qualname__ = __name__, "GymLLMAgentLoop"
    return GymLLMAgentLoop


def __getattr__(name: str) -> Any:
    if name == "GymLLMAgentLoop":
        return _agent_loop_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _component_names(env_id: str) -> tuple[str, ...]:
    """An env's fixed reward component names, read off its class (no env is built)."""
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    entry = gymnasium.spec(env_id).entry_point
    env_class: Any = load_env_creator(entry) if isinstance(entry, str) else entry
    return tuple(env_class.reward_components)


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """VeRL reward function: the env's verdict on a decoded response taken as the model's last turn.

    For rows played by another agent loop (VeRL's ``single_turn_agent``): set
    ``reward.custom_reward_function.path`` to this module's file and ``name`` to ``compute_score``.
    Multi-turn tool use is lost in a decoded string: prefer :class:`GymLLMAgentLoop`, which sets
    ``reward_score`` itself.

    Returns:
        ``{"score": reward, **components}``.
    """
    extra_info = extra_info or {}
    env_id = str(extra_info.get("env_id") or data_source)
    key, env = _take(env_id, {})
    try:
        run_sync(env.areset(options={"task": _task_of(extra_info)}))
        reward, info = run_sync(env.afinish(solution_str))
    finally:
        _idle[key].append(env)
    return {"score": 0.0 if info["mask_sample"] else float(reward), **info["reward_components"]}
