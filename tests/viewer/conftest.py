"""Rollouts for the viewer tests, collected over HTTP: some right, some wrong with markup in the
answer, some masked; and a headless Chromium to look at the page with."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from viewer_rollouts import HOSTILE

from gym_llm import items as it
from gym_llm.policies import ResponsesPolicy
from gym_llm.rollouts import collect
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError, oracle

# what a hostile rollout could hold: it must show as text and never run
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


class Mixed:
    """Of every 4 episodes: right, wrong (answering :data:`HOSTILE`), right, a model error."""

    def __init__(self) -> None:
        self.episodes = 0

    def __call__(self, conversation: list[dict], tools: list[dict], request: dict):
        if not any(item.get("type") == "function_call_output" for item in conversation):
            self.episodes += 1
            if self.episodes % 4 == 2:
                return [it.reasoning("No idea."), it.message(HOSTILE)]
            if self.episodes % 4 == 0:
                return ServerError(400, "bad request")
        reply = oracle(conversation, tools, request)
        items = [it.message(reply)] if isinstance(reply, str) else list(reply)
        return [it.reasoning("Let me use the tools."), *items]


@pytest.fixture(scope="session")
def rollouts_file(tmp_path_factory) -> Path:
    """24 rollouts: Weather and MultiStep, 3 tasks each, 4 repeats (rewards 1, 0, 1, masked)."""
    path = tmp_path_factory.mktemp("viewer") / "rollouts.jsonl"
    with ModelServer(Mixed(), record=False) as server:
        for env_id in ("llm/Weather-v0", "llm/MultiStep-v0"):
            part = path.with_name(f"{env_id.split('/')[1]}.jsonl")
            policy = ResponsesPolicy("test", base_url=server.base_url)
            collect(env_id, part, policy=policy, num_repeats=4, concurrency=1, limit=3)
            with open(path, "a") as out:
                out.write(part.read_text())
    return path


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    """Where screenshots go: ``$GYM_LLM_TEST_ARTIFACTS`` if set, else pytest's temporary directory."""
    where = os.environ.get("GYM_LLM_TEST_ARTIFACTS")
    path = Path(where) if where else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture()
def browser(tmp_path):
    """Debian's headless Chromium through its chromedriver (Selenium)."""
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip("chromium is not installed (apt-get install chromium chromium-driver)")
    if not (os.path.exists(CHROMEDRIVER) or shutil.which("chromedriver")):
        pytest.skip("chromedriver is not installed (apt-get install chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1440,900",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    driver_path = CHROMEDRIVER if os.path.exists(CHROMEDRIVER) else shutil.which("chromedriver")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
