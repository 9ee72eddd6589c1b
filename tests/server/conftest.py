"""Servers on 127.0.0.1 (free ports, stopped after their tests)."""

from __future__ import annotations

import pytest

from gym_llm.server import EnvServer


@pytest.fixture(scope="module")
def weather_server():
    with EnvServer("llm/Weather-v0") as server:
        yield server


@pytest.fixture(scope="module")
def counter_server():
    with EnvServer("llm/StatefulCounter-v0") as server:
        yield server
