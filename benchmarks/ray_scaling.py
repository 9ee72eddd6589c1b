"""Rollouts/s and driver CPU per rollout of collection on Ray: 1, 2 and 4 workers on a two-node cluster.

The cluster runs on this machine over loopback: a head node on 127.0.0.2 and a second node on
127.0.0.3 (``ray start --block``, stopped at the end; other Ray clusters on the machine are left
alone). The model is the test model server in its own process (``--latency`` seconds per call),
playing Weather's reference solution, two calls per rollout; ``--policy reference`` plays it in the
workers instead, with no model server. For each worker count, one ``acollect`` run of
``--rollouts`` rollouts at ``--concurrency`` episodes in flight over all workers. Driver CPU is this
process's CPU time over the run (Ray's threads in it included) divided by the rollouts written: the
driver only writes the batches the workers send.

Run: ``python benchmarks/ray_scaling.py [--rollouts N] [--workers 1,2,4] [--latency S] [--policy server]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ray

import gym_llm  # noqa: F401 - registers the envs
from gym_llm.policies import ReferencePolicy, ResponsesPolicy
from gym_llm.rollouts import acollect

ENV_ID = "llm/Weather-v0"
HEAD_IP, SECOND_IP = "127.0.0.2", "127.0.0.3"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LoopbackCluster:
    """Two Ray nodes on loopback addresses, each ``cpus`` CPUs, run by ``ray start --block``."""

    def __init__(self, cpus: int) -> None:
        self.port = free_port()
        self.temp_dir = tempfile.mkdtemp(prefix="/tmp/gymray")
        # loopback only: no token authentication, so that the driver joins without the head's token
        os.environ["RAY_AUTH_MODE"] = "disabled"
        self.env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        ray_cli = str(Path(sys.executable).with_name("ray"))
        common = ["--block", f"--num-cpus={cpus}"]
        self.nodes = [
            subprocess.Popen(
                [ray_cli, "start", "--head", f"--port={self.port}", f"--node-ip-address={HEAD_IP}",
                 f"--temp-dir={self.temp_dir}", "--include-dashboard=false", *common],
                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        ]  # fmt: skip
        self.address = f"{HEAD_IP}:{self.port}"
        self._ray_cli, self._common = ray_cli, common
        self._wait_for_port(HEAD_IP, self.port)

    def add_second_node(self) -> None:
        """Start the node on 127.0.0.3 (once the head answers: a driver has connected to it)."""
        self.nodes.append(
            subprocess.Popen(
                [self._ray_cli, "start", f"--address={self.address}", f"--node-ip-address={SECOND_IP}",
                 *self._common],
                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip

    def wait_for_cpus(self, cpus: float, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while ray.cluster_resources().get("CPU", 0) < cpus:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster did not reach {cpus} CPUs: {ray.cluster_resources()}")
            time.sleep(0.5)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.terminate()
            try:
                node.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.kill()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    @staticmethod
    def _wait_for_port(host: str, port: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((host, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the Ray head did not open {host}:{port}")


def start_model_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "gym_llm.testing.model_server",
        "--port",
        str(port),
        "--latency",
        str(latency),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # "serving on ..."
    return proc, f"http://127.0.0.1:{port}/v1"


async def one_run(address: str, workers: int, rollouts: int, concurrency: int, url: str | None) -> tuple:
    policy = ResponsesPolicy("m", url) if url else ReferencePolicy()
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        result = await acollect(
            ENV_ID,
            Path(tmp) / "rollouts.jsonl",
            policy=policy,
            num_repeats=-(-rollouts // 6),
            concurrency=concurrency,
            ray_address=address,
            ray_workers=workers,
        )
        cpu = time.process_time() - cpu
    assert result.summary["mean_reward"] == 1.0, result.summary
    return result.written, result.seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=6000)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.02, help="model server latency per call, seconds")
    parser.add_argument("--policy", choices=["server", "reference"], default="server")
    parser.add_argument("--cpus-per-node", type=int, default=2)
    args = parser.parse_args()
    worker_counts = [int(w) for w in args.workers.split(",")]
    cluster = LoopbackCluster(args.cpus_per_node)
    server = None
    try:
        url = None
        if args.policy == "server":
            server, url = start_model_server(args.latency)
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.add_second_node()
        cluster.wait_for_cpus(2 * args.cpus_per_node)
        asyncio.run(one_run(cluster.address, 1, 60, 4, url))  # warm up: workers import gym_llm once
        what = (
            f"model server, {args.latency * 1000:g} ms per call" if url else "reference policy in the workers"
        )
        print(f"{ENV_ID}, {what}; two nodes ({HEAD_IP}, {SECOND_IP}) x {args.cpus_per_node} CPUs")
        print(
            f"on one {os.cpu_count()}-core machine; concurrency {args.concurrency}; runs of {args.rollouts}"
        )
        print(f"{'workers':>7} {'rollouts/s':>11} {'steady':>8} {'driver CPU ms/rollout':>22} {'steady':>8}")
        small = args.rollouts // 4
        for workers in worker_counts:
            n1, t1, cpu1 = asyncio.run(one_run(cluster.address, workers, small, args.concurrency, url))
            n2, t2, cpu2 = asyncio.run(
                one_run(cluster.address, workers, args.rollouts, args.concurrency, url)
            )
            # steady: the long run's extra rollouts over its extra time and CPU (start-up cancels out)
            steady_rate, steady_cpu = (n2 - n1) / (t2 - t1), (cpu2 - cpu1) / (n2 - n1)
            print(f"{workers:>7} {n2 / t2:>11,.0f} {steady_rate:>8,.0f} {cpu2 / n2 * 1000:>22.4f} "
                  f"{steady_cpu * 1000:>8.4f}")  # fmt: skip
        print(f"(whole run: worker start included; steady: a {args.rollouts} run minus a {small} run;")
        print(" driver CPU: this process's, Ray's threads in it included)")
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if server is not None:
            server.terminate()
            server.wait()
        cluster.stop()


if __name__ == "__main__":
    main()
