"""What a sandboxed run may use (:class:`Limits`) and what it did (:class:`SandboxResult`)."""

from __future__ import annotations

import math
import signal
from dataclasses import dataclass

# The names of the Limits fields, as SandboxResult.limit reports them.
LIMIT_CPU = "cpu_seconds"
LIMIT_WALL = "wall_seconds"
LIMIT_MEMORY = "memory_mb"
LIMIT_PROCESSES = "max_processes"
LIMIT_FILE = "max_file_mb"
LIMIT_OUTPUT = "max_output_bytes"

# Error text the interpreter or the C library writes when a limit refuses an allocation.
_MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
_PROCESS_MARKERS = ("BlockingIOError", "Resource temporarily unavailable", "can't start new thread")
_FILE_MARKERS = ("File too large",)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Attributes:
        cpu_seconds: CPU time of each process (``RLIMIT_CPU``, rounded up to whole seconds).
        wall_seconds: Wall-clock time before the whole process tree is killed.
        memory_mb: Address space of each process (``RLIMIT_AS``).
        max_processes: Processes and threads at once (``RLIMIT_NPROC`` of the run's own uid).
        max_file_mb: Size of any one file written (``RLIMIT_FSIZE``).
        max_output_bytes: Bytes kept of stdout and of stderr; more kills the run.

    Raises:
        ValueError: A limit is not a positive number (``max_file_mb`` and ``max_output_bytes``
            may be 0).

    Example:
        >>> Limits(cpu_seconds=2).wall_seconds
        20.0
        >>> Limits(memory_mb=0)
        Traceback (most recent call last):
        ...
        ValueError: Limits.memory_mb must be > 0, got 0
    """

    cpu_seconds: float = 10.0
    wall_seconds: float = 20.0
    memory_mb: int = 1024
    max_processes: int = 64
    max_file_mb: int = 64
    max_output_bytes: int = 1_000_000

    def __post_init__(self) -> None:
        for name in (LIMIT_CPU, LIMIT_WALL, LIMIT_MEMORY, LIMIT_PROCESSES):
            value = getattr(self, name)
            if not value > 0:  # also refuses NaN
                raise ValueError(f"Limits.{name} must be > 0, got {value!r}")
        for name in (LIMIT_FILE, LIMIT_OUTPUT):
            value = getattr(self, name)
            if not value >= 0:
                raise ValueError(f"Limits.{name} must be >= 0, got {value!r}")


DEFAULT_LIMITS = Limits()


@dataclass
class SandboxResult:
    """What a sandboxed run did.

    Attributes:
        returncode: The exit status; negative for a signal (as ``subprocess``); ``None`` if the
            process could not be started.
        stdout: Standard output (decoded as UTF-8 with replacement, at most the output cap).
        stderr: Standard error (same).
        timed_out: The wall-clock limit was hit.
        limit: The name of the :class:`Limits` field that stopped the run, if one did.
        cpu_seconds: CPU time the program used (0.0 when the launcher could not report it).
        sandbox_error: Why the sandbox could not start the program (an infrastructure failure,
            not the program's own), else ``None``. The program did not run when this is set.
    """

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    limit: str | None
    cpu_seconds: float = 0.0
    sandbox_error: str | None = None

    @property
    def ok(self) -> bool:
        """The run exited with status 0 and hit no limit."""
        return self.returncode == 0 and not self.timed_out and self.limit is None


def limit_hit(
    returncode: int | None, stderr: str, cpu: float, limits: Limits, *, timed_out: bool, over_cap: bool
) -> str | None:
    """Which limit stopped a run, from its exit signal, CPU time and error text (``None``: none did)."""
    if over_cap:
        return LIMIT_OUTPUT
    # Only RLIMIT_CPU's soft limit sends SIGXCPU; a SIGKILL is its hard limit only with the CPU spent.
    if returncode == -signal.SIGXCPU or (
        returncode == -signal.SIGKILL and cpu >= math.ceil(limits.cpu_seconds) - 0.05
    ):
        return LIMIT_CPU
    if timed_out:
        return LIMIT_WALL
    if returncode == -signal.SIGXFSZ:
        return LIMIT_FILE
    if returncode in (None, 0):
        return None
    tail = stderr[-4000:]
    if any(marker in tail for marker in _FILE_MARKERS):
        return LIMIT_FILE
    if any(marker in tail for marker in _MEMORY_MARKERS):
        return LIMIT_MEMORY
    if any(marker in tail for marker in _PROCESS_MARKERS):
        return LIMIT_PROCESSES
    return None
