"""``LLMEnv``: one LLM task episode as one ``gymnasium.Env`` episode.

``reset()`` hands out a task: the conversation and the tool schemas. ``step(action)`` takes the
model's turn. Tool calls are run and their outputs come back in the next observation; a turn
without tool calls, or the turn budget running out, ends the episode with the verified reward.

Example:
    >>> import gymnasium as gym, gym_llm
    >>> env = gym.make("llm/Weather-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(
    ...     '<tool_call>{"name": "get_weather", "arguments": {"city": "SF"}}</tool_call>')
    >>> [item["type"] for item in info["new_items"]]
    ['function_call_output']
    >>> obs, reward, terminated, truncated, info = env.step("It is cold in SF.")
    >>> reward, terminated
    (1.0, True)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import marshal
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
from pydantic import BaseModel, ValidationError

from gym_llm import items as it
from gym_llm.actions import InvalidAction, ToolCallParser, Turn, normalize_action, parse_hermes
from gym_llm.failures import INVALID_ACTION, JUDGE_ERROR, MALFORMED_RESPONSE, MAX_TURNS, VERIFY_ERROR
from gym_llm.judge.protocol import JudgeError
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

__all__ = ["INVALID_ACTION", "MAX_TURNS", "VERIFY_ERROR", "LLMEnv", "Observation"]


class LLMEnv(gymnasium.Env[Observation, Any]):
    """Base class of every gym_llm environment: one episode is one attempt at one task.

    A subclass provides:

    - ``task_model``: a :class:`~gym_llm.tasks.TaskRow` subclass declaring the row's verifier fields
      (rows are validated at load; a bad row names its field);
    - tools, as ``@tool`` methods (the JSON schema comes from the type hints and the docstring), and
      ``setup(task)`` / ``teardown()`` for per-episode state (rebuilt at every ``reset``);
    - ``verify(task, response) -> Verdict`` over plain data (sync or async), so it re-verifies
      recorded rollouts too; ``response["output"]`` is always a list of item dicts;
    - ``reward_components``: the names of the metrics every verdict carries (missing ones are 0.0);
    - ``reference_action(task, observation)``: the turn the task's ground truth implies (the
      offline reference policy, and the author's conformance check);
    - optionally ``default_tasks`` (default: ``data/example.jsonl`` beside the env's module),
      ``max_turns``, ``tool_timeout`` and ``execute_tools``.

    Episode API: :meth:`reset`/:meth:`areset` start an episode, :meth:`step`/:meth:`astep` take a
    model turn, :meth:`finish`/:meth:`afinish` end it early and verify, :meth:`call_tool`/
    :meth:`acall_tool` run one tool call for a trainer that runs tools itself. The ``a``-methods are
    the async core; the plain ones run them (also inside a running event loop, e.g. Jupyter).

    Observations are ``{"input": (item, ...), "tools": (schema, ...)}``: the whole conversation so far
    and the tool schemas, fresh objects every call, immutable tuples; ``**obs`` plus reset's
    ``info["params"]`` is a complete Responses API request.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 - gymnasium's name
    task_model: ClassVar[type[BaseModel]] = TaskRow
    default_tasks: ClassVar[str | Path | None] = None
    max_turns: int = 10
    tool_timeout: float = 30.0
    # False: a turn's tool calls are recorded, not run, and end the episode (NeMo's execute_tools)
    execute_tools: ClassVar[bool] = True
    # the metric names every Verdict of this env carries, in this order (VeRL reads them off one sample)
    reward_components: ClassVar[tuple[str, ...]] = ()
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

    async def user_turn(self) -> list[dict[str, Any]] | None:
        """The user's answer to a model turn without tool calls, or ``None`` to end the episode.

        The default ends the episode (the model's answer is final). A multi-turn env returns items
        to append, e.g. a simulated user's message (see :class:`~gym_llm.user_sim.UserSimEnv`); the
        episode then goes on, within ``max_turns``.
        """
        return None

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict | Awaitable[Verdict]:
        """Score a finished attempt (sync or ``async``): ``response["output"]`` holds every model item
        and tool output, as a list of item dicts."""
        raise NotImplementedError

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """The turn that the task's ground truth implies, given the conversation so far."""
        raise NotImplementedError(f"{type(self).__name__} has no reference solution")

    # ----------------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode on a task.

        Args:
            seed: Seeds ``self.np_random``, which draws the task (global RNGs are never touched).
            options: ``{"task_index": i}`` or ``{"task": row}`` pins the task.

        Returns:
            observation: ``{"input": (item, ...), "tools": (schema, ...)}``, the task's conversation and
                tool schemas as a Responses API request needs them.
            info: ``task_index`` (``None`` for a task given as a row) and ``params``: the row's other
                request fields (``instructions``, ``temperature``, ``tool_choice``, …) to send with
                the observation.
        """
        super().reset(seed=seed)
        return run_sync(self.areset(options=options))

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Take the model's turn.

        Args:
            action: The turn: Responses output items or a ``Response``; a Chat Completions assistant
                message or ``ChatCompletion``; or raw text (parsed by ``tool_call_parser``).

        Returns:
            observation: The conversation with the turn and its tool outputs appended, and the tools.
            reward: The verified reward when the episode ends, else 0.0.
            terminated: The model answered without tool calls and no user answers back (or the
                action was no turn at all).
            truncated: The turn budget (``max_turns``) ran out; the episode is still verified.
            info: Always ``num_turns``, ``tool_errors`` (failed calls so far, malformed ones
                included) and ``new_items`` (what the env appended after the turn: its tool outputs,
                or a simulated user's message).
                When the episode ends also ``reward_components`` (exactly ``reward_components``'s
                names), ``failure_kind`` (``None`` or why it failed), ``mask_sample`` (the failure
                lies outside the model's answer: keep the rollout out of training) and
                ``details`` (the verifier's record fields).
        """
        return run_sync(self.astep(action))

    def finish(self, action: Any = None) -> tuple[float, dict[str, Any]]:
        """End the episode now and verify it (a trainer hit its length or turn limit).

        Args:
            action: The model's last turn, recorded but with its tool calls not run (optional).

        Returns:
            reward: The verified reward.
            info: The same info as a final :meth:`step`.

        Raises:
            RuntimeError: Before ``reset``, or when the episode is already over.
        """
        return run_sync(self.afinish(action))

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str, *, count_turn: bool = True) -> str:
        """Run one tool call in the current episode, recorded like a one-call model turn.

        Args:
            name: The tool's name.
            arguments: Its arguments, as a mapping or a JSON string.
            count_turn: Whether the call uses up one turn of ``max_turns``.

        Returns:
            The tool output exactly as the model reads it: the result, or ``{"error": ...}`` for an
            unknown tool, bad arguments, a raising or hanging tool, or a spent turn budget.

        Raises:
            RuntimeError: Before ``reset``, or when the episode is already over.
        """
        return run_sync(self.acall_tool(name, arguments, count_turn=count_turn))

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
        """The async core of :meth:`reset` (which also seeds ``np_random``; here ``seed`` does)."""
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
        """The async core of :meth:`step`."""
        self._check_running("step")
        self._turns += 1
        turn = normalize_action(action, self.tool_call_parser)
        if isinstance(turn, InvalidAction):
            self._done = True
            verdict = Verdict(0.0, failure_kind=INVALID_ACTION, details={"error": turn.reason})
            return self._observation(), 0.0, True, False, self._final_info(self._completed(verdict), [])

        self._unique_call_ids(turn)
        self._add(turn.items)
        calls = [item for item in turn.items if item.get("type") == "function_call"]
        if turn.incomplete or (calls and not self.execute_tools):
            return await self._end(terminated=True, new_items=[])
        if calls:
            new_items = []
            for call in calls:
                parse_error = turn.call_errors.get(call["call_id"])
                output = self._tool_error(parse_error) if parse_error else await self._run_tool(call)
                new_items.append(it.function_call_output(call["call_id"], output))
        else:
            reply = await self.user_turn()
            if reply is None:
                return await self._end(terminated=True, new_items=[])
            new_items = [dict(item) for item in reply]
        self._add(new_items)
        if self._turns >= self.max_turns:
            return await self._end(terminated=False, new_items=new_items)
        info = {
            "num_turns": self._turns,
            "tool_errors": self._tool_errors,
            "new_items": it.copy_json(new_items),
        }
        return self._observation(), 0.0, False, False, info

    async def afinish(self, action: Any = None) -> tuple[float, dict[str, Any]]:
        """The async core of :meth:`finish`."""
        self._check_running("finish")
        if action is not None:
            self._turns += 1
            turn = normalize_action(action, self.tool_call_parser)
            if isinstance(turn, InvalidAction):  # as step() does: the episode ends unverified, reward 0
                self._done = True
                verdict = Verdict(0.0, failure_kind=INVALID_ACTION, details={"error": turn.reason})
                return 0.0, self._final_info(self._completed(verdict), [])
            self._unique_call_ids(turn)
            self._add(turn.items)
        _, reward, _, _, info = await self._end(terminated=True, new_items=[])
        return reward, info

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | str, *, count_turn: bool = True
    ) -> str:
        """The async core of :meth:`call_tool`."""
        self._check_running("call_tool")
        call = it.function_call(name, arguments, f"call_{self._turns}_{len(self._call_ids)}")
        self._call_ids.add(call["call_id"])
        if count_turn and self._turns >= self.max_turns:
            output = self._tool_error(f"The turn budget of {self.max_turns} turns is spent.")
        else:
            if count_turn:
                self._turns += 1
            output = await self._run_tool(call)
        self._add([call, it.function_call_output(call["call_id"], output)])
        return output

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """``verify`` awaited when async, never raising, its components completed.

        ``response["output"]`` reaches ``verify`` as a list of item dicts; a ``verify`` that raises
        gives reward 0 with ``failure_kind="verify_error"`` (a masked rollout).
        """
        output = response.get("output") if isinstance(response, Mapping) else None
        try:
            if not isinstance(output, list):
                raise TypeError(f"expected a list of items, got {type(output).__name__}")
            if not all(isinstance(item, dict) for item in output):
                response = {**response, "output": [it.as_item(item) for item in output]}
        except TypeError as exc:
            failed = Verdict(
                0.0, failure_kind=MALFORMED_RESPONSE, details={"error": f"response.output: {exc}"}
            )
            return self._completed(failed)
        try:
            verdict = self.verify(task, response)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except JudgeError as exc:  # a judge that could not answer: no verdict on the answer
            verdict = Verdict(0.0, failure_kind=JUDGE_ERROR, details={"error": str(exc)})
        except Exception as exc:
            verdict = Verdict(
                0.0, failure_kind=VERIFY_ERROR, details={"error": f"{type(exc).__name__}: {exc}"}
            )
        return self._completed(verdict)

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
        """Model turns (and counted ``call_tool`` calls) of the current episode so far."""
        return self._turns

    @property
    def done(self) -> bool:
        """Whether the current episode is over (``reset`` starts the next)."""
        return self._done

    @property
    def tool_errors(self) -> int:
        """Failed tool calls of the current episode so far, malformed ones included."""
        return self._tool_errors

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
        entry = self.tasks.frozen.get(index) if index is not None else None
        if entry is None:
            params = task["responses_create_params"]
            prompt = it.input_items(params["input"])
            tools = _freeze(tuple(params["tools"])) if params.get("tools") else None
            entry = (prompt, [_freeze(item) for item in prompt], tools)
            if index is not None:
                self.tasks.frozen[index] = entry
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

    def _check_running(self, what: str) -> None:
        if self.task is None:
            raise RuntimeError(f"call reset() before {what}()")
        if self._done:
            raise RuntimeError(f"the episode is over: call reset() to start a new one before {what}()")

    def _completed(self, verdict: Verdict) -> Verdict:
        """The verdict with exactly this env's ``reward_components`` (missing ones 0.0, in order)."""
        extra = set(verdict.components) - set(self.reward_components)
        if extra:
            return Verdict(
                0.0,
                dict.fromkeys(self.reward_components, 0.0),
                {
                    "error": f"verify returned components {sorted(extra)} not in {type(self).__name__}"
                    f".reward_components {self.reward_components}"
                },
                VERIFY_ERROR,
            )
        if tuple(verdict.components) != self.reward_components:
            verdict.components = {
                name: float(verdict.components.get(name, 0.0)) for name in self.reward_components
            }
        return verdict

    async def _end(self, *, terminated: bool, new_items: list[dict[str, Any]]):
        self._done = True
        assert self.task is not None  # _check_running ran first
        verdict = await self.averify(self.task, self.response)
        if not terminated and verdict.failure_kind is None and verdict.reward <= 0:
            verdict.failure_kind = MAX_TURNS
        return (
            self._observation(),
            float(verdict.reward),
            terminated,
            not terminated,
            self._final_info(verdict, new_items),
        )

    def _final_info(self, verdict: Verdict, new_items: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "num_turns": self._turns,
            "tool_errors": self._tool_errors,
            "new_items": it.copy_json(new_items),
            "reward_components": dict(verdict.components),
            "failure_kind": verdict.failure_kind,
            "mask_sample": verdict.mask_sample,
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
