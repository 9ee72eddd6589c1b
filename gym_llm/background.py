"""Servers that run on an event loop of their own in a daemon thread (test model server, env
server, viewer), so that synchronous code and tests can start and stop them with ``with``."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar


class BackgroundServer:
    """Run :meth:`astart` on a new event loop in a daemon thread, serve until :meth:`stop`, then
    run :meth:`astop` on that loop. Subclasses implement the two coroutines."""

    thread_name: ClassVar[str] = "gym_llm-server"
    stop_timeout: ClassVar[float] = 10.0

    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    async def astart(self) -> None:
        """Start serving (bind, listen); runs on the server's own loop."""
        raise NotImplementedError

    async def astop(self) -> None:
        """Stop serving and free what :meth:`astart` took; runs on the server's own loop."""
        raise NotImplementedError

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
