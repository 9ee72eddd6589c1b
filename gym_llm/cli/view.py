"""``gym-llm view``: read rollouts in the browser (a local server, or one static HTML file)."""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

from gym_llm.cli.common import CLIError, positive_int


def add_parser(commands: Any) -> None:
    """Add this command's sub-parser to ``commands`` (``argparse`` sub-parsers)."""
    parser = commands.add_parser(
        "view",
        help="view rollouts in the browser (a local web page)",
        description="Serve a page that lists the rollouts of a JSONL file (filter by env, failure kind and "
        "reward; sort by any column) and shows one as a chat: messages, reasoning, tool calls and outputs, "
        "and the verifier's details. With --html, write the page as one self-contained file instead.",
    )
    parser.add_argument("rollouts", help="rollouts file (JSONL), e.g. from `gym-llm collect`")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=8765, help="port to listen on; 0 picks a free one (default 8765)"
    )
    parser.add_argument("--html", metavar="OUT", help="write a static HTML file instead of serving")
    parser.add_argument(
        "--limit",
        type=positive_int,
        default=1000,
        help="--html: the most rollouts the file holds, from the start of the file (default 1000)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit status."""
    if args.html:
        from gym_llm.viewer.static import write_html

        held, total = write_html(args.rollouts, args.html, limit=args.limit)
        more = f" (the first {held} of {total}; --limit to change)" if held < total else ""
        print(f"Wrote {held} rollouts{more} -> {args.html}")
        return 0
    from gym_llm.viewer.server import ViewerServer

    start = time.perf_counter()
    server = ViewerServer(args.rollouts, host=args.host, port=args.port)
    took = time.perf_counter() - start
    print(f"Indexed {len(server.index.entries)} rollouts of {args.rollouts} in {took:.2f} s")
    try:
        server.start()
    except OSError as exc:
        raise CLIError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; try another --port"
        ) from None
    print(f"Viewer at {server.url} (Ctrl+C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.stop()
    return 0
