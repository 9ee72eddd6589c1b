"""aiohttp servers that run on an event loop of their own in a daemon thread (test model server,
env server, viewer), so that synchronous code and tests can start and stop them with ``with``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

from aiohttp import web


class BackgroundServer:
    """Serve :meth:`app` on ``host``:``port`` (0: a free port, read back once started).

    ``await astart()``/``astop()`` serve on the running loop; ``start()``/``stop()`` (or ``with``)
    run them on a new event loop in a daemon thread. Subclasses set ``host`` and ``port`` and
    implement :meth:`app`.
    """

    thread_name: ClassVar[str] = "gym_llm-server"
    stop_timeout: ClassVar[float] = 10.0

    host: str
    port: int
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        """The application to serve."""
        raise NotImplementedError

    async def astart(self) -> None:
        """Bind and start serving on the running event loop."""
        self._runner = runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except BaseException:
            await runner.cleanup()
            self._runner = None
            raise
        self.port = runner.addresses[0][1]

    async def astop(self) -> None:
        """Stop serving (and free what the app holds: its cleanup hooks run)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def start(self) -> Any:
        """Serve from a background thread; returns ``self`` once listening.

        Raises:
            Exception: What :meth:`astart` raised (e.g. ``OSError`` for an address in use).
        """
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.astart())
            except BaseException as exc:  # handed to the caller of start()
                errors.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.astop())
            loop.close()

        self._thread = threading.Thread(target=serve, name=self.thread_name, daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            self._thread = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Stop the server and wait for its thread."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=self.stop_timeout)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
