"""The aiohttp application that serves one env over both protocols.

Safe by default: the server binds 127.0.0.1 unless told otherwise (see :class:`EnvServer`), an
optional bearer token guards every route but ``GET /health``, request bodies are capped, and
every refused request gets a JSON error (``{"error": ..., "field": ...}``) with a 4xx status;
a 500 means a bug in the env or the server, never a bad request.

Routes besides the two protocols (:mod:`~gym_llm.server.nemo_protocol`,
:mod:`~gym_llm.server.gym_protocol`): ``GET /health`` (status and session counts) and
``GET /env_info`` (the env's id, tools, reward components, turn budget and task count) and
``GET /tasks`` (the server's task rows).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from gym_llm.server.bodies import RequestError, error_response, json_response
from gym_llm.server.gym_protocol import GymRoutes
from gym_llm.server.nemo_protocol import NeMoRoutes
from gym_llm.server.served_env import ServedEnv

if TYPE_CHECKING:
    from aiohttp.typedefs import Middleware

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024
_OPEN_ROUTES = frozenset({("GET", "/health")})  # answered without the token
_EXPIRY = web.AppKey("expiry", asyncio.Task)


def build_app(
    served: ServedEnv,
    *,
    token: str | None = None,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> web.Application:
    """The application serving ``served``.

    Args:
        served: The env and its sessions.
        token: When given, every request but ``GET /health`` must carry
            ``Authorization: Bearer <token>`` (401 otherwise).
        max_request_bytes: Larger request bodies are refused with 413.

    Returns:
        The application; its startup starts the idle-session expiry, its cleanup closes every
        session.
    """
    middlewares: list[Middleware] = [_errors]
    if token:
        middlewares.append(_bearer_token(token))
    app = web.Application(client_max_size=max_request_bytes, middlewares=middlewares)

    async def health(request: web.Request) -> web.Response:
        return json_response({"status": "ok", "env_id": served.env_id, **served.store.stats()})

    async def env_info(request: web.Request) -> web.Response:
        return json_response(served.describe())

    async def tasks(request: web.Request) -> web.Response:
        return json_response(list(served.template.tasks))

    app.router.add_get("/health", health)
    app.router.add_get("/env_info", env_info)
    app.router.add_get("/tasks", tasks)
    nemo = NeMoRoutes(served)
    nemo.add_to(app)
    GymRoutes(served).add_to(app)
    nemo.add_tool_route(app)  # last: it matches any single path segment

    async def start_expiry(app: web.Application) -> None:
        app[_EXPIRY] = asyncio.get_running_loop().create_task(served.store.expire_forever())

    async def stop(app: web.Application) -> None:
        task = app.get(_EXPIRY)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await served.store.close_all()

    app.on_startup.append(start_expiry)
    app.on_cleanup.append(stop)
    return app


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure as a JSON error: the client's with their 4xx, a bug as a logged 500."""
    try:
        return await handler(request)
    except RequestError as exc:
        return exc.response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 404:
            return error_response(404, f"no route {request.method} {request.path}")
        if exc.status == 405:
            return error_response(405, f"{request.path} does not take {request.method}")
        if exc.status == 413:
            return error_response(
                413, f"request body is larger than the {request.client_max_size} bytes accepted"
            )
        return error_response(exc.status, exc.text or exc.reason)
    except Exception as exc:
        log.exception("%s %s failed", request.method, request.path)
        return error_response(500, f"internal error: {type(exc).__name__}: {exc}")


def _bearer_token(token: str) -> Middleware:
    expected = f"Bearer {token}".encode()

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if (request.method, request.path) not in _OPEN_ROUTES:
            given = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                response = error_response(
                    401, "missing or wrong bearer token (Authorization: Bearer <token>)"
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        return await handler(request)

    return check
