"""One prepared launch: the wrapper command, the status pipe and the run's uid, and their cleanup."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gym_llm.sandbox.launch import launch_argv, launch_config, read_status
from gym_llm.sandbox.limits import Limits
from gym_llm.sandbox.support import sandbox_support
from gym_llm.sandbox.uids import release_uid, take_uid

# The launcher (and unshare) start with nothing of the host's environment but PATH.
HOST_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@dataclass
class Launch:
    """A prepared launch: the wrapper argv, the status pipe and the run's uid."""

    argv: list[str]
    read_fd: int
    write_fd: int
    uid: int | None

    def close_write(self) -> None:
        """Close the parent's copy of the status pipe's write end (once the launcher has it)."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def finish(self) -> dict[str, Any]:
        """Read the launcher's report (after the exit), close the pipe, free the uid; idempotent.

        Returns:
            The status dict (see :mod:`gym_llm.sandbox.launcher`); empty if there was none, or on
            a second call.
        """
        self.close_write()
        if self.read_fd < 0:
            return {}
        status = read_status(self.read_fd)
        os.close(self.read_fd)
        self.read_fd = -1
        release_uid(self.uid)
        return status


def prepare_launch(
    argv: Sequence[str], cwd: str | Path, limits: Limits, env: dict[str, str] | None
) -> Launch:
    """Prepare the launch of ``argv`` in the work directory ``cwd`` (blocking: detects the support).

    Raises:
        ValueError: ``argv`` is empty, or the forced sandbox mode is unknown.
        OSError: The work directory is missing, or no pipe could be made.
    """
    if not argv:
        raise ValueError("argv is empty")
    support = sandbox_support()
    work = os.path.realpath(cwd)
    if not os.path.isdir(work):
        raise FileNotFoundError(f"sandbox work directory not found: {work}")
    uid = take_uid() if support.mode == "root" else None
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        release_uid(uid)
        raise
    config = launch_config(support.mode, argv, work, limits, env, write_fd, uid)
    return Launch(launch_argv(support.mode, config), read_fd, write_fd, uid)


def kill_group(pid: int) -> None:
    """SIGKILL the process group of the launcher ``pid`` (in namespace modes the kernel kills the rest)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def start_failure(status: dict[str, Any], returncode: int | None, stderr: str, *, killed: bool) -> str | None:
    """Why the sandbox could not start the program, from the launcher's report; ``None`` if it did.

    The launcher reports ``"error"`` when setting up the sandbox or starting the program failed.
    No report at all, from a run that was not killed, means the launcher never got going (e.g.
    ``unshare`` failed).
    """
    if status.get("error"):
        return str(status["error"]).strip()
    if not status and not killed:
        tail = stderr.strip()[-500:]
        return f"the sandbox launcher exited with status {returncode} without a report" + (
            f": {tail}" if tail else ""
        )
    return None
