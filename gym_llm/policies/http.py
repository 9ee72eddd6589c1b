"""A lean JSON-over-HTTP client for OpenAI-compatible servers, with retries.

Plain dicts in and out over one aiohttp session: no typed-params transform and no response
models, which is what caps the ``openai`` SDK at ~80 requests/s on a small machine.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

import aiohttp

from gym_llm import fastjson

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
OPENAI_BASE_URL = "https://api.openai.com/v1"


def default_base_url() -> str:
    """``$OPENAI_BASE_URL`` if set, else OpenAI's API (the ``openai`` SDK's rule)."""
    return os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL


class ModelCallError(RuntimeError):
    """A request that failed for good: a non-retryable status, a body that is not one JSON object
    (e.g. an event stream), or retries exhausted."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class JSONClient:
    """POST JSON to ``base_url + path``; retry 429/5xx, timeouts and connection errors with backoff.

    The aiohttp session is made lazily in the running event loop (and again if the loop changes).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``.
        api_key: Sent as a bearer token when given.
        timeout: Seconds for one attempt.
        max_retries: Attempts after the first one.
        backoff: Base delay in seconds; attempt ``n`` waits ``backoff * 2**n`` times a random jitter.
        max_connections: Open connections at most (0: no limit; concurrency is bounded by the caller).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 600.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_connections: int = 0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.backoff = backoff
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._max_connections = max_connections
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._jitter = random.Random()

    async def post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST ``payload`` and return the decoded JSON body.

        Returns:
            The response body, decoded.

        Raises:
            ModelCallError: A non-retryable error status, a body that is not JSON (or is an event
                stream), or retries exhausted.
        """
        session = self._session_for_loop()
        body = fastjson.dumps(payload)
        url = self.base_url + path
        last_error = ""
        retry_after: float | None = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self._delay(attempt, retry_after))
            retry_after = None
            try:
                async with session.post(url, data=body, headers=self._headers) as resp:
                    if resp.content_type == "text/event-stream":
                        raise ModelCallError(
                            f"{url}: the server answered with an event stream (text/event-stream), "
                            "not one JSON body; gym_llm needs one JSON body per call. Requests must say "
                            '"stream": false (gym_llm\'s policies do); a server that streams anyway '
                            "cannot be used as it is",
                            resp.status,
                        )
                    raw = await resp.read()
                    if resp.status == 200:
                        try:
                            return fastjson.loads(raw)
                        except fastjson.JSONDecodeError:
                            raise ModelCallError(f"{url}: response is not JSON: {raw[:200]!r}", 200) from None
                    last_error = f"HTTP {resp.status}: {raw[:300].decode(errors='replace')}"
                    if resp.status not in RETRY_STATUSES:
                        raise ModelCallError(f"{url}: {last_error}", resp.status)
                    retry_after = _seconds(resp.headers.get("Retry-After"))
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
        raise ModelCallError(
            f"{url}: gave up after {self.max_retries + 1} attempts; last error: {last_error}"
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        delay = self.backoff * 2 ** (attempt - 1) * (0.5 + self._jitter.random())
        return min(max(delay, retry_after or 0.0), 60.0)

    def _session_for_loop(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout)
            self._loop = loop
        return self._session

    @property
    def closed(self) -> bool:
        """Whether the client holds no open session (none made yet, or closed)."""
        return self._session is None or self._session.closed

    def __getstate__(self) -> dict[str, Any]:
        # a copy (e.g. pickled to a Ray worker) opens its own session in its own loop
        return {**self.__dict__, "_session": None, "_loop": None}

    async def close(self) -> None:
        """Close the session (a later call opens a new one)."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def _seconds(header: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (the HTTP-date form is ignored)."""
    try:
        return float(header) if header else None
    except ValueError:
        return None
