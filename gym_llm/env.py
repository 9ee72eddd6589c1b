"""``LLMEnv``: one LLM task episode as one ``gymnasium.Env`` episode.

``reset()`` hands out a task: the conversation and the tool schemas. ``step(action)`` takes the
model's turn. Tool calls are run and their outputs come back in the next observation; a turn
without tool calls, or the turn budget running out, ends the episode with the verified reward.

Subclasses declare:

- ``task_model``: a :class:`~gym_llm.tasks.TaskRow` subclass for their row fields;
- ``default_tasks``: the JSONL file used when no tasks are given (default: ``data/example.jsonl``
  beside the env's module, if there is one);
- tools as ``@tool`` methods, and ``setup(task)`` to build per-episode state;
- ``verify(task, response) -> Verdict`` over plain data (sync or async), so it re-verifies
  recorded rollouts too;
- ``reference_action(task, observation)``: the turn the task's ground truth implies.

Example:
    >>> import gymnasium as gym, gym_llm
    >>> env = gym.make("llm/Weather-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(
    ...     '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>')
    >>> obs, reward, terminated, truncated, info = env.step("It is cold in SF.")
    >>> reward, terminated
    (1.0, True)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import marshal
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
from pydantic import BaseModel, ValidationError

from gym_llm import items as it
from gym_llm.actions import InvalidAction, ToolCallParser, Turn, normalize_action, parse_hermes
from gym_llm.spaces import ActionSpace, observation_space
from gym_llm.sync import run_sync
from gym_llm.tasks import TaskError, TaskRow, check_row, load_tasks
from gym_llm.tools import (
    ToolError,
    ToolSpec,
    collect_tools,
    describe_validation_error,
    error_output,
    format_output,
)
from gym_llm.verdict import Verdict

Observation = dict[str, tuple]

# failure_kind values set by the env itself
INVALID_ACTION = "invalid_action"
MAX_TURNS = "max_turns"
VERIFY_ERROR = "verify_error"


class LLMEnv(gymnasium.Env[Observation, Any]):
    """Base class of every gym_llm environment. See the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}
    task_model: ClassVar[type[BaseModel]] = TaskRow
    default_tasks: ClassVar[str | Path | None] = None
    max_turns: int = 10
    tool_timeout: float = 30.0
    # False: a turn's tool calls are recorded, not run, and end the episode (NeMo's execute_tools)
    execute_tools: ClassVar[bool] = True
    tools: ClassVar[dict[str, ToolSpec]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.tools = collect_tools(cls)
        if "default_tasks" not in vars(cls):  # an env folder's convention: data/example.jsonl
            bundled = Path(inspect.getfile(cls)).parent / "data" / "example.jsonl"
            if bundled.is_file():
                cls.default_tasks = bundled

    def __init__(
        self,
        tasks: Any = None,
        *,
        max_turns: int | None = None,
        tool_call_parser: ToolCallParser = parse_hermes,
        tool_timeout: float | None = None,
        render_mode: str | None = None,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows: a list, a JSONL path, a ``datasets.Dataset`` or ``"hf:ID[:SPLIT]"``.
                Default: the env's bundled example file.
            max_turns: Model turns before the episode is truncated (and still verified).
            tool_call_parser: Parses tool calls out of raw-text actions.
            tool_timeout: Seconds an async or blocking tool may take.
            render_mode: ``"ansi"`` or ``None``.
        """
        self.tasks = load_tasks(tasks if tasks is not None else self.default_tasks, self.task_model)
        if max_turns is not None:
            if max_turns < 1:
                raise ValueError(f"max_turns must be at least 1, got {max_turns}")
            self.max_turns = max_turns
        if tool_timeout is not None:
            self.tool_timeout = tool_timeout
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.tool_call_parser = tool_call_parser
        self.observation_space = observation_space()
        self.action_space = ActionSpace(tuple(self.tools))
        # shown when a row carries no tool schemas; an env may replace them (e.g. NeMo's exact schemas)
        self.default_tool_schemas = tuple(spec.schema for spec in self.tools.values())
        self.task: dict[str, Any] | None = None
        self.task_index: int | None = None
        self._reset_episode()

    # ----------------------------------------------------------------- subclass hooks
    def setup(self, task: dict[str, Any]) -> None:
        """Build per-episode state from the task row (called by ``reset``)."""

    def teardown(self) -> None:
        """Free per-episode resources (called before each ``reset`` and by ``close``)."""

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """Score a finished attempt: ``response["output"]`` holds every model item and tool output."""
        raise NotImplementedError

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """The turn that the task's ground truth implies, given the conversation so far."""
        raise NotImplementedError(f"{type(self).__name__} has no reference solution")

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        return run_sync(self.areset(options=options))

    def step(self, action: Any):
        return run_sync(self.astep(action))

    def close(self) -> None:
        self.teardown()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        lines = []
        for item in self._conversation:
            kind = item.get("type", "message")
            if kind == "message":
                lines.append(f"[{item.get('role')}] {it.content_text(item.get('content'))}")
            elif kind == "function_call":
                lines.append(f"[call {item['call_id']}] {item['name']}({item['arguments']})")
            elif kind == "function_call_output":
                lines.append(f"[output {item['call_id']}] {item['output']}")
            else:
                summary = item.get("summary") or [{}]
                lines.append(f"[{kind}] {summary[0].get('text', '')}")
        return "\n".join(lines)

    # ----------------------------------------------------------------- async core
    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode. ``options``: ``{"task_index": i}`` or ``{"task": row}`` pins the task."""
        if seed is not None:
            super().reset(seed=seed)
        task, index = self._choose_task(options or {})
        self.teardown()
        self._reset_episode()
        self.task, self.task_index = task, index
        params = task["responses_create_params"]
        prompt, frozen_prompt, frozen_tools = self._frozen_task(task, index)
        self._conversation.extend(prompt)
        self._frozen_conversation.extend(frozen_prompt)
        self._frozen_tools = frozen_tools if frozen_tools is not None else self._frozen_default_tools()
        self.setup(task)
        info = {"task_index": index, "params": _sampling_params(params)}
        return self._observation(), info

    async def astep(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode is over: call reset() to start a new one")
        self._turns += 1
        turn = normalize_action(action, self.tool_call_parser)
        if isinstance(turn, InvalidAction):
            self._done = True
            info = self._final_info(Verdict(0.0, failure_kind=INVALID_ACTION, details={"error": turn.reason}))
            return self._observation(), 0.0, True, False, info

        self._unique_call_ids(turn)
        self._add(turn.items)
        calls = [item for item in turn.items if item.get("type") == "function_call"]
        if not calls or turn.incomplete or not self.execute_tools:
            return await self._finish(terminated=True)
        for call in calls:
            parse_error = turn.call_errors.get(call["call_id"])
            output = error_output(parse_error) if parse_error else await self._run_tool(call)
            self._add([it.function_call_output(call["call_id"], output)])
        if self._turns >= self.max_turns:
            return await self._finish(terminated=False)
        return self._observation(), 0.0, False, False, {"num_turns": self._turns}

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """``verify`` that is awaited when async and never raises (errors give a zero reward)."""
        try:
            verdict = self.verify(task, response)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            return Verdict(0.0, failure_kind=VERIFY_ERROR, details={"error": f"{type(exc).__name__}: {exc}"})
        return verdict

    def verify_row(self, row: dict[str, Any]) -> Verdict:
        """Re-verify a recorded rollout row (a task row with a ``response``)."""
        check_row(row, self.task_model, "rollout row")
        if not isinstance(row.get("response"), dict) or not isinstance(row["response"].get("output"), list):
            raise TaskError("rollout row: field 'response.output' is missing or not a list")
        return run_sync(self.averify(row, row["response"]))

    @property
    def response(self) -> dict[str, Any]:
        """The episode so far as a Responses object: every model item and tool output in order."""
        return {"output": list(self._output)}

    def is_live_response(self, task: dict[str, Any], response: dict[str, Any]) -> bool:
        """Whether ``verify`` is scoring this env's running episode (the very objects, not a copy).

        Stateful envs can then read their live state instead of replaying a recorded rollout.
        """
        output = response.get("output")
        return (
            task is self.task
            and isinstance(output, list)
            and len(output) == len(self._output)
            and all(a is b for a, b in zip(output, self._output))  # noqa: B905 - lengths checked
        )

    @property
    def num_turns(self) -> int:
        return self._turns

    # ----------------------------------------------------------------- internals
    def _reset_episode(self) -> None:
        self._conversation: list[dict[str, Any]] = []
        self._frozen_conversation: list[Any] = []  # marshalled items: fresh copies cost one C call
        self._output: list[dict[str, Any]] = []
        self._call_ids: set[str] = set()
        self._turns = 0
        self._tool_errors = 0
        self._done = False

    def _choose_task(self, options: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
        if "task" in options:
            task = options["task"]
            check_row(task, self.task_model, "options['task']")
            return task, None
        if "task_index" in options:
            index = int(options["task_index"])
            if not 0 <= index < len(self.tasks):
                raise IndexError(f"task_index {index} is out of range for {len(self.tasks)} tasks")
            return self.tasks[index], index
        index = int(self.np_random.integers(len(self.tasks)))
        return self.tasks[index], index

    def _frozen_task(self, task: dict[str, Any], index: int | None) -> tuple[list, list, Any]:
        """The row's prompt items, them marshalled, and its marshalled tools (None: the env's own)."""
        cache = self.tasks.frozen if index is not None else {}
        entry = cache.get(index)
        if entry is None:
            params = task["responses_create_params"]
            prompt = it.input_items(params["input"])
            tools = _freeze(tuple(params["tools"])) if params.get("tools") else None
            entry = cache[index] = (prompt, [_freeze(item) for item in prompt], tools)
        return entry

    def _frozen_default_tools(self) -> Any:
        # keyed on the attribute itself: an env may replace default_tool_schemas after __init__
        schemas, frozen = getattr(self, "_frozen_defaults", (None, None))
        if schemas is not self.default_tool_schemas:
            frozen = _freeze(self.default_tool_schemas)
            self._frozen_defaults = (self.default_tool_schemas, frozen)
        return frozen

    def _observation(self) -> Observation:
        # Fresh objects every call: callers keep observations, and gymnasium checks for sharing.
        return {
            "input": tuple([_thaw(item) for item in self._frozen_conversation]),
            "tools": _thaw(self._frozen_tools),
        }

    def _add(self, new_items: list[dict[str, Any]], *, output: bool = True) -> None:
        self._conversation.extend(new_items)
        self._frozen_conversation.extend(_freeze(item) for item in new_items)
        if output:
            self._output.extend(new_items)

    def _unique_call_ids(self, turn: Turn) -> None:
        for item in turn.items:
            if item.get("type") != "function_call":
                continue
            call_id = item["call_id"]
            if call_id in self._call_ids:
                new_id = f"call_{self._turns}_{len(self._call_ids)}"
                if call_id in turn.call_errors:
                    turn.call_errors[new_id] = turn.call_errors.pop(call_id)
                item["call_id"] = call_id = new_id
            self._call_ids.add(call_id)

    async def _run_tool(self, call: dict[str, Any]) -> str:
        """Run one tool call; every failure becomes an error output the model can read."""
        name = call["name"]
        spec = self.tools.get(name)
        if spec is None:
            return self._tool_error(
                f"Unknown tool {name!r}. Available tools: {', '.join(self.tools) or 'none'}."
            )
        args = it.parse_arguments(call)
        if args is None:
            return self._tool_error(f"Invalid tool call arguments for {name}: expected a JSON object.")
        try:
            kwargs = spec.validate(args)
        except ValidationError as exc:
            return self._tool_error(f"Invalid arguments for {name}: {describe_validation_error(exc)}")
        timeout = spec.timeout if spec.timeout is not None else self.tool_timeout
        try:
            if spec.is_async:
                result = await asyncio.wait_for(spec.method(self, **kwargs), timeout)
            elif spec.blocking:
                loop = asyncio.get_running_loop()
                job = loop.run_in_executor(None, functools.partial(spec.method, self, **kwargs))
                result = await asyncio.wait_for(job, timeout)
            else:
                result = spec.method(self, **kwargs)
            return format_output(result)
        except asyncio.TimeoutError:
            return self._tool_error(f"Tool {name} timed out after {timeout:g} s.")
        except ToolError as exc:
            return self._tool_error(str(exc))
        except Exception as exc:
            return self._tool_error(f"Tool {name} failed: {type(exc).__name__}: {exc}")

    def _tool_error(self, message: str) -> str:
        self._tool_errors += 1
        return error_output(message)

    async def _finish(self, *, terminated: bool):
        self._done = True
        verdict = await self.averify(self.task, self.response)
        if not terminated and verdict.failure_kind is None and verdict.reward <= 0:
            verdict.failure_kind = MAX_TURNS
        return (
            self._observation(),
            float(verdict.reward),
            terminated,
            not terminated,
            self._final_info(verdict),
        )

    def _final_info(self, verdict: Verdict) -> dict[str, Any]:
        return {
            "num_turns": self._turns,
            "tool_errors": self._tool_errors,
            "reward_components": dict(verdict.components),
            "failure_kind": verdict.failure_kind,
            "details": it.copy_json(verdict.details),
        }


def _freeze(data: Any) -> Any:
    """``data`` marshalled, or as it is if it holds something marshal cannot write."""
    try:
        return marshal.dumps(data)
    except ValueError:
        return data


def _thaw(frozen: Any) -> Any:
    """A fresh copy of frozen data."""
    return marshal.loads(frozen) if frozen.__class__ is bytes else it.copy_json(frozen)


def _sampling_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The row's request fields other than the conversation and tools (temperature, …)."""
    return {key: it.copy_json(value) for key, value in params.items() if key not in ("input", "tools")}
