"""NeMo Gym's resources-server protocol over a gym_llm env, as NeMo's agents speak it.

Routes (all ``POST`` with a JSON body, except ``GET /reverify_mode``):

- ``/seed_session``: either the whole task row (the form ``simple_agent`` sends), answered ``{}``,
  or the typed form ``{resources_session_id?, episode_id, task_id, task_data}``, answered
  ``{resources_session_id, resources_tools: null, sandbox_access: null}``; idempotent for a
  repeated ``resources_session_id``, refused (409) for one already closed. Both set the session
  cookie, and so does every later reply of the session: NeMo's clients replace their cookies with
  each reply's.
- ``/<tool>``: the tool's arguments as the body; the reply body is the tool's output, exactly
  what the model reads in-process (404 for an unknown tool, 422 for arguments of the wrong shape,
  the error output still being the body).
- ``/verify``: the row with ``response`` (a Responses object); the reply echoes the body with
  ``reward``, ``mask_sample``, ``failure_kind``, ``failure_reason``, the verdict's record fields
  and, for envs with components, ``reward_components`` (each also at the top level, as NeMo's
  servers report them, unless a row field has its name). Without a session cookie it verifies
  statelessly (NeMo's reverify); with one, it verifies and closes the session: a verified episode
  is over, and NeMo's ``simple_agent`` never calls ``/close_session``.
- ``/close_session``: ``{resources_session_id, episode_id}`` (typed) or the cookie; idempotent.
- ``/aggregate_metrics``: ``{verify_responses: [...]}`` → NeMo's ``AggregateMetrics``.
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson
from aiohttp import web
from pydantic import ValidationError

from gym_llm.server.aggregate import aggregate_metrics
from gym_llm.server.bodies import (
    RequestError,
    dumps,
    field,
    json_response,
    raw_json_response,
    read_object,
)
from gym_llm.server.served_env import ServedEnv
from gym_llm.server.sessions import Session
from gym_llm.tools import ToolSpec

_TYPED_SEED_FIELDS = frozenset({"resources_session_id", "episode_id", "task_id", "task_data"})
_ERROR_PREFIX = '{"error"'


class NeMoRoutes:
    """The handlers of NeMo's resources-server routes for one served env."""

    def __init__(self, served: ServedEnv) -> None:
        self.served = served
        self.store = served.store

    def add_to(self, app: web.Application) -> None:
        """Register the routes (the tool route last: it matches any single path segment)."""
        app.router.add_post("/seed_session", self.seed_session)
        app.router.add_post("/verify", self.verify)
        app.router.add_post("/close_session", self.close_session)
        app.router.add_post("/aggregate_metrics", self.aggregate_metrics)
        app.router.add_get("/reverify_mode", self.reverify_mode)

    def add_tool_route(self, app: web.Application) -> None:
        app.router.add_post("/{tool}", self.call_tool)

    # ----------------------------------------------------------------- seed
    async def seed_session(self, request: web.Request) -> web.Response:
        body = await read_object(request, "seed_session body")
        if "responses_create_params" not in body and "task_data" in body:
            return await self._typed_seed(body)
        self.served.check_row(body, "seed_session body")
        # NeMo keeps the session of a cookie that comes with the seed: re-seed it
        session = self.served.cookie_session(request)
        if session is None:
            session = self.store.open()
        await self._start_episode(session, body)
        response = json_response({})
        self.served.set_cookie(response, session)
        return response

    async def _typed_seed(self, body: dict[str, Any]) -> web.Response:
        unknown = sorted(set(body) - _TYPED_SEED_FIELDS)
        if unknown:
            raise RequestError(422, f"unknown field '{unknown[0]}' in a typed seed_session body", unknown[0])
        task_data = field(body, "task_data", dict)
        episode_id = field(body, "episode_id", (dict, str))
        resources_session_id = field(body, "resources_session_id", (str, type(None)), default=None)
        if resources_session_id is not None:
            if self.store.was_closed(resources_session_id):
                raise RequestError(
                    409,
                    f"resources session {resources_session_id!r} was closed: seed it under a new id",
                    "resources_session_id",
                )
            existing = self.store.by_resources_id(resources_session_id)
            if existing is not None:  # a repeated seed: the same session, untouched
                if existing.episode_id != episode_id:
                    raise RequestError(
                        409,
                        f"resources session {resources_session_id!r} belongs to another episode",
                        "episode_id",
                    )
                return self._typed_seed_reply(existing)
        row = dict(task_data)
        # the typed form carries the task's fields without its prompt, which verify brings
        row.setdefault("responses_create_params", {"input": []})
        self.served.check_row(row, "seed_session task_data", "task_data")
        resources_session_id = resources_session_id or f"resources-session-{secrets.token_hex(16)}"
        session = self.store.open(resources_session_id=resources_session_id, episode_id=episode_id)
        await self._start_episode(session, row)
        return self._typed_seed_reply(session)

    def _typed_seed_reply(self, session: Session) -> web.Response:
        response = json_response(
            {
                "resources_session_id": session.resources_session_id,
                "resources_tools": None,
                "sandbox_access": None,
            }
        )
        self.served.set_cookie(response, session)
        return response

    async def _start_episode(self, session: Session, row: dict[str, Any]) -> None:
        try:
            async with self.store.using(session):
                await session.env.areset(options={"task": row})
                session.running = True
        except BaseException:
            # a seed that failed leaves nothing open, and may be tried again under the same id
            await self.store.close(session, remember=False)
            raise

    # ----------------------------------------------------------------- tools
    async def call_tool(self, request: web.Request) -> web.Response:
        name = request.match_info["tool"]
        spec = self.served.template.tools.get(name)
        if spec is None:
            tools = ", ".join(self.served.template.tools) or "none"
            raise RequestError(404, f"unknown tool {name!r}; this env's tools: {tools}")
        session = self.served.require_cookie_session(request)
        arguments = await read_object(request, f"{name} arguments")
        async with self.store.using(session):
            if not session.running:
                raise RequestError(409, "the session's episode is over: seed a new session")
            # NeMo's agents keep their own step budget: tool calls here use none of the env's turns
            output = await session.env.acall_tool(name, arguments, count_turn=False)
        status, failed_field = _argument_status(spec, arguments, output)
        response = raw_json_response(_output_body(output, failed_field), status)
        self.served.set_cookie(response, session)
        return response

    # ----------------------------------------------------------------- verify
    async def verify(self, request: web.Request) -> web.Response:
        body = await read_object(request, "verify body")
        session = self.served.cookie_session(request)
        if "verification_input" in body:  # typed: {episode_id, task_id, verification_input}
            given = field(body, "verification_input", dict)
            task = session.env.task if session is not None and session.env.task is not None else {}
            row: dict[str, Any] = {**task, **given}
            prefix = "verification_input."
        else:
            row, prefix = body, ""
        response = field(row, "response", dict, prefix=prefix)
        field(response, "output", list, prefix=f"{prefix}response.")
        if not all(isinstance(item, dict) for item in response["output"]):
            raise RequestError(
                422, f"field '{prefix}response.output' must hold item objects", f"{prefix}response.output"
            )
        self.served.check_row(row, "verify body", prefix.rstrip("."))
        if session is None:
            verdict = await self.served.template.averify(row, response)
        else:
            async with self.store.using(session):
                session.running = False
                verdict = await session.env.averify(row, response)
            await self.store.close(session)
        details = dict(verdict.details)
        failure_reason = details.pop("failure_reason", None)
        if verdict.failure_kind is not None and failure_reason is None:
            failure_reason = details.get("error")
        result = {**row, **details}
        result.update(
            reward=float(verdict.reward),
            mask_sample=verdict.mask_sample,
            failure_kind=verdict.failure_kind,
            failure_reason=failure_reason,
        )
        if self.served.template.reward_components:
            result["reward_components"] = dict(verdict.components)
            # top level too, as NeMo's servers report them, so that aggregate_metrics sees them
            for name, value in verdict.components.items():
                result.setdefault(name, value)
        return json_response(result)

    # ----------------------------------------------------------------- close
    async def close_session(self, request: web.Request) -> web.Response:
        body = await read_object(request, "close_session body") if await _has_body(request) else {}
        resources_session_id = field(body, "resources_session_id", (str, type(None)), default=None)
        if resources_session_id is None:
            session = self.served.cookie_session(request)
            if session is not None:
                await self._close(session)
            return json_response({})
        session = self.store.by_resources_id(resources_session_id)
        if session is None:
            self.store.remember_closed(resources_session_id)  # closed already, or never seeded
        else:
            if (
                "episode_id" in body
                and session.episode_id is not None
                and body["episode_id"] != session.episode_id
            ):
                raise RequestError(
                    409,
                    f"resources session {resources_session_id!r} belongs to another episode",
                    "episode_id",
                )
            await self._close(session)
        return json_response({"resources_session_id": resources_session_id})

    async def _close(self, session: Session) -> None:
        async with session.lock:  # let a running call finish before the env is torn down
            await self.store.close(session)

    # ----------------------------------------------------------------- metrics
    async def aggregate_metrics(self, request: web.Request) -> web.Response:
        body = await read_object(request, "aggregate_metrics body")
        responses = field(body, "verify_responses", list)
        for index, item in enumerate(responses):
            if not isinstance(item, dict):
                raise RequestError(
                    422, f"field 'verify_responses.{index}' must be an object", f"verify_responses.{index}"
                )
        return json_response(await aggregate_metrics(responses))

    async def reverify_mode(self, request: web.Request) -> web.Response:
        # every gym_llm verify scores a recorded row from its data alone
        return json_response("stateless")


def _argument_status(spec: ToolSpec, arguments: dict[str, Any], output: str) -> tuple[int, str | None]:
    """422 and the bad argument's name when the output is the env's argument-validation error."""
    if not output.startswith(_ERROR_PREFIX):
        return 200, None
    try:
        spec.validate(arguments)
    except ValidationError as exc:
        errors = exc.errors()
        location = ".".join(str(part) for part in errors[0]["loc"]) if errors else None
        return 422, location or None
    return 200, None  # the tool itself reported the error: a normal reply, as in-process


def _output_body(output: str, failed_field: str | None) -> bytes:
    """The tool output as the JSON body NeMo's agents hand to the model unchanged."""
    try:
        decoded = orjson.loads(output)
    except orjson.JSONDecodeError:
        return dumps(output)  # plain text: a JSON string, as a FastAPI route returning str sends it
    if failed_field is not None and isinstance(decoded, dict):
        return dumps({**decoded, "field": failed_field})
    return output.encode()


async def _has_body(request: web.Request) -> bool:
    return bool((await request.read()).strip())
