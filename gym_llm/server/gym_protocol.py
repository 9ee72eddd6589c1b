"""The reset/step protocol: gymnasium's episode API over HTTP, one session per remote env.

Routes (``POST`` with a JSON body; the env's own semantics, JSON in and out):

- ``/reset`` ``{session_id?, seed?, options?}`` → ``{session_id, observation, info, task}``:
  without ``session_id`` a new session; ``options`` as ``LLMEnv.reset`` takes them
  (``task_index`` or ``task``).
- ``/step`` ``{session_id, action}`` → ``{observation, reward, terminated, truncated, info, output}``;
  ``action`` is a model turn in any JSON form the env accepts (text, Responses items or a
  Response, a Chat Completions message), and ``output`` the items this step added to the
  episode's response.
- ``/finish`` ``{session_id, action?}`` → ``{reward, info, output}``.
- ``/call_tool`` ``{session_id, name, arguments, count_turn?}`` → ``{output, items}``.
- ``/close`` ``{session_id}`` → ``{closed}``; idempotent.

Observations are ``{"input": [...], "tools": [...]}``. Stepping an episode that is over is a 409.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from gym_llm.server.bodies import RequestError, field, json_response, read_object
from gym_llm.server.served_env import ServedEnv
from gym_llm.server.sessions import Session

_NO_EPISODE = "the episode is over, or none was started in this session: reset to start one"


class GymRoutes:
    """The handlers of the reset/step routes for one served env."""

    def __init__(self, served: ServedEnv) -> None:
        self.served = served
        self.store = served.store

    def add_to(self, app: web.Application) -> None:
        app.router.add_post("/reset", self.reset)
        app.router.add_post("/step", self.step)
        app.router.add_post("/finish", self.finish)
        app.router.add_post("/call_tool", self.call_tool)
        app.router.add_post("/close", self.close)

    async def reset(self, request: web.Request) -> web.Response:
        body = await read_object(request, "reset body")
        session_id = field(body, "session_id", (str, type(None)), default=None)
        seed = field(body, "seed", (int, type(None)), default=None)
        if seed is not None and seed < 0:
            raise RequestError(422, f"field 'seed' must be a non-negative integer, got {seed}", "seed")
        options = dict(field(body, "options", (dict, type(None)), default=None) or {})
        if "task_index" in options:
            index = field(options, "task_index", int, prefix="options.")
            num_tasks = len(self.served.template.tasks)
            if not 0 <= index < num_tasks:
                raise RequestError(
                    422,
                    f"options.task_index {index} is out of range for {num_tasks} tasks",
                    "options.task_index",
                )
        if "task" in options:
            self.served.check_row(
                field(options, "task", dict, prefix="options."), "options.task", "options.task"
            )
        new = session_id is None
        session = self.store.open() if new else self.served.require_session(session_id)
        try:
            async with self.store.using(session):
                obs, info = await session.env.areset(seed=seed, options=options)
                session.running = True
                task = session.env.task
        except BaseException:
            if new:
                await self.store.close(session)
            raise
        return json_response({"session_id": session.id, "observation": obs, "info": info, "task": task})

    async def step(self, request: web.Request) -> web.Response:
        body = await read_object(request, "step body")
        session = self._session(body)
        if "action" not in body:
            raise RequestError(422, "field 'action' is required", "action")
        async with self.store.using(session):
            env = self._running_env(session)
            before = len(env.response["output"])
            obs, reward, terminated, truncated, info = await env.astep(body["action"])
            if terminated or truncated:
                session.running = False
            output = env.response["output"][before:]
        return json_response(
            {
                "observation": obs,
                "reward": float(reward),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": info,
                "output": output,
            }
        )

    async def finish(self, request: web.Request) -> web.Response:
        body = await read_object(request, "finish body")
        session = self._session(body)
        async with self.store.using(session):
            env = self._running_env(session)
            before = len(env.response["output"])
            reward, info = await env.afinish(body.get("action"))
            session.running = False
            output = env.response["output"][before:]
        return json_response({"reward": float(reward), "info": info, "output": output})

    async def call_tool(self, request: web.Request) -> web.Response:
        body = await read_object(request, "call_tool body")
        session = self._session(body)
        name = field(body, "name", str)
        arguments = field(body, "arguments", (dict, str), default={})
        count_turn = field(body, "count_turn", bool, default=True)
        async with self.store.using(session):
            env = self._running_env(session)
            before = len(env.response["output"])
            output = await env.acall_tool(name, arguments, count_turn=count_turn)
            items = env.response["output"][before:]
        return json_response({"output": output, "items": items})

    async def close(self, request: web.Request) -> web.Response:
        body = await read_object(request, "close body")
        session_id = field(body, "session_id", str)
        session = self.store.get(session_id)
        if session is None:
            return json_response({"closed": False})
        async with session.lock:  # let a running step finish before the env is torn down
            await self.store.close(session)
        return json_response({"closed": True})

    def _session(self, body: dict[str, Any]) -> Session:
        return self.served.require_session(field(body, "session_id", str))

    @staticmethod
    def _running_env(session: Session) -> Any:
        if not session.running:
            raise RequestError(409, _NO_EPISODE)
        return session.env
