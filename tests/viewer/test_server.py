"""The viewer's index and JSON API over real HTTP, the static file, and ``gym-llm view``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from viewer_rollouts import HOSTILE

from gym_llm.cli import main
from gym_llm.export.source import RolloutFileError
from gym_llm.viewer import Query, RolloutIndex, ViewerServer, write_html


def rows_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def get(url: str, host: str | None = None) -> tuple[int, dict | str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            kind = response.headers.get("Content-Type", "")
            return response.status, json.loads(body) if "json" in kind else body.decode()
    except urllib.error.HTTPError as err:
        body = err.read()
        return err.code, json.loads(body) if "json" in err.headers.get("Content-Type", "") else body.decode()


# --------------------------------------------------------------------- index
def test_index_filters_sorts_and_pages(rollouts_file):
    rows = rows_of(rollouts_file)
    index = RolloutIndex(rollouts_file)
    assert len(index.entries) == 24
    facets = index.facets()
    assert facets["envs"] == {"llm/MultiStep-v0": 12, "llm/Weather-v0": 12}
    assert facets["failure_kinds"] == {"(none)": 18, "model_error": 6}
    assert facets["masked"] == 6

    total, page = index.query(Query(env="llm/MultiStep-v0", min_reward=1), limit=4)
    assert total == 6 and len(page) == 4
    assert all(rows[e.index]["env_id"] == "llm/MultiStep-v0" and rows[e.index]["reward"] == 1.0 for e in page)
    total, _ = index.query(Query(failure="(none)", masked="hide", max_reward=0))
    assert total == 6
    assert index.query(Query(masked="only"))[0] == index.query(Query(failure="model_error"))[0] == 6

    _, by_reward = index.query(Query(sort="reward", descending=True), limit=24)
    assert [e.reward for e in by_reward] == sorted((r["reward"] for r in rows), reverse=True)
    _, second_page = index.query(Query(sort="num_turns"), offset=20, limit=10)
    assert len(second_page) == 4
    assert index.read(7) == rows[7]
    with pytest.raises(IndexError):
        index.read(24)
    with pytest.raises(ValueError, match="unknown sort key 'bogus'"):
        index.query(Query(sort="bogus"))


def test_index_follows_a_growing_file_and_skips_a_torn_last_line(rollouts_file, tmp_path):
    path = tmp_path / "growing.jsonl"
    lines = rollouts_file.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]))
    index = RolloutIndex(path)
    assert len(index.entries) == 5
    with open(path, "a") as out:
        out.write("".join(lines[5:10]) + lines[10][:40])  # a writer half way through line 11
    assert index.refresh() == 5
    with open(path, "a") as out:
        out.write(lines[10][40:] + "\n")
    assert index.refresh() == 1 and index.read(10) == json.loads(lines[10])
    path.write_text(lines[0])  # replaced by a shorter file: indexed again
    assert index.refresh() == 1 and len(index.entries) == 1


def test_a_bad_line_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"env_id": "x"}\n[1, 2]\n')
    with pytest.raises(RolloutFileError, match=r"bad.jsonl line 2: expected a JSON object, got list"):
        RolloutIndex(path)
    with pytest.raises(RolloutFileError, match="rollouts file not found"):
        RolloutIndex(tmp_path / "missing.jsonl")


def test_a_large_file_is_served_a_page_at_a_time(tmp_path):
    path = tmp_path / "large.jsonl"
    with open(path, "w") as out:
        for n in range(100_000):
            row = {
                "responses_create_params": {"input": [{"role": "user", "content": f"question {n}"}]},
                "response": {"output": [{"type": "message", "role": "assistant", "content": "x" * 200}]},
                "env_id": f"llm/Env{n % 3}-v0",
                "task_index": n // 4,
                "repeat_index": n % 4,
                "reward": (n % 5) / 4,
                "num_turns": 1 + n % 3,
            }
            out.write(json.dumps(row) + "\n")
    with ViewerServer(path) as viewer:
        status, page = get(
            viewer.url + "api/rollouts?env=llm/Env1-v0&sort=reward&order=desc&offset=100&limit=50"
        )
        assert status == 200 and page["total"] == 33_333 and len(page["rows"]) == 50
        assert all(r["env_id"] == "llm/Env1-v0" and r["reward"] == 1.0 for r in page["rows"])
        status, html = get(viewer.url)
        assert len(html) < 20_000  # the page never carries the rollouts
        status, one = get(viewer.url + "api/rollouts/99999")
        assert one["row"]["responses_create_params"]["input"][0]["content"] == "question 99999"


# --------------------------------------------------------------------- API
def test_api_serves_pages_and_rollouts_and_refuses_bad_requests(rollouts_file):
    rows = rows_of(rollouts_file)
    with ViewerServer(rollouts_file) as viewer:
        status, meta = get(viewer.url + "api/meta")
        assert status == 200 and meta["file"] == rollouts_file.name and meta["total"] == 24
        status, page = get(viewer.url + "api/rollouts?env=llm/Weather-v0&masked=hide&sort=reward&limit=3")
        assert page["total"] == 9 and [r["reward"] for r in page["rows"]] == [0.0, 0.0, 0.0]
        status, one = get(viewer.url + "api/rollouts/5")
        assert status == 200 and one["row"] == rows[5]

        assert get(viewer.url + "api/rollouts?min_reward=high")[0] == 400
        assert get(viewer.url + "api/rollouts?sort=bogus")[0] == 400
        assert get(viewer.url + "api/rollouts/24")[0] == 404
        assert get(viewer.url + "assets/secret.py")[0] == 404
        # another site's name pointed at this address (DNS rebinding) is refused
        assert get(viewer.url + "api/meta", host=f"evil.example:{viewer.port}")[0] == 403

        status, html = get(viewer.url)
        assert status == 200 and 'src="assets/app.js"' in html
        with urllib.request.urlopen(viewer.url) as response:
            assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_static_html_escapes_the_rollouts(rollouts_file, tmp_path):
    out = tmp_path / "view.html"
    assert write_html(rollouts_file, out) == (24, 24)
    html = out.read_text()
    assert HOSTILE not in html and "<script>window.__pwned" not in html
    data = re.search(r'<script type="application/json" id="gym-llm-data">(.*?)</script>', html, re.S)
    assert data is not None
    embedded = json.loads(data.group(1))
    assert embedded["rows"] == rows_of(rollouts_file)
    assert HOSTILE in strings(embedded["rows"])  # decoded, the text is intact
    assert html.count("<script") == 2  # the data block and the viewer's code, nothing else
    assert "script-src 'sha256-" in html


def strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


# --------------------------------------------------------------------- CLI
def test_cli_writes_a_static_file(rollouts_file, tmp_path, capsys):
    out = tmp_path / "v.html"
    assert main(["view", str(rollouts_file), "--html", str(out), "--limit", "10"]) == 0
    assert (
        capsys.readouterr().out.strip()
        == f"Wrote 10 rollouts (the first 10 of 24; --limit to change) -> {out}"
    )
    assert main(["view", str(tmp_path / "none.jsonl"), "--html", str(out)]) == 1
    assert "rollouts file not found" in capsys.readouterr().err


def test_cli_serves_until_interrupted(rollouts_file):
    proc = subprocess.Popen(
        [sys.executable, "-m", "gym_llm.cli", "view", str(rollouts_file), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().startswith("Indexed 24 rollouts of ")
        line = proc.stdout.readline()
        url = re.match(r"Viewer at (http://127\.0\.0\.1:\d+/) \(Ctrl\+C to stop\)", line).group(1)
        assert get(url + "api/meta")[1]["total"] == 24
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out.strip() == "stopped" and "Traceback" not in err


def test_cli_reports_a_port_in_use(rollouts_file, capsys):
    with ViewerServer(rollouts_file) as busy:
        start = time.perf_counter()
        assert main(["view", str(rollouts_file), "--port", str(busy.port)]) == 1
        assert time.perf_counter() - start < 30
    err = capsys.readouterr().err
    assert f"gym-llm: error: cannot listen on 127.0.0.1:{busy.port}: " in err and "try another --port" in err
