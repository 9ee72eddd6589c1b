"""``gym-llm serve`` as a user runs it: a real process, its banner, its signals, its errors."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from server_wire import ENVS, ServeProcess, http, rows


def test_serve_answers_both_protocols_and_stops_on_sigterm(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text((ENVS / "weather" / "data" / "example.jsonl").read_text().splitlines()[0] + "\n")
    with ServeProcess(
        "llm/Weather-v0", "--input", str(tasks), "--max-turns", "2", "--token", "tok"
    ) as served:
        assert served.base_url.startswith("http://127.0.0.1:")
        auth = {"Authorization": "Bearer tok"}
        info = http("GET", f"{served.base_url}/env_info", headers=auth).json()
        assert info == {
            "env_id": "llm/Weather-v0",
            "tools": info["tools"],
            "reward_components": [],
            "max_turns": 2,
            "num_tasks": 1,
        }
        assert http("POST", f"{served.base_url}/reset", {}, headers=auth).status == 200
        assert http("POST", f"{served.base_url}/seed_session", rows("weather")[0], headers=auth).status == 200
        assert http("POST", f"{served.base_url}/reset", {}).status == 401
        status, out, err = served.stop(signal.SIGTERM)
    assert status == 0 and "Stopped." in out and "Traceback" not in err


def test_the_token_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("GYM_LLM_SERVER_TOKEN", "from-env")
    with ServeProcess("llm/Weather-v0") as served:
        assert http("GET", f"{served.base_url}/env_info").status == 401
        assert (
            http("GET", f"{served.base_url}/env_info", headers={"Authorization": "Bearer from-env"}).status
            == 200
        )


def test_serving_beyond_this_machine_without_a_token_warns():
    with ServeProcess("llm/Weather-v0", "--host", "0.0.0.0") as served:
        status, _, err = served.stop()
    assert status == 0 and "without a token" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["llm/Nope-v0"], "unknown env 'llm/Nope-v0'"),
        (["llm/Weather-v0", "--port", "70000"], "expected a port number from 0 to 65535"),
        (["llm/Weather-v0", "--idle-timeout", "0"], "expected a positive number"),
        (["llm/Weather-v0", "--env-kwargs", '{"bogus": 1}'], "bad env arguments ['bogus']"),
        (["llm/Weather-v0", "--input", "/no/such/tasks.jsonl"], "task file not found"),
        (["llm/Weather-v0", "--host", "256.1.1.1"], "gym-llm: error:"),
    ],
)
def test_bad_arguments_get_one_line_and_no_traceback(args, message):
    command = [sys.executable, "-m", "gym_llm.cli", "serve", *args]
    if "--port" not in args:
        command += ["--port", "0"]
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and message in out.stderr and "Traceback" not in out.stderr
