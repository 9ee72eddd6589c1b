"""Shared fixtures: a real OpenAI-compatible test server on 127.0.0.1."""

from __future__ import annotations

import pytest

from gym_llm.testing import ModelServer


@pytest.fixture(scope="session")
def oracle_server():
    """A server that plays every registered env's reference solution over HTTP."""
    with ModelServer(record=False) as server:
        yield server
