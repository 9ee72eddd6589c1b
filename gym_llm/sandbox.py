"""Run untrusted (model-generated) code in a sandboxed subprocess.

Every run gets CPU, wall-clock, memory, process, file-size and output limits, its own work
directory, and no network. How much isolation is possible depends on the machine; it is
detected once per process (:func:`sandbox_support`) and used by every run:

``"root"`` (running as root with util-linux ``unshare``; the mode used on the dev and CI machines)
    The code runs in new network, mount and PID namespaces. The network namespace has only a
    down loopback: no connection can be made, not even to ``127.0.0.1`` of the host. In the mount
    namespace every mount is made read-only and only the work directory is mounted writable; the
    code runs as a fresh unprivileged uid/gid per run (no capabilities, ``no_new_privs``), so it
    can write only inside the work directory, cannot read root-only files such as ``/root/*``
    (directories that the interpreter needs are re-exposed read-only), and cannot signal host
    processes. The per-run uid also makes ``RLIMIT_NPROC`` count this run's processes only. The
    launcher is PID 1 of the namespace: when the run ends or is killed, the kernel kills every
    process left in it, including ones that escaped the process group.
``"userns"`` (not root, unprivileged user namespaces allowed)
    The same namespaces inside a user namespace, with all capabilities dropped instead of a
    separate uid (so ``RLIMIT_NPROC`` counts per user namespace). Not exercised on the CI machine.
``"none"`` (no namespaces)
    Resource limits, a process group that is killed as a whole, and a seccomp filter that refuses
    ``socket()`` for every family but ``AF_UNIX`` (x86-64 and aarch64). The file system is *not*
    protected in this mode: a warning is logged once.

In all modes: ``RLIMIT_CPU`` (whole seconds, rounded up; ``SIGXCPU`` then ``SIGKILL`` a second
later), ``RLIMIT_AS`` (memory), ``RLIMIT_NPROC``, ``RLIMIT_FSIZE`` (per file; the total size of
the work directory is not limited), ``RLIMIT_CORE=0``, a wall-clock limit (the whole process tree
is killed) and an output cap (the run is killed once stdout or stderr exceeds it).

Example:
    >>> import asyncio, tempfile
    >>> from gym_llm.sandbox import Limits, run_sandboxed
    >>> with tempfile.TemporaryDirectory() as work:  # doctest: +SKIP
    ...     result = asyncio.run(run_sandboxed(["python3", "-c", "print(6 * 7)"], cwd=work))
    >>> result.stdout, result.ok  # doctest: +SKIP
    ('42\\n', True)
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import marshal
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

MODE_ENV = "GYM_LLM_SANDBOX_MODE"  # force a mode ("root", "userns", "none"), e.g. to test a fallback

_LIMIT_CPU = "cpu_seconds"
_LIMIT_WALL = "wall_seconds"
_LIMIT_MEMORY = "memory_mb"
_LIMIT_PROCESSES = "max_processes"
_LIMIT_FILE = "max_file_mb"
_LIMIT_OUTPUT = "max_output_bytes"

# Per-run uids: a block of 256 per host process, far above any real account.
_UID_BASE = 100_000
_UID_SLOTS = 256

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
    """

    cpu_seconds: float = 10.0
    wall_seconds: float = 20.0
    memory_mb: int = 1024
    max_processes: int = 64
    max_file_mb: int = 64
    max_output_bytes: int = 1_000_000


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
    """

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    limit: str | None
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The run exited with status 0 and hit no limit."""
        return self.returncode == 0 and not self.timed_out and self.limit is None


