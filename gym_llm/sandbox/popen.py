"""Long-lived sandboxed processes with pipes: :func:`open_sandboxed` and :class:`SandboxedPopen`."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gym_llm.sandbox.limits import DEFAULT_LIMITS, Limits
from gym_llm.sandbox.spawn import HOST_ENV, Launch, kill_group, prepare_launch


class SandboxedPopen:
    """A long-lived sandboxed process with stdin/stdout/stderr pipes (from :func:`open_sandboxed`).

    Synchronous on purpose: it belongs to no event loop, so an env may start it in one loop and
    use it from another (the sync facade does that). Read its pipes from a worker thread.
    """

    def __init__(self, popen: subprocess.Popen[bytes], launch: Launch) -> None:
        self.popen = popen
        self._launch = launch
        self._status: dict[str, Any] | None = None

    @property
    def pid(self) -> int:
        """The launcher's pid (the leader of the run's process group)."""
        return self.popen.pid

    @property
    def uid(self) -> int | None:
        """The uid the program runs as (``None`` unless the mode is ``"root"``)."""
        return self._launch.uid

    def kill(self) -> None:
        """SIGKILL the process group (in namespace modes the kernel then kills the rest)."""
        kill_group(self.popen.pid)

    def close(self) -> dict[str, Any]:
        """Kill the tree, reap it and close the pipes; idempotent.

        Returns:
            The launcher's report: ``{"exit": code, "cpu": seconds}``, with ``"error"`` when the
            sandbox could not start the program; empty if the launcher was killed first.
        """
        if self._status is None:
            if self.popen.poll() is None:
                self.kill()
            self.popen.wait()  # quick: the whole tree has just been SIGKILLed
            for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self._status = self._launch.finish()
        return self._status

    def __enter__(self) -> SandboxedPopen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_sandboxed(
    argv: Sequence[str],
    *,
    cwd: str | Path,
    limits: Limits = DEFAULT_LIMITS,
    env: dict[str, str] | None = None,
) -> SandboxedPopen:
    """Start a long-lived sandboxed process with pipes for stdin, stdout and stderr.

    All of ``limits`` apply except ``wall_seconds`` and ``max_output_bytes``, which the caller
    enforces (see :func:`~gym_llm.sandbox.run_sandboxed` for one-shot runs). Always ``close()``
    the result. The first call in a process detects the sandbox support (about 0.1 s): call it
    off the event loop.

    Raises:
        OSError: The sandbox could not be started (a missing work directory, no pipes or processes).
        ValueError: ``argv`` is empty, or ``GYM_LLM_SANDBOX_MODE`` names no mode.
    """
    launch = prepare_launch(argv, cwd, limits, env)
    try:
        popen = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(launch.write_fd,),
            start_new_session=True,
            cwd=os.path.realpath(cwd),
            env=HOST_ENV,
        )
    except BaseException:
        launch.finish()
        raise
    launch.close_write()
    return SandboxedPopen(popen, launch)
