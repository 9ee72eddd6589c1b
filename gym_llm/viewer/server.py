"""The viewer's web server (aiohttp, on 127.0.0.1 by default): the page and a small JSON API.

- ``GET /``: the page; ``GET /assets/app.js``, ``/assets/app.css``: its code.
- ``GET /api/meta``: reads rows added to the file since, then the counts for the filters.
- ``GET /api/rollouts?env=&failure=&masked=&min_reward=&max_reward=&sort=&order=&offset=&limit=``:
  one page of the list.
- ``GET /api/rollouts/{index}``: one whole rollout, read from its byte offset.

The page only runs the server's own scripts (a Content-Security-Policy says so), and requests
whose ``Host`` is not the server's own name are refused (no DNS rebinding onto the local files).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from gym_llm import fastjson
from gym_llm.background import BackgroundServer
from gym_llm.viewer.index import SORT_KEYS, Query, RolloutIndex

ASSETS = Path(__file__).parent / "assets"
MAX_PAGE = 500
CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:"
LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def page(head: str, scripts: str, csp: str = "") -> str:
    """The page with its style, scripts and Content-Security-Policy filled in."""
    html = (ASSETS / "index.html").read_text(encoding="utf-8")
    return html.replace("{{CSP}}", csp).replace("{{STYLE}}", head).replace("{{SCRIPTS}}", scripts)


def make_app(index: RolloutIndex, host: str = "127.0.0.1") -> web.Application:
    """The viewer's application over ``index``; ``host`` is the name it is served under."""
    # listening on every interface is a choice to be reached under other names
    allowed = None if host in ("0.0.0.0", "::", "") else LOCAL_NAMES | {host}
    html = page('<link rel="stylesheet" href="assets/app.css">', '<script src="assets/app.js"></script>')

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if allowed is not None and request.url.host not in allowed:
            return web.Response(status=403, text=f"host {request.host!r} not allowed")
        response = await handler(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Cache-Control"] = "no-store"
        return response

    async def home(request: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        types = {"app.js": "application/javascript", "app.css": "text/css"}
        if name not in types:
            raise web.HTTPNotFound()
        return web.Response(text=(ASSETS / name).read_text(encoding="utf-8"), content_type=types[name])

    async def meta(request: web.Request) -> web.Response:
        await _in_thread(index.refresh)
        facets = await _in_thread(index.facets)
        return _json({"file": index.path.name, **facets})

    async def rollouts(request: web.Request) -> web.Response:
        try:
            query, offset, limit = _parse_query(request.query)
        except ValueError as exc:
            return _json({"error": str(exc)}, status=400)
        total, entries = await _in_thread(functools.partial(index.query, query, offset, limit))
        return _json({"total": total, "offset": offset, "rows": [e.as_json() for e in entries]})

    async def rollout(request: web.Request) -> web.Response:
        try:
            number = int(request.match_info["index"])
            row = await _in_thread(functools.partial(index.read, number))
        except (ValueError, IndexError) as exc:
            return _json({"error": str(exc)}, status=404)
        return _json({"index": number, "summary": index.entries[number].as_json(), "row": row})

    app = web.Application(middlewares=[guard])
    app.router.add_get("/", home)
    app.router.add_get("/assets/{name}", asset)
    app.router.add_get("/api/meta", meta)
    app.router.add_get("/api/rollouts", rollouts)
    app.router.add_get("/api/rollouts/{index}", rollout)
    return app


class ViewerServer(BackgroundServer):
    """Serve the viewer for a rollouts file from a background thread.

    Args:
        rollouts: A JSONL rollouts file.
        host: The address to listen on (default 127.0.0.1: this machine only).
        port: The port (0 picks a free one).

    Example:
        >>> with ViewerServer("rollouts.jsonl") as viewer:  # doctest: +SKIP
        ...     print(viewer.url)
        http://127.0.0.1:40123/

    Raises:
        RolloutFileError: (at construction) the file is missing or has a line that is not JSON.
        OSError: (at :meth:`start`) the address cannot be listened on.
    """

    thread_name = "gym_llm-viewer"

    def __init__(self, rollouts: str | os.PathLike[str], host: str = "127.0.0.1", port: int = 0) -> None:
        self.index = RolloutIndex(rollouts)
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def app(self) -> web.Application:
        return make_app(self.index, self.host)


def _parse_query(params: Any) -> tuple[Query, int, int]:
    """The list query of a request's parameters.

    Raises:
        ValueError: A parameter that is not a number, or an unknown sort key, order or mode.
    """

    def number(key: str) -> float | None:
        text = params.get(key, "").strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{key} must be a number, got {text!r}") from None

    order = params.get("order", "asc")
    masked = params.get("masked", "all")
    if order not in ("asc", "desc"):
        raise ValueError(f"order must be asc or desc, got {order!r}")
    if masked not in ("all", "hide", "only"):
        raise ValueError(f"masked must be all, hide or only, got {masked!r}")
    query = Query(
        env=params.get("env", ""),
        failure=params.get("failure", ""),
        masked=masked,
        min_reward=number("min_reward"),
        max_reward=number("max_reward"),
        sort=params.get("sort", "index"),
        descending=order == "desc",
    )
    offset = int(number("offset") or 0)
    limit = int(number("limit") or 50)
    if query.sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {query.sort!r}; choose one of {', '.join(SORT_KEYS)}")
    return query, max(offset, 0), min(max(limit, 1), MAX_PAGE)


async def _in_thread(fn: Callable[[], Any]) -> Any:
    """Run file reads and index scans off the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, fn)


def _json(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=fastjson.dumps(payload), status=status, content_type="application/json")
