"""One-shot sandboxed runs: :func:`run_sandboxed`, and :func:`workdir` for their directories."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gym_llm.sandbox.limits import DEFAULT_LIMITS, Limits, SandboxResult, limit_hit
from gym_llm.sandbox.spawn import HOST_ENV, kill_group, prepare_launch, start_failure


async def run_sandboxed(
    argv: list[str],
    *,
    cwd: str | Path,
    stdin: str | bytes = "",
    limits: Limits = DEFAULT_LIMITS,
    env: dict[str, str] | None = None,
) -> SandboxResult:
    """Run ``argv`` to completion in the sandbox, in the work directory ``cwd``.

    Args:
        argv: The program and its arguments (looked up on ``PATH`` if not a path).
        cwd: The work directory: the only place the program can write. The caller creates and
            removes it (see :func:`workdir`).
        stdin: Data for standard input.
        limits: The resource limits.
        env: Environment variables added to a minimal default environment.

    Returns:
        The result; a limit that stopped the run is named in ``limit``, and a sandbox that could
        not start the program (a missing work directory, a failed ``unshare``, an interpreter that
        cannot be executed) sets ``sandbox_error``. Never raises for anything the program does.

    Raises:
        ValueError: ``argv`` is empty, or ``GYM_LLM_SANDBOX_MODE`` names no mode.
    """
    data = stdin.encode() if isinstance(stdin, str) else stdin
    try:
        launch = await asyncio.to_thread(prepare_launch, argv, cwd, limits, env)
    except OSError as exc:
        return _not_started(f"could not start the sandbox: {exc}")
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(launch.write_fd,),
            start_new_session=True,
            cwd=os.path.realpath(cwd),
            env=HOST_ENV,
        )
    except OSError as exc:
        launch.finish()
        return _not_started(f"could not start the sandbox: {exc}")
    launch.close_write()
    cap = limits.max_output_bytes
    outputs = [bytearray(), bytearray()]
    over_cap = False

    async def pump(stream: asyncio.StreamReader, buffer: bytearray) -> None:
        nonlocal over_cap
        while chunk := await stream.read(65536):
            room = cap - len(buffer)
            buffer += chunk[: max(room, 0)]
            if len(chunk) > room:
                over_cap = True
                kill_group(process.pid)
                return

    async def feed() -> None:
        writer = process.stdin
        assert writer is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if data:
                writer.write(data)
                await writer.drain()
            writer.close()

    assert process.stdout is not None and process.stderr is not None
    tasks = [
        asyncio.ensure_future(pump(process.stdout, outputs[0])),
        asyncio.ensure_future(pump(process.stderr, outputs[1])),
        asyncio.ensure_future(feed()),
    ]
    exited = asyncio.ensure_future(process.wait())
    pending: set[Any] = {exited}
    try:
        _done, pending = await asyncio.wait([*tasks, exited], timeout=limits.wall_seconds)
        timed_out = not exited.done()
    finally:
        # Also on cancellation: never leave the tree running.
        if pending:
            kill_group(process.pid)
        await process.wait()
        # The pipes close once the tree is dead; give the readers a moment, then stop waiting.
        _done, pending = await asyncio.wait([*tasks, exited], timeout=1.0)
        for task in pending:
            task.cancel()
        status = launch.finish()
    returncode = int(status["exit"]) if "exit" in status else process.returncode
    stdout = outputs[0].decode(errors="replace")
    stderr = outputs[1].decode(errors="replace")
    if status.get("error"):
        stderr += status["error"]
    failure = start_failure(status, returncode, stderr, killed=timed_out or over_cap)
    cpu = float(status.get("cpu", 0.0))
    limit = None
    if failure is None:
        limit = limit_hit(returncode, stderr, cpu, limits, timed_out=timed_out, over_cap=over_cap)
    return SandboxResult(returncode, stdout, stderr, timed_out, limit, cpu, failure)


def _not_started(reason: str) -> SandboxResult:
    return SandboxResult(None, "", reason, False, None, sandbox_error=reason)


@contextlib.contextmanager
def workdir(prefix: str = "gym_llm_") -> Iterator[Path]:
    """A fresh temporary work directory, removed (with whatever the run left in it) on exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
