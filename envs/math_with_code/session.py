"""The Python process behind ``execute_python``: one sandboxed worker per episode, globals kept.

A :class:`PythonSession` is a :mod:`gym_llm.sandbox` process running ``worker.py``. Starting one
takes about 0.3 s (numpy and pandas load), so :class:`WarmPool` keeps a few started ones ready:
an episode's first call takes one and runs its code at once, and the pool starts a replacement
in the background. Sessions are never shared: a taken session belongs to one episode and is
killed with it.

Failures are told apart: :class:`SessionStartError` (the sandbox could not start the process,
or it never became ready: an infrastructure failure, the code never ran) and
:class:`SessionError` (the process died or broke the protocol while running the code).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import weakref
from collections import deque
from functools import cache
from pathlib import Path
from typing import Any

from gym_llm.sandbox import Limits, SandboxedPopen, open_sandboxed

logger = logging.getLogger(__name__)

# Idle sessions per pool at most: each holds about 100 MB (numpy and pandas loaded).
MAX_WARM_SESSIONS = max(1, min(8, os.cpu_count() or 1))


@cache
def worker_source() -> str:
    """The source of ``worker.py``, sent with ``python -I -c`` (the sandbox may not read this package)."""
    return (Path(__file__).parent / "worker.py").read_text(encoding="utf-8")


class SessionError(RuntimeError):
    """The Python process died or broke the protocol."""


class SessionStartError(SessionError):
    """The sandbox could not start the Python process, or it did not become ready in time."""


class PythonSession:
    """One sandboxed Python process with persistent globals, and its temporary work directory.

    Blocking methods (``start``, ``execute``) run in a worker thread; ``kill`` may be called from
    any thread and makes a blocked call return at once.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.workdir = tempfile.mkdtemp(prefix="gym_llm_python_")
        self.process: SandboxedPopen | None = None
        self.preloaded: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    def start(self, timeout: float) -> None:
        """Start the process and wait until it is ready (its preloads imported).

        Raises:
            SessionStartError: The sandbox could not start it, it exited, or it was not ready
                within ``timeout`` seconds. The session is closed then.
        """
        try:
            with self._lock:
                if self._closed:
                    raise SessionStartError("the session is closed")
                try:
                    self.process = open_sandboxed(
                        [sys.executable, "-I", "-c", worker_source()],
                        cwd=self.workdir,
                        limits=self.limits,
                        env={"GYM_LLM_OUTPUT_CAP": str(self.limits.max_output_bytes)},
                    )
                except (OSError, ValueError) as exc:
                    raise SessionStartError(f"could not start the sandbox: {exc}") from None
                # A start that hangs is killed: the blocked read below then returns.
                watchdog = threading.Timer(timeout, self.process.kill)
                watchdog.daemon = True
                watchdog.start()
                try:
                    ready = self._receive()
                except SessionError as exc:
                    late = not watchdog.is_alive()
                    reason = f"not ready within {timeout:g} s" if late else str(exc)
                    raise SessionStartError(f"the Python process did not start: {reason}") from None
                finally:
                    watchdog.cancel()
                self.preloaded = list(ready.get("preloaded", []))
        except SessionStartError:
            self.close()
            raise

    @property
    def alive(self) -> bool:
        """Started, not closed, and its process still running."""
        return not self._closed and self.process is not None and self.process.popen.poll() is None

    def execute(self, code: str) -> dict[str, Any]:
        """Run ``code`` and return the worker's reply (NeMo Gym's fields).

        Raises:
            SessionError: The process died (or was killed) or broke the protocol.
        """
        with self._lock:
            if self.process is None or self._closed:
                raise SessionError("the session is closed")
            stdin = self.process.popen.stdin
            assert stdin is not None
            try:
                stdin.write(json.dumps({"code": code}).encode() + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise SessionError(self._death_reason()) from exc
            return self._receive()

    def _receive(self) -> dict[str, Any]:
        assert self.process is not None and self.process.popen.stdout is not None
        try:
            line = self.process.popen.stdout.readline()
        except (ValueError, OSError):
            line = b""
        if not line:
            raise SessionError(self._death_reason())
        try:
            message = json.loads(line)
        except ValueError:
            raise SessionError("the Python process broke its reply protocol") from None
        if not isinstance(message, dict):
            raise SessionError("the Python process broke its reply protocol")
        return message

    def _death_reason(self) -> str:
        if self._closed:
            return "the Python process was stopped"
        assert self.process is not None
        self.process.kill()  # the tree is dead, so reading stderr to its end cannot block
        stderr = b""
        with contextlib.suppress(Exception):
            stderr = self.process.popen.stderr.read()[-2000:] if self.process.popen.stderr else b""
        status = self.process.close()
        if status.get("error"):  # the launcher could not start the interpreter
            return str(status["error"]).strip()
        code = status.get("exit", self.process.popen.returncode)
        detail = stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {code}"]
        return f"the Python process exited ({detail[0]})"

    def kill(self) -> None:
        """Stop the process now (thread-safe; a blocked call then fails promptly)."""
        self._closed = True
        if self.process is not None:
            self.process.kill()

    def close(self) -> None:
        """Kill the process, reap it and remove the work directory."""
        self.kill()
        with self._lock:
            if self.process is not None:
                self.process.close()
            shutil.rmtree(self.workdir, ignore_errors=True)


class WarmPool:
    """Started sessions with the same limits, waiting for episodes; one filler thread per pool.

    The pool keeps as many idle sessions as there are attached envs, at most
    :data:`MAX_WARM_SESSIONS`; with no env attached it closes them and its thread ends. A start
    that fails is retried after a growing pause (up to 30 s), so a broken sandbox costs nothing
    but the episodes' own start attempts, which report the failure.
    """

    def __init__(self, limits: Limits, startup_timeout: float) -> None:
        self.limits = limits
        self.startup_timeout = startup_timeout
        self._idle: deque[PythonSession] = deque()
        self._attached = 0
        self._failures = 0
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def target(self) -> int:
        """How many idle sessions the pool aims to hold now."""
        return min(self._attached, MAX_WARM_SESSIONS)

    @property
    def idle(self) -> int:
        """How many started sessions are waiting."""
        return len(self._idle)

    def attach(self) -> None:
        """Count one more env that will take sessions (starts the filler thread if needed)."""
        with self._changed:
            self._attached += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._fill, name="gym_llm-python-warm", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def detach(self) -> None:
        """Count one env less; the last one to leave closes the idle sessions."""
        with self._changed:
            self._attached = max(0, self._attached - 1)
            self._changed.notify_all()

    def take(self) -> PythonSession | None:
        """A started session of its own for the caller, or ``None`` if none is ready."""
        with self._changed:
            while self._idle:
                session = self._idle.popleft()
                self._changed.notify_all()
                if session.alive:
                    return session
                threading.Thread(target=session.close, daemon=True).start()
        return None

    def wait_ready(self, count: int = 1, timeout: float = 30.0) -> bool:
        """Wait until at least ``count`` sessions are idle; whether they are."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._idle) >= count, timeout)

    def close_idle(self) -> None:
        """Close every idle session now."""
        with self._changed:
            idle, self._idle = list(self._idle), deque()
        for session in idle:
            session.close()

    def _fill(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._attached == 0 or len(self._idle) != self.target)
                if self._attached == 0:
                    self._thread = None
                    break
                if len(self._idle) > self.target:
                    surplus = [self._idle.pop() for _ in range(len(self._idle) - self.target)]
                else:
                    surplus = []
            for session in surplus:
                session.close()
            if surplus:
                continue
            session = PythonSession(self.limits)
            try:
                session.start(self.startup_timeout)
            except SessionStartError as exc:
                self._failures += 1
                pause = min(30.0, 0.5 * 2**self._failures)
                logger.warning("could not warm a Python session (retrying in %.1f s): %s", pause, exc)
                with self._changed:
                    self._changed.wait_for(lambda: self._attached == 0, pause)
                continue
            self._failures = 0
            with self._changed:
                self._idle.append(session)
                self._changed.notify_all()
        self.close_idle()


_pools: dict[tuple[Limits, float], WarmPool] = {}
_pools_lock = threading.Lock()


def warm_pool(limits: Limits, startup_timeout: float) -> WarmPool:
    """The process-wide pool of sessions with ``limits`` (made on first use)."""
    with _pools_lock:
        pool = _pools.get((limits, startup_timeout))
        if pool is None:
            pool = _pools[(limits, startup_timeout)] = WarmPool(limits, startup_timeout)
        return pool


def attach_while_alive(owner: object, pool: WarmPool) -> weakref.finalize:
    """Attach ``owner`` to ``pool`` until the returned finalizer runs (called, or ``owner`` collected)."""
    pool.attach()
    return weakref.finalize(owner, pool.detach)


@atexit.register
def _close_all() -> None:
    with _pools_lock:
        pools = list(_pools.values())
    for pool in pools:
        pool.close_idle()
