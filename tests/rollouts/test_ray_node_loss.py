"""A whole Ray node lost mid-run: on a real two-node cluster on loopback (127.0.0.2 and 127.0.0.3),
the second node's raylet, agents and shard worker are SIGKILLed while ``gym-llm collect --ray`` runs.
The run goes on on the other node and writes every (task, repeat) exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from gym_llm.testing import ModelServer

ray = pytest.importorskip("ray", reason='the ray extra is not installed (pip install -e ".[ray]")')

HEAD_IP, SECOND_IP = "127.0.0.2", "127.0.0.3"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def processes() -> dict[int, tuple[bytes, int]]:
    """Every process's command line and parent pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            found[int(entry)] = (cmdline, parent)
    return found


def node_processes(ip: str) -> set[int]:
    """The processes of the Ray node on ``ip``: those naming it, and all their descendants."""
    table = processes()
    node = {pid for pid, (cmdline, _) in table.items() if ip.encode() in cmdline}
    while True:
        children = {pid for pid, (_, parent) in table.items() if parent in node} - node
        if not children:
            return node
        node |= children


@pytest.fixture
def two_nodes():
    """``ray start --block`` on 127.0.0.2 (head) and 127.0.0.3, one CPU each; stopped after."""
    port, temp_dir = free_port(), tempfile.mkdtemp(prefix="/tmp/gymray")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    ray_cli = str(Path(sys.executable).with_name("ray"))
    common = ["--block", "--num-cpus=1"]
    address = f"{HEAD_IP}:{port}"
    quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    nodes = [
        subprocess.Popen(
            [ray_cli, "start", "--head", f"--port={port}", f"--node-ip-address={HEAD_IP}",
             f"--temp-dir={temp_dir}", "--include-dashboard=false", *common], **quiet,
        )
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection((HEAD_IP, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        nodes.append(
            subprocess.Popen(
                [ray_cli, "start", f"--address={address}", f"--node-ip-address={SECOND_IP}", *common], **quiet
            )
        )
        ray.init(address=address, log_to_driver=False)
        try:
            while ray.cluster_resources().get("CPU", 0) < 2:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the second node did not join: {ray.cluster_resources()}")
                time.sleep(0.5)
        finally:
            ray.shutdown()
        yield address, env
    finally:
        for node in reversed(nodes):
            node.terminate()
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.kill()
        shutil.rmtree(temp_dir, ignore_errors=True)


def test_a_lost_node_costs_time_only(tmp_path, two_nodes):
    address, env = two_nodes
    out = tmp_path / "r.jsonl"
    with ModelServer(latency=0.02, record=False) as server:
        run = subprocess.Popen(
            [sys.executable, "-m", "gym_llm.cli", "collect", "llm/Weather-v0", "-o", str(out),
             "--model", "m", "--base-url", server.base_url, "--num-repeats", "60", "--concurrency", "8",
             "--ray", address, "--ray-workers", "2", "--no-progress"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 300
        while not (out.exists() and len(out.read_bytes().splitlines()) >= 60):
            assert time.monotonic() < deadline and run.poll() is None, "the run did not get going"
            time.sleep(0.05)
        killed = node_processes(SECOND_IP)
        assert any(b"ShardWorker" in processes().get(pid, (b"", 0))[0] for pid in killed)
        for pid in killed:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        stdout, stderr = run.communicate(timeout=600)
    assert run.returncode == 0, stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    pairs = Counter((row["task_index"], row["repeat_index"]) for row in rows)
    assert sorted(pairs) == [(t, k) for t in range(6) for k in range(60)]
    assert set(pairs.values()) == {1} and all(row["reward"] == 1.0 for row in rows)
    lost = [line for line in stderr.splitlines() if "was lost" in line]
    assert len(lost) == 1 and "go back to the queue" in lost[0] and "Traceback" not in stderr
    assert "Collected 360 rollouts" in stdout
