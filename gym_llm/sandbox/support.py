"""Which isolation this machine allows: detected once per process by running a probe."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

from gym_llm.sandbox.launch import MODES, launch_argv, launch_config, read_status, seccomp_arch
from gym_llm.sandbox.limits import Limits
from gym_llm.sandbox.uids import PROBE_UID

logger = logging.getLogger("gym_llm.sandbox")

MODE_ENV = "GYM_LLM_SANDBOX_MODE"  # force a mode ("root", "userns", "none"), e.g. to test a fallback


@dataclass(frozen=True)
class SandboxSupport:
    """The isolation this machine allows (see :mod:`gym_llm.sandbox`).

    Attributes:
        mode: ``"root"``, ``"userns"`` or ``"none"``.
        network_isolated: Runs cannot open network connections.
        filesystem_readonly: Runs can write only in their work directory.
        separate_uid: Each run has a uid of its own.
        pid_namespace: Runs live in their own PID namespace (nothing outlives them).
        seccomp_network: The network is refused by a seccomp filter (the ``"none"`` mode).
        notes: Why better modes were not available.
    """

    mode: str
    network_isolated: bool
    filesystem_readonly: bool
    separate_uid: bool
    pid_namespace: bool
    seccomp_network: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


_support: SandboxSupport | None = None
_lock = threading.Lock()


def sandbox_support() -> SandboxSupport:
    """Detect (once per process, by running a probe of about 0.1 s) and return the isolation in use.

    Raises:
        ValueError: ``GYM_LLM_SANDBOX_MODE`` names no mode.
    """
    global _support
    with _lock:
        if _support is None:
            _support = _detect()
            if not _support.filesystem_readonly:
                logger.warning(
                    "gym_llm sandbox mode %r: the file system is not protected (%s)",
                    _support.mode,
                    "; ".join(_support.notes),
                )
        return _support


def _detect() -> SandboxSupport:
    forced = os.environ.get(MODE_ENV)
    if forced and forced not in MODES:
        raise ValueError(f"{MODE_ENV}={forced!r} is not one of {', '.join(MODES)}")
    notes: list[str] = []
    candidates = [forced] if forced else ["root", "userns"]
    for mode in candidates:
        if mode == "none":
            break
        if mode == "root" and os.geteuid() != 0:
            notes.append("root mode needs euid 0")
            continue
        if shutil.which("unshare") is None:
            notes.append("unshare not found")
            break
        error = _probe(mode)
        if error is None:
            return SandboxSupport(
                mode=mode,
                network_isolated=True,
                filesystem_readonly=True,
                separate_uid=mode == "root",
                pid_namespace=True,
                seccomp_network=False,
                notes=tuple(notes),
            )
        notes.append(f"{mode} mode probe failed: {error}")
    seccomp = seccomp_arch() is not None
    return SandboxSupport(
        mode="none",
        network_isolated=seccomp,
        filesystem_readonly=False,
        separate_uid=False,
        pid_namespace=False,
        seccomp_network=seccomp,
        notes=tuple(notes),
    )


def _probe(mode: str) -> str | None:
    """Run ``python -c pass`` fully sandboxed in ``mode``; ``None`` if it worked, else why not."""
    work = tempfile.mkdtemp(prefix="gym_llm_probe_")
    read_fd, write_fd = os.pipe()
    try:
        config = launch_config(
            mode, [sys.executable, "-I", "-S", "-c", "pass"], work, Limits(), None, write_fd, PROBE_UID
        )
        argv = launch_argv(mode, config)
        try:
            done = subprocess.run(argv, pass_fds=(write_fd,), capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
        os.close(write_fd)
        write_fd = -1
        status = read_status(read_fd)
        if done.returncode != 0 or status.get("exit") != 0:
            err = (done.stderr.decode(errors="replace") + status.get("error", "")).strip()
            return err[-300:] or f"exit status {done.returncode}"
        return None
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
        shutil.rmtree(work, ignore_errors=True)
