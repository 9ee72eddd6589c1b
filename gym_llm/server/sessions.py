"""Server-side sessions: one env instance per open episode, freed on close or after an idle timeout.

A session is an env instance (the instance is the session, as in-process) plus an opaque random id
that the client sends back: as the NeMo protocol's session cookie, or as ``session_id`` in the
reset/step protocol. Closed sessions hand their env back to a small pool of idle instances, so a
new session rarely builds an env, and the number of live instances stays bounded by the open
sessions plus the pool.

Ids given by the caller (NeMo's ``resources_session_id``) map to sessions too; once closed, such an
id is remembered for a while (bounded), so that a seed that races behind its close is refused
instead of opening the session again.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from gym_llm.env import LLMEnv
from gym_llm.server.bodies import RequestError

log = logging.getLogger(__name__)


@dataclass(eq=False, slots=True)
class Session:
    """One open session.

    Attributes:
        id: The opaque id the client sends back (cookie value or ``session_id``).
        env: The env instance that runs this session's episodes.
        lock: Serialises the requests of this session (an env runs one call at a time).
        last_used: ``time.monotonic()`` of the last request that touched it.
        busy: Requests now running on it (a busy session never expires).
        resources_session_id: The caller's id for it (NeMo's typed seed), if any.
        episode_id: The caller's episode id (NeMo's typed seed), checked on close.
        running: An episode is under way (reset or seeded, not yet ended).
    """

    id: str
    env: LLMEnv
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0
    resources_session_id: str | None = None
    episode_id: Any = None
    running: bool = False


class SessionStore:
    """The open sessions, their env pool, and their expiry.

    Args:
        make_env: Builds a fresh env instance.
        idle_timeout: Seconds without a request after which a session is closed.
        max_sessions: Open sessions at most; opening one more is refused with 503.
        max_idle_envs: Env instances kept for reuse after their session closed.
    """

    def __init__(
        self,
        make_env: Callable[[], LLMEnv],
        *,
        idle_timeout: float = 600.0,
        max_sessions: int = 10_000,
        max_idle_envs: int = 64,
    ) -> None:
        if idle_timeout <= 0:
            raise ValueError(f"idle_timeout must be positive, got {idle_timeout}")
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.make_env = make_env
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.max_idle_envs = max_idle_envs
        # least recently used first: expiry pops from the front
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._by_resources_id: dict[str, str] = {}
        # closed caller-given ids -> when: a late seed for one of them is refused
        self._closed_resources_ids: OrderedDict[str, float] = OrderedDict()
        self._idle_envs: list[LLMEnv] = []
        self.envs_created = 0
        self.sessions_opened = 0
        self.sessions_expired = 0

    # ----------------------------------------------------------------- lookup
    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> Session | None:
        """The open session with this id (marked as just used), or ``None``."""
        session = self._sessions.get(session_id)
        if session is not None:
            self._touch(session)
        return session

    def by_resources_id(self, resources_session_id: str) -> Session | None:
        """The open session a caller named ``resources_session_id``, or ``None``."""
        session_id = self._by_resources_id.get(resources_session_id)
        return self.get(session_id) if session_id is not None else None

    def was_closed(self, resources_session_id: str) -> bool:
        """Whether a session with this caller-given id was closed (recently enough to remember)."""
        return resources_session_id in self._closed_resources_ids

    def stats(self) -> dict[str, int]:
        """Counters: ``sessions`` open, ``idle_envs`` pooled, ``envs_created``, ``sessions_opened``
        and ``sessions_expired`` since start."""
        return {
            "sessions": len(self._sessions),
            "idle_envs": len(self._idle_envs),
            "envs_created": self.envs_created,
            "sessions_opened": self.sessions_opened,
            "sessions_expired": self.sessions_expired,
        }

    @asynccontextmanager
    async def using(self, session: Session) -> AsyncIterator[Session]:
        """Hold ``session`` for one request: its lock, and safe from expiry meanwhile.

        Raises:
            RequestError: 404 when the session was closed while this request waited for it.
        """
        session.busy += 1
        try:
            async with session.lock:
                if session.id not in self._sessions:
                    raise RequestError(404, "the session was closed while this request waited for it")
                yield session
        finally:
            session.busy -= 1
            if session.id in self._sessions:
                self._touch(session)

    # ----------------------------------------------------------------- lifecycle
    def open(self, *, resources_session_id: str | None = None, episode_id: Any = None) -> Session:
        """A new session with an env from the pool (or a new one).

        Raises:
            RequestError: 503 when ``max_sessions`` sessions are open.
        """
        if len(self._sessions) >= self.max_sessions:
            raise RequestError(
                503,
                f"the server holds its maximum of {self.max_sessions} open sessions: close sessions "
                "(or let them expire) before opening more",
            )
        env = self._idle_envs.pop() if self._idle_envs else self._new_env()
        session = Session(secrets.token_urlsafe(18), env)
        session.resources_session_id = resources_session_id
        session.episode_id = episode_id
        self._sessions[session.id] = session
        if resources_session_id is not None:
            self._by_resources_id[resources_session_id] = session.id
        self.sessions_opened += 1
        return session

    async def close(self, session: Session, *, remember: bool = True) -> None:
        """Close ``session``: forget it, free its episode's resources, pool its env. Idempotent.

        Args:
            session: The session.
            remember: Refuse later seeds of its caller-given id (not for a seed that failed).
        """
        if self._sessions.pop(session.id, None) is None:
            return
        if session.resources_session_id is not None:
            self._by_resources_id.pop(session.resources_session_id, None)
            if remember:
                self.remember_closed(session.resources_session_id)
        env = session.env
        try:
            # teardown may remove files or stop processes: keep it off the event loop
            await asyncio.get_running_loop().run_in_executor(None, env.close)
        except Exception:
            log.exception("closing an env failed; the instance is dropped")
            return
        if len(self._idle_envs) < self.max_idle_envs:
            self._idle_envs.append(env)

    def remember_closed(self, resources_session_id: str) -> None:
        """Refuse later seeds of this caller-given id (kept as long as ``idle_timeout``, bounded)."""
        self._closed_resources_ids[resources_session_id] = time.monotonic()
        self._closed_resources_ids.move_to_end(resources_session_id)
        while len(self._closed_resources_ids) > self.max_sessions:
            self._closed_resources_ids.popitem(last=False)

    async def close_all(self) -> None:
        """Close every open session (the server is stopping)."""
        for session in list(self._sessions.values()):
            await self.close(session)
        for env in self._idle_envs:
            env.close()
        self._idle_envs.clear()

    async def expire(self) -> int:
        """Close the sessions idle for longer than ``idle_timeout``.

        Returns:
            How many were closed.
        """
        now = time.monotonic()
        deadline = now - self.idle_timeout
        expired = []
        for session in self._sessions.values():  # least recently used first
            if session.last_used > deadline:
                break
            if not session.busy:
                expired.append(session)
        for session in expired:
            await self.close(session)
        while self._closed_resources_ids:
            oldest, closed_at = next(iter(self._closed_resources_ids.items()))
            if closed_at > deadline:
                break
            del self._closed_resources_ids[oldest]
        self.sessions_expired += len(expired)
        return len(expired)

    async def expire_forever(self) -> None:
        """Run :meth:`expire` every few seconds (a quarter of the timeout, at most 30 s)."""
        interval = min(self.idle_timeout / 4, 30.0)
        while True:
            await asyncio.sleep(interval)
            try:
                closed = await self.expire()
            except Exception:
                log.exception("expiring idle sessions failed")
                continue
            if closed:
                log.info("closed %d idle sessions", closed)

    # ----------------------------------------------------------------- internals
    def _new_env(self) -> LLMEnv:
        env = self.make_env()
        self.envs_created += 1
        return env

    def _touch(self, session: Session) -> None:
        session.last_used = time.monotonic()
        self._sessions.move_to_end(session.id)