@dataclass(frozen=True)
class SandboxSupport:
    """The isolation this machine allows (see the module docstring)."""

    mode: str
    network_isolated: bool
    filesystem_readonly: bool
    separate_uid: bool
    pid_namespace: bool
    seccomp_network: bool
    notes: tuple[str, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------- support
_support: SandboxSupport | None = None
_support_lock = threading.Lock()


def sandbox_support() -> SandboxSupport:
    """Detect (once per process, by running a probe) and return the isolation in use."""
    global _support
    with _support_lock:
        if _support is None:
            _support = _detect_support()
            if not _support.filesystem_readonly:
                logger.warning(
                    "gym_llm sandbox mode %r: the file system is not protected (%s)",
                    _support.mode,
                    "; ".join(_support.notes),
                )
        return _support


def _detect_support() -> SandboxSupport:
    forced = os.environ.get(MODE_ENV)
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
    return SandboxSupport(
        mode="none",
        network_isolated=_seccomp_arch() is not None,
        filesystem_readonly=False,
        separate_uid=False,
        pid_namespace=False,
        seccomp_network=_seccomp_arch() is not None,
        notes=tuple(notes),
    )


def _probe(mode: str) -> str | None:
    """Run ``python -c pass`` fully sandboxed in ``mode``; ``None`` if it worked, else why not."""
    work = tempfile.mkdtemp(prefix="gym_llm_probe_")
    read_fd, write_fd = os.pipe()
    try:
        config = _launch_config(
            mode, [sys.executable, "-I", "-S", "-c", "pass"], work, Limits(), None, write_fd, _UID_BASE - 1
        )
        argv = _launch_argv(mode, config)
        try:
            done = subprocess.run(argv, pass_fds=(write_fd,), capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
        os.close(write_fd)
        write_fd = -1
        status = _read_status(read_fd)
        if done.returncode != 0 or status.get("exit") != 0:
            err = (done.stderr.decode(errors="replace") + status.get("error", "")).strip()
            return err[-300:] or f"exit status {done.returncode}"
        return None
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
        shutil.rmtree(work, ignore_errors=True)


def _seccomp_arch() -> tuple[int, int] | None:
    """``(AUDIT_ARCH, __NR_socket)`` for the architectures the seccomp fallback knows."""
    machine = os.uname().machine
    if machine == "x86_64":
        return 0xC000003E, 41
    if machine in ("aarch64", "arm64"):
        return 0xC00000B7, 198
    return None


# ---------------------------------------------------------------------------------------------- uids
_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()
_uid_next = 0


def _take_uid() -> int:
    """A uid no other run of this process is using (slots wrap beyond 256 concurrent runs)."""
    global _uid_next
    base = _UID_BASE + (os.getpid() % (1 << 22)) * _UID_SLOTS
    with _uid_lock:
        for _ in range(_UID_SLOTS):
            uid = base + _uid_next
            _uid_next = (_uid_next + 1) % _UID_SLOTS
            if uid not in _uids_in_use:
                _uids_in_use.add(uid)
                return uid
        return base + _uid_next  # all taken: share one (its runs then share RLIMIT_NPROC)


def _release_uid(uid: int | None) -> None:
    if uid is not None:
        with _uid_lock:
            _uids_in_use.discard(uid)


# ---------------------------------------------------------------------------------------------- launching
_launcher_source: str | None = None


def _launcher_code() -> str:
    global _launcher_source
    if _launcher_source is None:
        _launcher_source = inspect.getsource(_launcher_main) + "\n_launcher_main()\n"
    return _launcher_source


def _interpreter_paths() -> list[str]:
    """Directories the sandboxed interpreter must be able to read."""
    paths = {sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(os.path.realpath(p) for p in paths)


def _default_env(work: str) -> dict[str, str]:
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


def _launch_config(
    mode: str,
    argv: Sequence[str],
    work: str,
    limits: Limits,
    env: dict[str, str] | None,
    status_fd: int,
    uid: int | None,
) -> dict[str, Any]:
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
    seccomp = _seccomp_arch() if mode == "none" else None
    return {
        "argv": list(argv),
        "env": {**_default_env(work), **(env or {})},
        "work": work,
        "rlimits": rlimits,
        "status_fd": status_fd,
        "uid": uid if mode == "root" else None,
        "isolate_fs": mode != "none",
        "drop_caps": mode == "userns",
        "reveal": _interpreter_paths() if mode == "root" else [],
        "seccomp": list(seccomp) if seccomp else None,
    }


def _launch_argv(mode: str, config: dict[str, Any]) -> list[str]:
    # marshal, not json: the launcher starts faster without importing json (and re).
    launcher = [sys.executable, "-I", "-S", "-c", _launcher_code(), marshal.dumps(config).hex()]
    if mode == "none":
        return launcher
    namespaces = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if mode == "userns":
        namespaces = ["--user", "--map-root-user", *namespaces]
    return ["unshare", *namespaces, "--", *launcher]


def _read_status(read_fd: int) -> dict[str, Any]:
    """The launcher's status report (empty if it was killed before writing one)."""
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


@dataclass
class _Launch:
    """A prepared launch: the wrapper argv, the status pipe and the run's uid."""

    argv: list[str]
    read_fd: int
    write_fd: int
    uid: int | None

    def close_write(self) -> None:
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def finish(self) -> dict[str, Any]:
        """Read the launcher's report (after the exit), close the pipe, free the uid; idempotent."""
        self.close_write()
        if self.read_fd < 0:
            return {}
        status = _read_status(self.read_fd)
        os.close(self.read_fd)
        self.read_fd = -1
        _release_uid(self.uid)
        return status


def _prepare(argv: Sequence[str], cwd: str | Path, limits: Limits, env: dict[str, str] | None) -> _Launch:
    support = sandbox_support()
    work = os.path.realpath(cwd)
    if not os.path.isdir(work):
        raise FileNotFoundError(f"sandbox work directory not found: {work}")
    if not argv:
        raise ValueError("argv is empty")
    uid = _take_uid() if support.mode == "root" else None
    read_fd, write_fd = os.pipe()
    config = _launch_config(support.mode, argv, work, limits, env, write_fd, uid)
    return _Launch(_launch_argv(support.mode, config), read_fd, write_fd, uid)


_HOST_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


class SandboxedPopen:
    """A long-lived sandboxed process with stdin/stdout/stderr pipes (from :func:`open_sandboxed`).

    Synchronous on purpose: it belongs to no event loop, so an env may start it in one loop and
    use it from another (the sync facade does that). Read its pipes from a worker thread.
    """

    def __init__(self, popen: subprocess.Popen[bytes], launch: _Launch) -> None:
        self.popen = popen
        self._launch = launch
        self._status: dict[str, Any] | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def uid(self) -> int | None:
        """The uid the program runs as (``None`` unless the mode is ``"root"``)."""
        return self._launch.uid

    def kill(self) -> None:
        """SIGKILL the process group (in namespace modes the kernel then kills the rest)."""
        _kill_group(self.popen.pid)

    def close(self) -> dict[str, Any]:
        """Kill the tree, reap it and close the pipes; returns the launcher's report. Idempotent."""
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
    limits: Limits = Limits(),
    env: dict[str, str] | None = None,
) -> SandboxedPopen:
    """Start a long-lived sandboxed process with pipes for stdin, stdout and stderr.

    All of ``limits`` apply except ``wall_seconds`` and ``max_output_bytes``, which the caller
    enforces (see :func:`run_sandboxed` for one-shot runs). Always ``close()`` the result. The
    first call in a process detects the sandbox support (about 0.1 s): call it off the event loop.
    """
    launch = _prepare(argv, cwd, limits, env)
    try:
        popen = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(launch.write_fd,),
            start_new_session=True,
            cwd=os.path.realpath(cwd),
            env=_HOST_ENV,
        )
    except BaseException:
        launch.finish()
        raise
    launch.close_write()
    return SandboxedPopen(popen, launch)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_sandboxed(
    argv: list[str],
    *,
    cwd: str | Path,
    stdin: str | bytes = "",
    limits: Limits = Limits(),
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
        The result; a limit that stopped the run is named in ``limit``. Never raises for
        anything the program does.
    """
    data = stdin.encode() if isinstance(stdin, str) else stdin
    try:
        launch = await asyncio.to_thread(_prepare, argv, cwd, limits, env)
    except (OSError, ValueError) as exc:
        return SandboxResult(None, "", f"could not start the sandbox: {exc}", False, None)
    try:
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(launch.write_fd,),
            start_new_session=True,
            cwd=os.path.realpath(cwd),
            env=_HOST_ENV,
        )
    except OSError as exc:
        launch.finish()
        return SandboxResult(None, "", f"could not start the sandbox: {exc}", False, None)
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
                _kill_group(process.pid)
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
    pending: set[asyncio.Future[Any]] = {exited}
    try:
        _done, pending = await asyncio.wait([*tasks, exited], timeout=limits.wall_seconds)
        timed_out = not exited.done()
    finally:
        # Also on cancellation: never leave the tree running.
        if pending:
            _kill_group(process.pid)
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
    cpu = float(status.get("cpu", 0.0))
    limit = _limit_hit(returncode, stderr, cpu, limits, timed_out=timed_out, over_cap=over_cap)
    return SandboxResult(returncode, stdout, stderr, timed_out, limit, cpu)


def _limit_hit(
    returncode: int | None, stderr: str, cpu: float, limits: Limits, *, timed_out: bool, over_cap: bool
) -> str | None:
    """Which limit stopped the run, from the exit signal, CPU time and the error text."""
    if over_cap:
        return _LIMIT_OUTPUT
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL) and cpu >= math.ceil(limits.cpu_seconds) - 0.05:
        return _LIMIT_CPU
    if timed_out:
        return _LIMIT_WALL
    if returncode == -signal.SIGXFSZ:
        return _LIMIT_FILE
    if returncode in (None, 0):
        return None
    tail = stderr[-4000:]
    if any(marker in tail for marker in _FILE_MARKERS):
        return _LIMIT_FILE
    if any(marker in tail for marker in _MEMORY_MARKERS):
        return _LIMIT_MEMORY
    if any(marker in tail for marker in _PROCESS_MARKERS):
        return _LIMIT_PROCESSES
    return None


@contextlib.contextmanager
def workdir(prefix: str = "gym_llm_") -> Iterator[Path]:
    """A fresh temporary work directory, removed (with whatever the run left in it) on exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- launcher
def _launcher_main() -> None:  # pragma: no cover (runs in the sandbox, via ``python -I -S -c``)
    """Set up isolation, start the program as a child and report how it ended.

    Self-contained (its source is sent with ``-c``): it runs as PID 1 of the new PID namespace
    (except in ``"none"`` mode), as root of the new mount namespace.
    """
    import ctypes
    import marshal
    import os
    import resource
    import signal
    import struct
    import sys

    config = marshal.loads(bytes.fromhex(sys.argv[1]))
    status_fd = config["status_fd"]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def check(result: int, what: str) -> int:
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")
        return result

    def open_tree(path: str) -> int:  # a detached, recursive copy of the mount tree at path
        flags = 1 | 0o2000000 | 0x8000  # OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
        return check(libc.syscall(428, -100, path.encode(), flags), f"open_tree {path}")

    def move_mount(fd: int, target: str) -> None:  # MOVE_MOUNT_F_EMPTY_PATH
        check(libc.syscall(429, fd, b"", -100, target.encode(), 4), f"move_mount {target}")

    def set_readonly(fd: int, path: str, readonly: bool, recursive: bool) -> None:
        flags = (0x8000 if recursive else 0) | (0x1000 if fd >= 0 else 0)  # AT_RECURSIVE, AT_EMPTY_PATH
        attr_set, attr_clr = (0x1 | 0x2, 0) if readonly else (0, 0x1)  # MOUNT_ATTR_RDONLY | NOSUID
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", attr_set, attr_clr, 0, 0))
        where = path.encode() if fd < 0 else b""
        check(libc.syscall(442, fd if fd >= 0 else -100, where, flags, attr, 32), f"mount_setattr {path}")

    def isolate_filesystem(work: str, reveal: list[str], uid: int | None) -> None:
        work_tree = open_tree(work)
        if uid is not None:
            # Interpreter paths below a directory others cannot search (e.g. /root, mode 700):
            # hide that directory under a tmpfs and mount just those paths back into it.
            hidden: dict[str, list[str]] = {}
            for path in reveal:
                parts = path.strip("/").split("/")
                for depth in range(1, len(parts)):
                    ancestor = "/" + "/".join(parts[:depth])
                    if not os.stat(ancestor).st_mode & 0o001:
                        hidden.setdefault(ancestor, []).append(path)
                        break
            for ancestor, paths in hidden.items():
                trees = [(path, open_tree(path)) for path in paths]
                check(libc.mount(b"tmpfs", ancestor.encode(), b"tmpfs", 2 | 4, b"mode=755,size=1m"), "tmpfs")
                for path, tree in trees:
                    os.makedirs(path, mode=0o755, exist_ok=True)
                    move_mount(tree, path)
                    os.close(tree)
            os.makedirs(work, mode=0o755, exist_ok=True)  # in case it was under a hidden directory
        set_readonly(-1, "/", readonly=True, recursive=True)
        set_readonly(work_tree, work, readonly=False, recursive=False)
        move_mount(work_tree, work)
        os.close(work_tree)

    def drop_capabilities() -> None:
        for cap in range(64):
            if libc.prctl(24, cap, 0, 0, 0) < 0:  # PR_CAPBSET_DROP until EINVAL
                break
        header = ctypes.create_string_buffer(struct.pack("Ii", 0x20080522, 0))
        data = ctypes.create_string_buffer(struct.pack("IIIIII", 0, 0, 0, 0, 0, 0))
        check(libc.capset(header, data), "capset")

    def deny_network(arch: int, nr_socket: int) -> None:
        # seccomp: socket() for any family but AF_UNIX, and io_uring_setup, fail with EACCES.
        deny, allow = 0x00050000 | 13, 0x7FFF0000
        program = [
            (0x20, 0, 0, 4),  # A = arch
            (0x15, 1, 0, arch),  # native ABI: go on
            (0x06, 0, 0, deny),
            (0x20, 0, 0, 0),  # A = syscall number
            (0x15, 0, 3, nr_socket),
            (0x20, 0, 0, 16),  # A = args[0] (the address family)
            (0x15, 3, 0, 1),  # AF_UNIX: allow
            (0x06, 0, 0, deny),
            (0x15, 0, 1, 425),  # io_uring_setup
            (0x06, 0, 0, deny),
            (0x06, 0, 0, allow),
        ]
        raw = b"".join(struct.pack("HBBI", *insn) for insn in program)
        filters = ctypes.create_string_buffer(raw)
        prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(program), ctypes.addressof(filters)))
        check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")
        check(libc.prctl(22, 2, prog, 0, 0), "seccomp")  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER

    def report(status: dict) -> None:
        os.write(status_fd, marshal.dumps(status))
        os.close(status_fd)

    work, uid = config["work"], config["uid"]
    try:
        if config["isolate_fs"]:
            isolate_filesystem(work, config["reveal"], uid)
        if uid is not None:
            for root, dirs, files in os.walk(work):
                for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                    os.lchown(name, uid, uid)
    except OSError as exc:
        report({"exit": 126, "error": f"sandbox setup failed: {exc}\n"})
        sys.exit(126)

    pid = os.fork()
    if pid == 0:
        try:
            os.close(status_fd)
            os.chdir(work)
            for name, (soft, hard) in config["rlimits"].items():
                resource.setrlimit(getattr(resource, name), (soft, hard))
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            if config["drop_caps"]:
                drop_capabilities()
            check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")
            check(libc.prctl(1, signal.SIGKILL, 0, 0, 0), "pdeathsig")  # setuid cleared it
            if config["seccomp"]:
                deny_network(*config["seccomp"])
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            os.execvpe(config["argv"][0], config["argv"], config["env"])
        except BaseException as exc:
            os.write(2, f"sandbox: cannot start {config['argv'][0]!r}: {exc}\n".encode())
            os._exit(127)
    # PID 1 of the namespace: reap orphans until the program itself has exited.
    while True:
        try:
            waited, wait_status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if waited == pid:
            break
    code = os.waitstatus_to_exitcode(wait_status)
    report({"exit": code, "cpu": usage.ru_utime + usage.ru_stime})
    sys.exit(0 if code == 0 else 1)
