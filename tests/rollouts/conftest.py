"""Fixtures of the rollout tests: a model server that also counts the requests it holds at once."""

from __future__ import annotations

import pytest
from aiohttp import web

from gym_llm.testing import ModelServer


class CountingServer(ModelServer):
    """The test model server, also counting the requests in flight (most at once: ``max_in_flight``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.in_flight = 0
        self.max_in_flight = 0

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def count(request, handler):
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                return await handler(request)
            finally:
                self.in_flight -= 1

        app.middlewares.append(count)
        return app


@pytest.fixture
def counting_server():
    """Make a :class:`CountingServer` (keyword arguments as for ``ModelServer``); stopped at the end."""
    servers = []

    def make(**kwargs) -> CountingServer:
        servers.append(CountingServer(**kwargs).start())
        return servers[-1]

    yield make
    for server in servers:
        server.stop()
