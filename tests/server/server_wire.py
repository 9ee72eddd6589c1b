"""A raw HTTP client for the server tests: the standard library's, not gym_llm's, so the tests see
exactly the bytes, statuses and headers a foreign client (NeMo Gym's agents) would."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import gym_llm

ENVS = Path(gym_llm.__file__).resolve().parents[1] / "envs"


@dataclass
class Reply:
    status: int
    body: bytes
    cookies: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


def http(
    method: str,
    url: str,
    body: Any = None,
    *,
    raw: bytes | None = None,
    cookies: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """One request; ``body`` is sent as JSON, ``raw`` as it is. Error statuses are returned, not raised."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method=method, headers={**(headers or {})})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if cookies:
        request.add_header("Cookie", "; ".join(f"{name}={value}" for name, value in cookies.items()))
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, payload, header_list = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, payload, header_list = exc.code, exc.read(), exc.headers
    jar: SimpleCookie = SimpleCookie()
    for value in header_list.get_all("Set-Cookie") or []:
        jar.load(value)
    return Reply(status, payload, {name: morsel.value for name, morsel in jar.items()}, dict(header_list))


def rows(env_name: str) -> list[dict[str, Any]]:
    path = ENVS / env_name / "data" / "example.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class ServeProcess:
    """``gym-llm serve ENV_ID --port 0 ...`` as a real subprocess; its URL read from what it prints."""

    def __init__(self, env_id: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gym_llm.cli", "serve", env_id, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.banner = self.process.stdout.readline()
        found = re.search(r"on (http://\S+) ", self.banner)
        if found is None:
            self.process.kill()
            raise RuntimeError(f"gym-llm serve did not start: {self.banner!r} {self.process.stderr.read()!r}")
        self.base_url = found.group(1)

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str, str]:
        """Signal the server and return its exit status, the rest of its stdout, and its stderr."""
        self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
