"""The env a server serves: how to build its instances, its sessions, and what both protocols share."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
from aiohttp import web
from gymnasium.envs.registration import load_env_creator

from gym_llm.env import LLMEnv
from gym_llm.server.bodies import RequestError
from gym_llm.server.sessions import Session, SessionStore
from gym_llm.tasks import TaskError, check_row

# POST routes of the two protocols; an env tool with one of these names could not be served
RESERVED_ROUTES = frozenset(
    {
        "seed_session",
        "verify",
        "close_session",
        "aggregate_metrics",
        "reset",
        "step",
        "finish",
        "close",
        "call_tool",
    }
)
_FIELD = re.compile(r"field '([^']*)'")


class ServedEnv:
    """One registered env, served: an instance per session, and a spare one for stateless verifies.

    Args:
        env_id: A registered env id, e.g. ``"llm/Weather-v0"``.
        env_kwargs: Constructor arguments of every instance (``tasks``, ``max_turns``, …).
        idle_timeout: Seconds after which an idle session is closed.
        max_sessions: Open sessions at most.
        max_idle_envs: Env instances kept for reuse.

    Raises:
        ValueError: ``env_id`` is not registered, is no :class:`~gym_llm.env.LLMEnv`, its
            arguments are refused, or one of its tools is named like a protocol route.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any] | None = None,
        *,
        idle_timeout: float = 600.0,
        max_sessions: int = 10_000,
        max_idle_envs: int = 64,
    ) -> None:
        if env_id not in gymnasium.registry:
            raise ValueError(f"unknown env {env_id!r}")
        spec = gymnasium.spec(env_id)
        if spec.entry_point is None:
            raise ValueError(f"{env_id} has no entry point")
        creator: Callable[..., Any] = (
            load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
        )
        kwargs = {**spec.kwargs, **(env_kwargs or {})}

        def make_env() -> LLMEnv:
            env = creator(**kwargs)
            if not isinstance(env, LLMEnv):
                raise ValueError(
                    f"{env_id} is not a gym_llm LLMEnv ({type(env).__name__}): it cannot be served"
                )
            return env

        try:
            template = make_env()
        except TypeError as exc:  # an argument the env does not take
            raise ValueError(f"{env_id}: bad env arguments {sorted(kwargs)}: {exc}") from None
        clashes = RESERVED_ROUTES.intersection(template.tools)
        if clashes:
            raise ValueError(f"{env_id}: tools {sorted(clashes)} are named like protocol routes")
        kwargs["tasks"] = template.tasks  # validated once, shared by every instance
        self.env_id = env_id
        self.make_env = make_env
        # The template never runs an episode: it describes the env and verifies session-less rows.
        self.template = template
        self.store = SessionStore(
            self.make_env, idle_timeout=idle_timeout, max_sessions=max_sessions, max_idle_envs=max_idle_envs
        )
        # like NeMo's "<Class>___<server name>", in the characters a cookie name may use
        self.cookie_name = "gym_llm___" + re.sub(r"[^A-Za-z0-9._-]", "_", env_id.split("/")[-1])

    def describe(self) -> dict[str, Any]:
        """What a client needs to know before its first episode (``GET /env_info``).

        Returns:
            ``env_id``; ``tools``: the env's own tool schemas (rows may carry their own);
            ``reward_components``; ``max_turns``; ``num_tasks``: the server's task rows.
        """
        env = self.template
        return {
            "env_id": self.env_id,
            "tools": list(env.default_tool_schemas),
            "reward_components": list(env.reward_components),
            "max_turns": env.max_turns,
            "num_tasks": len(env.tasks),
        }

    # ----------------------------------------------------------------- sessions
    def cookie_session(self, request: web.Request) -> Session | None:
        """The open session named by the request's session cookie, if any."""
        session_id = request.cookies.get(self.cookie_name)
        return self.store.get(session_id) if session_id else None

    def require_cookie_session(self, request: web.Request) -> Session:
        """The session named by the request's cookie.

        Raises:
            RequestError: 400 without the cookie, 404 when it names no open session.
        """
        session_id = request.cookies.get(self.cookie_name)
        if not session_id:
            raise RequestError(
                400, f"no session: POST /seed_session first and send its {self.cookie_name} cookie back"
            )
        session = self.store.get(session_id)
        if session is None:
            raise RequestError(404, "unknown or expired session: seed a new one with POST /seed_session")
        return session

    def require_session(self, session_id: str) -> Session:
        """The session with this ``session_id``.

        Raises:
            RequestError: 404 when no such session is open.
        """
        session = self.store.get(session_id)
        if session is None:
            raise RequestError(
                404, "unknown or expired session: start a new one with POST /reset", "session_id"
            )
        return session

    def set_cookie(self, response: web.StreamResponse, session: Session) -> None:
        """Name ``session`` in ``response``'s cookie (NeMo's clients replace theirs with each reply's)."""
        response.set_cookie(self.cookie_name, session.id, path="/", httponly=True, samesite="Lax")

    # ----------------------------------------------------------------- rows
    def check_row(self, row: Any, where: str, path: str = "") -> None:
        """Validate a task row against the env's row model.

        Args:
            row: The row.
            where: How the message names the row (``"seed_session body"``).
            path: The row's own path in the request body (``"options.task"``; ``""``: the body).

        Raises:
            RequestError: 422 naming the row's bad field.
        """
        try:
            check_row(row, self.template.task_model, where)
        except TaskError as exc:
            raise task_error(exc, path) from None


def task_error(exc: Exception, path: str) -> RequestError:
    """A 422 for a bad task row; its field is the row's ``path`` plus the field the message names."""
    found = _FIELD.search(str(exc))
    name = found.group(1) if found else ""
    return RequestError(422, str(exc), ".".join(part for part in (path, name) if part) or None)
