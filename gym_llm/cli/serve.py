"""``gym-llm serve ENV_ID``: one env over HTTP (NeMo Gym's resources-server protocol and reset/step)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import os
import signal
import sys
from typing import Any

from gym_llm.cli.common import check_env_id, json_object, positive_int
from gym_llm.server.app import DEFAULT_MAX_REQUEST_BYTES

TOKEN_VARIABLE = "GYM_LLM_SERVER_TOKEN"


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser(
        "serve",
        help="serve an env over HTTP (NeMo Gym resources-server and reset/step protocols)",
        description=(
            "Serve ENV_ID over HTTP: NeMo Gym's resources-server protocol (/seed_session, /<tool>, "
            "/verify, /close_session, /aggregate_metrics) for NeMo Gym's agents and NeMo RL, and a "
            'reset/step protocol for gymnasium.make("llm/Remote-v0", base_url=...).'
        ),
    )
    parser.add_argument("env_id", help="env id, e.g. llm/Weather-v0 (see `gym-llm list`)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument(
        "--token",
        help=f"bearer token every request must carry (default: ${TOKEN_VARIABLE}; none when unset)",
    )
    parser.add_argument("--input", help="task rows (JSONL) instead of the env's bundled tasks")
    parser.add_argument("--max-turns", type=positive_int, help="override the env's turn budget")
    parser.add_argument(
        "--env-kwargs", type=json_object, default={}, metavar="JSON", help="keyword arguments for the env"
    )
    parser.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=600.0,
        metavar="SECONDS",
        help="close sessions idle this long (default 600)",
    )
    parser.add_argument(
        "--max-sessions", type=positive_int, default=10_000, help="open sessions at most (default 10000)"
    )
    parser.add_argument(
        "--max-request-mb",
        type=_positive_float,
        default=DEFAULT_MAX_REQUEST_BYTES / 2**20,
        metavar="MB",
        help=f"largest request body accepted, in MiB (default {DEFAULT_MAX_REQUEST_BYTES // 2**20})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    from gym_llm.server import EnvServer

    check_env_id(args.env_id)
    env_id = args.env_id.rpartition(":")[2]  # "module:id" imported its module in the check
    env_kwargs = dict(args.env_kwargs)
    if args.input:
        env_kwargs["tasks"] = args.input
    if args.max_turns:
        env_kwargs["max_turns"] = args.max_turns
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    server = EnvServer(
        env_id,
        host=args.host,
        port=args.port,
        token=token,
        env_kwargs=env_kwargs,
        idle_timeout=args.idle_timeout,
        max_sessions=args.max_sessions,
        max_request_bytes=int(args.max_request_mb * 2**20),
    )
    if token is None and not _is_loopback(args.host):
        print(
            f"gym-llm: warning: serving on {args.host} without a token: anyone who can reach this "
            f"port can run the env; pass --token or set ${TOKEN_VARIABLE}",
            file=sys.stderr,
        )
    try:
        asyncio.run(_serve(server))
    except KeyboardInterrupt:
        pass
    print("Stopped.", flush=True)
    return 0


async def _serve(server: Any) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows
            loop.add_signal_handler(signum, stop.set)
    await server.astart()
    print(
        f"Serving {server.served.env_id} on {server.base_url} "
        "(NeMo Gym resources server and reset/step protocols); Ctrl-C to stop",
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await server.astop()


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
