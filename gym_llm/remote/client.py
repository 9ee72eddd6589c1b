"""A small JSON-over-HTTP client for env servers (gym_llm's own, or NeMo Gym's resources servers).

One aiohttp session per event loop (an aiohttp session belongs to the loop it was made in, and an
env may be driven from the sync facade's loop and from the caller's own). Cookies are handled by
the caller, as NeMo's protocol wants them: sent with a request, read from its reply.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from gym_llm.server.bodies import dumps

log = logging.getLogger(__name__)


class RemoteError(RuntimeError):
    """A request the server refused or could not answer.

    Attributes:
        status: The HTTP status (``None`` when the server could not be reached).
        field: The request field the server named as wrong, if it named one.
    """

    def __init__(self, message: str, status: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


class RemoteRequestError(RemoteError, ValueError):
    """A request the server refused as bad (HTTP 400, 404, 413 or 422): a wrong argument or id."""


@dataclass(slots=True)
class Reply:
    """A server's reply: its status, its raw body, and the cookies it set (name -> value)."""

    status: int
    body: bytes
    cookies: dict[str, str] = field(default_factory=dict)

    def excerpt(self, limit: int = 300) -> str:
        """The start of the body, as text (for error messages)."""
        return self.body[:limit].decode(errors="replace")

    def json(self) -> Any:
        """The body, decoded (``None`` when it is not JSON)."""
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None


class ServerClient:
    """Requests to one server: JSON bodies, a bearer token, retries while it cannot be reached.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000``.
        token: Sent as ``Authorization: Bearer <token>`` when given.
        timeout: Seconds for one request.
        connect_retries: Attempts after the first when the connection itself fails (the request
            was never sent, so retrying cannot run anything twice).
        backoff: Seconds before the first retry; doubled for each next one.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 300.0,
        connect_retries: int = 3,
        backoff: float = 0.2,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.connect_retries = connect_retries
        self.backoff = backoff
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._headers = {"Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = (
            weakref.WeakKeyDictionary()
        )

    async def request(
        self, method: str, path: str, payload: Any = None, *, cookies: dict[str, str] | None = None
    ) -> Reply:
        """Send one request and return the reply, whatever its status.

        Raises:
            RemoteError: The server could not be reached (after the retries) or timed out.
        """
        session = self._session()
        url = self.base_url + path
        data = dumps(payload) if payload is not None else None
        for attempt in range(self.connect_retries + 1):
            try:
                async with session.request(
                    method, url, data=data, headers=self._headers, cookies=cookies
                ) as response:
                    body = await response.read()
                    set_cookies = {name: morsel.value for name, morsel in response.cookies.items()}
                    return Reply(response.status, body, set_cookies)
            except aiohttp.ClientConnectorError as exc:
                if attempt == self.connect_retries:
                    raise RemoteError(f"cannot reach {url}: {exc}") from None
                await asyncio.sleep(self.backoff * 2**attempt)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise RemoteError(f"{method} {url} failed: {type(exc).__name__}: {exc}") from None
        raise AssertionError("unreachable")

    async def call(self, method: str, path: str, payload: Any = None) -> Any:
        """Send one request and return its decoded JSON reply.

        Raises:
            RemoteRequestError: The server refused the request as bad (400, 404, 413, 422).
            RemoteError: Any other failure; a 409 (the episode is over) is one.
        """
        reply = await self.request(method, path, payload)
        decoded = reply.json()
        if reply.status == 200:
            return decoded
        message = decoded.get("error") if isinstance(decoded, dict) else None
        bad_field = decoded.get("field") if isinstance(decoded, dict) else None
        text = f"{method} {path}: HTTP {reply.status}: {message or reply.excerpt()}"
        error = RemoteRequestError if reply.status in (400, 404, 413, 422) else RemoteError
        raise error(text, reply.status, bad_field)

    async def close(self) -> None:
        """Close this loop's session; sessions of other loops are closed on their own loops."""
        loop = asyncio.get_running_loop()
        for owner, session in list(self._sessions.items()):
            if owner is loop:
                await session.close()
            elif owner.is_running():  # another thread's loop: it closes its own session
                asyncio.run_coroutine_threadsafe(session.close(), owner)
        self._sessions.clear()

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = aiohttp.ClientSession(timeout=self._timeout, cookie_jar=aiohttp.DummyCookieJar())
            self._sessions[loop] = session
        return session

    def __getstate__(self) -> dict[str, Any]:
        # a copy (e.g. sent to a Ray worker) opens its own sessions
        state = {key: value for key, value in self.__dict__.items() if key != "_sessions"}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sessions = weakref.WeakKeyDictionary()
