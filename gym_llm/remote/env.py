"""``llm/Remote-v0``: a gym_llm env whose episodes run on a ``gym-llm serve`` server elsewhere.

It speaks the server's reset/step protocol and is an :class:`~gym_llm.env.LLMEnv` whose whole
episode API (``areset``/``astep``/``afinish``/``acall_tool``/``averify`` and the sync facade)
runs on the server, so ``gymnasium.make_vec("llm/Remote-v0", num_envs=N, base_url=...)`` steps N
remote episodes concurrently on one event loop, and the collector plays it like a local env.

Example:
    >>> from gym_llm.server import EnvServer
    >>> with EnvServer("llm/Weather-v0") as server:  # e.g. `gym-llm serve llm/Weather-v0` elsewhere
    ...     env = RemoteEnv(server.base_url)
    ...     obs, info = env.reset(seed=0)
    ...     obs, reward, terminated, truncated, info = env.step("It is cold in SF.")
    ...     env.close()
    >>> reward, terminated, [item["role"] for item in obs["input"]]
    (0.0, True, ['developer', 'user', 'assistant'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium

from gym_llm.env import LLMEnv, Observation
from gym_llm.failures import VERIFY_ERROR
from gym_llm.remote.client import RemoteError, RemoteRequestError, ServerClient
from gym_llm.remote.verdicts import verdict_from_reply
from gym_llm.spaces import ActionSpace, observation_space
from gym_llm.sync import run_sync
from gym_llm.tasks import TaskSet, load_tasks
from gym_llm.verdict import Verdict


class RemoteEnv(LLMEnv):
    """An env served by ``gym-llm serve ENV_ID``: each episode runs in a session on the server.

    Nothing of the env runs here: action parsing, tools, verifiers and the episode state live on
    the server. The instance holds the session id, the episode's task and its output so far.

    Args:
        base_url: The server, e.g. ``http://127.0.0.1:8000``.
        tasks: Task rows to pick from by ``task_index`` (sent to the server as rows); default:
            the server's own tasks (``task_index`` then picks among them on the server).
        token: The server's bearer token, if it has one.
        timeout: Seconds one request may take (a step runs the env's tools and maybe its verifier).
        render_mode: ``"ansi"`` or ``None``.

    Raises:
        RemoteError: The server cannot be reached or refuses to describe its env.

    Attributes:
        env_id: The id of the env the server serves.
        reward_components: The metric names of its verdicts.
        default_tool_schemas: Its own tool schemas (task rows may carry theirs).
        max_turns: Its turn budget.
        task, task_index: The current episode's task row and index (``None`` for a given row).
    """

    def __init__(
        self,
        base_url: str,
        tasks: Any = None,
        *,
        token: str | None = None,
        timeout: float = 300.0,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.client = ServerClient(base_url, token=token, timeout=timeout)
        described = run_sync(self._get_once("/env_info"))
        self.env_id: str = described["env_id"]
        # the served env's names, known only once asked: an instance attribute here
        self.reward_components = tuple(described["reward_components"])  # type: ignore[misc]
        self.default_tool_schemas: tuple[dict[str, Any], ...] = tuple(described["tools"])
        self.max_turns = described["max_turns"]
        self.num_tasks: int = described["num_tasks"]
        self._tasks: TaskSet | None = load_tasks(tasks) if tasks is not None else None
        self.observation_space = observation_space()
        self.action_space = ActionSpace(tuple(schema["name"] for schema in self.default_tool_schemas))
        self.session_id: str | None = None
        self.task: dict[str, Any] | None = None
        self.task_index: int | None = None
        self._output: list[dict[str, Any]] = []
        self._conversation: list[dict[str, Any]] = []  # what render() shows
        self._turns = 0

    async def _get_once(self, path: str) -> Any:
        # from whatever loop run_sync uses here, in a session closed at once: the episodes open
        # theirs in the loop they run in
        try:
            return await self.client.call("GET", path)
        finally:
            await self.client.close()

    @property
    def tasks(self) -> TaskSet:
        """The task rows: those given, or the server's (fetched once, on first use)."""
        if self._tasks is None:
            self._tasks = load_tasks(run_sync(self._get_once("/tasks")))
        return self._tasks

    @tasks.setter
    def tasks(self, rows: Any) -> None:
        self._tasks = load_tasks(rows)

    # ----------------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode on the server; the same arguments and returns as ``LLMEnv.reset``."""
        gymnasium.Env.reset(self, seed=seed)
        return run_sync(self.areset(seed=seed, options=options))

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Send the model's turn; the same returns as ``LLMEnv.step``.

        Raises:
            RuntimeError: The episode is over, or none was started (a :class:`RemoteError`).
        """
        return run_sync(self.astep(action))

    def finish(self, action: Any = None) -> tuple[float, dict[str, Any]]:
        """End the episode now and verify it; the same returns as ``LLMEnv.finish``."""
        return run_sync(self.afinish(action))

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str, *, count_turn: bool = True) -> str:
        """Run one tool call in the episode on the server; the same returns as ``LLMEnv.call_tool``."""
        return run_sync(self.acall_tool(name, arguments, count_turn=count_turn))

    def close(self) -> None:
        """Close the server-side session and this env's connections."""
        run_sync(self.aclose())

    # ----------------------------------------------------------------- async core
    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """The async core of :meth:`reset`; a session that expired on the server is replaced."""
        options = dict(options or {})
        local_index = None
        if self._tasks is not None and "task" not in options:  # our rows, sent as rows
            if "task_index" in options:
                local_index = int(options.pop("task_index"))
                if not 0 <= local_index < len(self._tasks):
                    raise IndexError(f"task_index {local_index} is out of range for {len(self._tasks)} tasks")
            else:
                if seed is not None:
                    gymnasium.Env.reset(self, seed=seed)
                local_index = int(self.np_random.integers(len(self._tasks)))
            options["task"] = self._tasks[local_index]
        payload = {"session_id": self.session_id, "seed": seed, "options": options}
        try:
            reply = await self.client.call("POST", "/reset", payload)
        except RemoteRequestError as exc:
            if exc.status != 404 or exc.field != "session_id":
                raise
            payload["session_id"] = None  # the session expired on the server: start a new one
            reply = await self.client.call("POST", "/reset", payload)
        info = reply["info"]
        if local_index is not None:
            info["task_index"] = local_index
        self.session_id = reply["session_id"]
        self.task = reply["task"]
        self.task_index = info.get("task_index")
        self._output = []
        self._turns = 0
        return self._to_observation(reply["observation"]), info

    async def astep(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """The async core of :meth:`step`."""
        reply = await self.client.call(
            "POST", "/step", {"session_id": self._require_session("step"), "action": _jsonable(action)}
        )
        self._output.extend(reply["output"])
        self._turns = reply["info"].get("num_turns", self._turns + 1)
        obs = self._to_observation(reply["observation"])
        return obs, reply["reward"], reply["terminated"], reply["truncated"], reply["info"]

    async def afinish(self, action: Any = None) -> tuple[float, dict[str, Any]]:
        """The async core of :meth:`finish`."""
        payload = {"session_id": self._require_session("finish"), "action": _jsonable(action)}
        reply = await self.client.call("POST", "/finish", payload)
        self._output.extend(reply["output"])
        self._turns = reply["info"].get("num_turns", self._turns)
        return reply["reward"], reply["info"]

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | str, *, count_turn: bool = True
    ) -> str:
        """The async core of :meth:`call_tool`."""
        payload = {
            "session_id": self._require_session("call_tool"),
            "name": name,
            "arguments": arguments if isinstance(arguments, str) else dict(arguments),
            "count_turn": count_turn,
        }
        reply = await self.client.call("POST", "/call_tool", payload)
        self._output.extend(reply["items"])
        self._conversation.extend(reply["items"])
        if count_turn:
            self._turns += 1
        return reply["output"]

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """Verify a recorded attempt with the server's verifier (``POST /verify``, no session).

        Returns:
            The server env's verdict; a refused row or an unreachable server gives reward 0 with
            ``failure_kind="verify_error"`` (a masked rollout), as a raising ``verify`` does.
        """
        try:
            result = await self.client.call("POST", "/verify", {**task, "response": dict(response)})
        except RemoteError as exc:
            return Verdict(0.0, dict.fromkeys(self.reward_components, 0.0), {"error": str(exc)}, VERIFY_ERROR)
        return verdict_from_reply(result, task, self.reward_components)

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """The server's verdict (see :meth:`averify`)."""
        return run_sync(self.averify(task, response))

    def is_live_response(self, task: dict[str, Any], response: dict[str, Any]) -> bool:
        """Never: the live episode's state is on the server."""
        return False

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        raise NotImplementedError("the reference solution of a remote env runs on its server, not here")

    async def aclose(self) -> None:
        """The async core of :meth:`close`."""
        if self.session_id is not None:
            try:
                await self.client.call("POST", "/close", {"session_id": self.session_id})
            except RemoteError:
                pass  # the server is gone or the session expired: nothing left to free
            self.session_id = None
        await self.client.close()

    # ----------------------------------------------------------------- episode state
    @property
    def response(self) -> dict[str, Any]:
        """The episode so far as a Responses object: every model item and tool output in order."""
        return {"output": list(self._output)}

    @property
    def num_turns(self) -> int:
        return self._turns

    # ----------------------------------------------------------------- internals
    def _to_observation(self, raw: Mapping[str, Any]) -> Observation:
        self._conversation = list(raw["input"])
        return {"input": tuple(raw["input"]), "tools": tuple(raw["tools"])}

    def _require_session(self, what: str) -> str:
        if self.session_id is None:
            raise RuntimeError(f"call reset() before {what}()")
        return self.session_id


def _jsonable(action: Any) -> Any:
    """A model turn as JSON data: SDK objects (a ``Response``, a chat message, items) as dicts."""
    if action is None or isinstance(action, (str, int, float, bool)):
        return action
    if isinstance(action, Mapping):
        return {key: _jsonable(value) for key, value in action.items()}
    if isinstance(action, (list, tuple)):
        return [_jsonable(value) for value in action]
    dump = getattr(action, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    raise TypeError(f"cannot send an action of type {type(action).__name__} to the server")
