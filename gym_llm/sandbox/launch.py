"""The launcher's command line: its configuration for one run, the namespace wrapper, its report."""

from __future__ import annotations

import contextlib
import marshal
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

from gym_llm.sandbox.launcher import launcher_source
from gym_llm.sandbox.limits import Limits

MODES = ("root", "userns", "none")


def seccomp_arch() -> tuple[int, int] | None:
    """``(AUDIT_ARCH, __NR_socket)`` for the architectures the seccomp fallback knows, else ``None``."""
    machine = os.uname().machine
    if machine == "x86_64":
        return 0xC000003E, 41
    if machine in ("aarch64", "arm64"):
        return 0xC00000B7, 198
    return None


def interpreter_paths() -> list[str]:
    """Directories the sandboxed interpreter must be able to read."""
    paths = {sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(os.path.realpath(p) for p in paths)


def default_env(work: str) -> dict[str, str]:
    """The program's environment before the caller's additions: minimal, pointing into ``work``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": work,
        "TMPDIR": work,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # One BLAS/OpenMP thread: threads count against RLIMIT_NPROC and RLIMIT_AS.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def launch_config(
    mode: str,
    argv: Sequence[str],
    work: str,
    limits: Limits,
    env: dict[str, str] | None,
    status_fd: int,
    uid: int | None,
) -> dict[str, Any]:
    """The launcher's configuration for one run in ``mode`` (see :mod:`gym_llm.sandbox`)."""
    cpu = max(1, math.ceil(limits.cpu_seconds))
    memory = limits.memory_mb * 1024 * 1024
    fsize = limits.max_file_mb * 1024 * 1024
    rlimits = {
        "RLIMIT_CPU": [cpu, cpu + 1],
        "RLIMIT_AS": [memory, memory],
        "RLIMIT_FSIZE": [fsize, fsize],
        "RLIMIT_CORE": [0, 0],
        "RLIMIT_NOFILE": [1024, 1024],
    }
    # As root outside namespaces RLIMIT_NPROC is bypassed; as a user it counts all their processes.
    if mode != "none":
        rlimits["RLIMIT_NPROC"] = [limits.max_processes, limits.max_processes]
    seccomp = seccomp_arch() if mode == "none" else None
    return {
        "argv": list(argv),
        "env": {**default_env(work), **(env or {})},
        "work": work,
        "rlimits": rlimits,
        "status_fd": status_fd,
        "uid": uid if mode == "root" else None,
        "isolate_fs": mode != "none",
        "drop_caps": mode == "userns",
        "reveal": interpreter_paths() if mode == "root" else [],
        "seccomp": list(seccomp) if seccomp else None,
    }


def launch_argv(mode: str, config: dict[str, Any]) -> list[str]:
    """The host-side command: the launcher, wrapped in ``unshare`` in the namespace modes."""
    # marshal, not json: the launcher starts faster without importing json (and re).
    launcher = [sys.executable, "-I", "-S", "-c", launcher_source(), marshal.dumps(config).hex()]
    if mode == "none":
        return launcher
    namespaces = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if mode == "userns":
        namespaces = ["--user", "--map-root-user", *namespaces]
    return ["unshare", *namespaces, "--", *launcher]


def read_status(read_fd: int) -> dict[str, Any]:
    """The launcher's status report (empty if it exited or was killed before writing one)."""
    chunks = []
    os.set_blocking(read_fd, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
    try:
        status = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        return {}
    return status if isinstance(status, dict) else {}
