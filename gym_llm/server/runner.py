"""``EnvServer``: serve a registered env over HTTP, in the foreground or on a background thread.

Example:
    >>> import json, urllib.request
    >>> with EnvServer("llm/Weather-v0") as server:
    ...     with urllib.request.urlopen(server.base_url + "/env_info") as reply:
    ...         print(json.load(reply)["tools"][0]["name"])
    get_weather
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from gym_llm.background import BackgroundServer
from gym_llm.server.app import DEFAULT_MAX_REQUEST_BYTES, build_app
from gym_llm.server.served_env import ServedEnv
from gym_llm.server.sessions import SessionStore


class EnvServer(BackgroundServer):
    """One env served over NeMo Gym's resources-server protocol and the reset/step protocol.

    ``await astart()``/``astop()`` serve on the running loop; ``start()``/``stop()`` (or ``with``)
    on a background thread of their own (sessions are closed on stop).

    Args:
        env_id: A registered env id, e.g. ``"llm/Weather-v0"``.
        host: The address to bind; the default serves this machine only.
        port: The port; 0 picks a free one (read :attr:`port` once started).
        token: A bearer token every request but ``GET /health`` must carry.
        env_kwargs: Constructor arguments of the env (``tasks``, ``max_turns``, …).
        idle_timeout: Seconds without a request after which a session is closed.
        max_sessions: Open sessions at most (more are refused with 503).
        max_request_bytes: Larger request bodies are refused with 413.
        max_idle_envs: Env instances kept for reuse by new sessions.

    Raises:
        ValueError: An unknown env id or bad env arguments.
    """

    thread_name = "gym_llm-env-server"
    stop_timeout = 30.0

    def __init__(
        self,
        env_id: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        idle_timeout: float = 600.0,
        max_sessions: int = 10_000,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        max_idle_envs: int = 64,
    ) -> None:
        self.served = ServedEnv(
            env_id,
            env_kwargs,
            idle_timeout=idle_timeout,
            max_sessions=max_sessions,
            max_idle_envs=max_idle_envs,
        )
        self.host = host
        self.port = port
        self._app = build_app(self.served, token=token, max_request_bytes=max_request_bytes)

    @property
    def base_url(self) -> str:
        """``http://host:port`` (the port is the real one once started)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def sessions(self) -> SessionStore:
        """The open sessions (:meth:`SessionStore.stats` counts them)."""
        return self.served.store

    def app(self) -> web.Application:
        return self._app
