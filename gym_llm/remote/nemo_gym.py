"""``llm/NeMoGym-v0``: any running NeMo Gym resources server as a gymnasium env.

The episode loop is gym_llm's own (observations, action parsing, turn budget); the server does
what NeMo's ``simple_agent`` asks of it: ``reset`` seeds a session (``POST /seed_session`` with
the task row), each tool call the model makes is ``POST /<tool>`` with the session cookie (the
reply body is the tool output the model reads, as simple_agent hands it over), the episode's end
is ``POST /verify`` with the row and a full Responses object, and the session is then closed
(``POST /close_session``, which servers without that route simply refuse).

Example:
    >>> from gym_llm.server import EnvServer
    >>> from gym_llm.envs.weather.env import WeatherEnv
    >>> rows = WeatherEnv().tasks  # NeMo Gym rows, as in its data/example.jsonl
    >>> with EnvServer("llm/Weather-v0") as server:  # any NeMo Gym resources server
    ...     env = NeMoGymEnv(server.base_url, rows)
    ...     obs, info = env.reset(seed=0)
    ...     call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    ...     obs, reward, terminated, truncated, info = env.step(call)
    ...     print(obs["input"][-1]["output"])
    ...     obs, reward, terminated, truncated, info = env.step("It is cold.")
    ...     env.close()
    {"city":"Oslo","weather_description":"The weather in Oslo is cold."}
    >>> reward
    1.0
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from gym_llm import items as it
from gym_llm.actions import ToolCallParser, parse_hermes
from gym_llm.env import LLMEnv, Observation
from gym_llm.remote.client import RemoteError, ServerClient
from gym_llm.remote.nemo_response import nemo_response
from gym_llm.remote.verdicts import verdict_from_reply
from gym_llm.spaces import ActionSpace
from gym_llm.sync import run_sync
from gym_llm.verdict import Verdict

log = logging.getLogger(__name__)


class NeMoGymEnv(LLMEnv):
    """Episodes on the tasks ``tasks``, with tools and verification by a NeMo Gym resources server.

    Args:
        base_url: The resources server, e.g. ``http://127.0.0.1:8000`` (a ``gym-llm serve`` server
            is one too).
        tasks: NeMo Gym task rows (a list, a JSONL path, ``hf:ID``): each row's
            ``responses_create_params.tools`` are the tools the server serves.
        token: A bearer token, for servers that want one.
        typed_sessions: Seed with NeMo 0.7's typed body (``{resources_session_id, episode_id,
            task_id, task_data}``) and close by ``resources_session_id``, instead of posting the
            whole row (the form every NeMo resources server accepts) and closing by cookie.
        reward_components: The component names to read from the verify reply's
            ``reward_components`` (others are kept in the verdict's details).
        timeout: Seconds one request may take.
        max_turns, tool_call_parser, tool_timeout, render_mode: As for :class:`LLMEnv`.
    """

    def __init__(
        self,
        base_url: str,
        tasks: Any = None,
        *,
        token: str | None = None,
        typed_sessions: bool = False,
        reward_components: Sequence[str] = (),
        timeout: float = 300.0,
        max_turns: int | None = None,
        tool_call_parser: ToolCallParser = parse_hermes,
        tool_timeout: float | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__(
            tasks,
            max_turns=max_turns,
            tool_call_parser=tool_call_parser,
            tool_timeout=tool_timeout,
            render_mode=render_mode,
        )
        self.client = ServerClient(base_url, token=token, timeout=timeout)
        self.typed_sessions = typed_sessions
        # a remote verifier's names are the caller's to give: an instance attribute here
        self.reward_components = tuple(reward_components)  # type: ignore[misc]
        names = {
            schema["name"]
            for row in self.tasks
            for schema in row["responses_create_params"].get("tools") or []
            if isinstance(schema, dict) and isinstance(schema.get("name"), str)
        }
        self.action_space = ActionSpace(tuple(sorted(names)))
        self._cookies: dict[str, str] = {}
        self._resources_session_id: str | None = None
        self._episode_id: dict[str, Any] | None = None
        self._episode_tools: frozenset[str] = frozenset()

    # ----------------------------------------------------------------- episode
    async def areset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        """Start an episode and seed its session on the server.

        Raises:
            RemoteError: The server could not be reached or refused the seed.
        """
        await self._close_session()
        obs, info = await super().areset(seed=seed, options=options)
        task = self.task
        assert task is not None
        self._episode_tools = frozenset(schema.get("name") for schema in obs["tools"])
        await self._seed_session(task)
        return obs, info

    async def _seed_session(self, task: dict[str, Any]) -> None:
        if self.typed_sessions:
            self._resources_session_id = f"resources-session-{uuid.uuid4().hex}"
            self._episode_id = {"rollout_id": uuid.uuid4().hex, "attempt": 0}
            payload: dict[str, Any] = {
                "resources_session_id": self._resources_session_id,
                "episode_id": self._episode_id,
                "task_id": {"taskset": "gym_llm", "task_id": str(self.task_index)},
                "task_data": {key: value for key, value in task.items() if key != "responses_create_params"},
            }
        else:
            payload = task
        reply = await self.client.request("POST", "/seed_session", payload)
        if reply.status != 200:
            raise RemoteError(
                f"{self.client.base_url}/seed_session: HTTP {reply.status}: {reply.excerpt()}",
                reply.status,
            )
        self._cookies = dict(reply.cookies)

    async def _close_session(self) -> None:
        if not self._cookies and self._resources_session_id is None:
            return
        if self._resources_session_id is not None:
            payload: dict[str, Any] = {
                "resources_session_id": self._resources_session_id,
                "episode_id": self._episode_id,
            }
        else:
            payload = {}
        try:
            reply = await self.client.request("POST", "/close_session", payload, cookies=self._cookies)
            if reply.status != 200:  # older servers have no such route: the session ends with them
                log.debug("close_session answered HTTP %s", reply.status)
        except RemoteError as exc:
            log.debug("close_session failed: %s", exc)
        self._cookies = {}
        self._resources_session_id = self._episode_id = None

    def close(self) -> None:
        run_sync(self._close_session())
        run_sync(self.client.close())
        super().close()

    # ----------------------------------------------------------------- tools
    async def _run_tool(self, call: dict[str, Any]) -> str:
        """``POST /<name>`` with the call's arguments; the reply body is the output, as simple_agent
        passes it on (an HTTP error's body included, counted as a tool error)."""
        name = call["name"]
        if name not in self._episode_tools:
            available = ", ".join(sorted(self._episode_tools)) or "none"
            return self._tool_error(f"Unknown tool {name!r}. Available tools: {available}.")
        arguments = it.parse_arguments(call)
        if arguments is None:
            return self._tool_error(f"Invalid tool call arguments for {name}: expected a JSON object.")
        try:
            reply = await asyncio.wait_for(
                self.client.request("POST", "/" + quote(name, safe=""), arguments, cookies=self._cookies),
                self.tool_timeout,
            )
        except asyncio.TimeoutError:
            return self._tool_error(f"Tool {name} timed out after {self.tool_timeout:g} s.")
        except RemoteError as exc:
            return self._tool_error(f"Tool {name} failed: the resources server could not be reached: {exc}")
        self._cookies.update(reply.cookies)
        if reply.status != 200:
            self._tool_errors += 1
        return reply.body.decode(errors="replace")  # as simple_agent reads it

    # ----------------------------------------------------------------- verify
    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """``POST /verify`` with the row and the episode as a full Responses object.

        The live episode is verified in its session, which is closed afterwards; a recorded row
        (``gym_llm.verify``) is verified without one.
        """
        live = self.is_live_response(task, response)
        payload = {**task, "response": nemo_response(response["output"], task["responses_create_params"])}
        reply = await self.client.request("POST", "/verify", payload, cookies=self._cookies if live else None)
        if live:
            self._cookies.update(reply.cookies)
            await self._close_session()
        result = reply.json()
        if reply.status != 200 or not isinstance(result, dict) or "reward" not in result:
            raise RemoteError(
                f"{self.client.base_url}/verify: HTTP {reply.status}: {reply.excerpt()}",
                reply.status,
            )
        return verdict_from_reply(result, task, self.reward_components)
