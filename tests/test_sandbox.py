"""The sandbox stops or refuses every escape it claims to, and leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gym_llm import sandbox
from gym_llm.sandbox import Limits, open_sandboxed, run_sandboxed, sandbox_support, workdir
from gym_llm.sandbox.launch import seccomp_arch
from gym_llm.sandbox.uids import uid_block

# The wall limit leaves a busy machine time to spend the CPU second (runs that hit it are killed at once).
SMALL = Limits(
    cpu_seconds=1, wall_seconds=10, memory_mb=128, max_processes=16, max_file_mb=1, max_output_bytes=10_000
)
ISOLATED = sandbox_support().mode != "none"
needs_isolation = pytest.mark.skipif(not ISOLATED, reason="no namespaces on this machine")
needs_root_mode = pytest.mark.skipif(sandbox_support().mode != "root", reason="needs the root mode")


def python(code: str, cwd: Path, limits: Limits = SMALL, stdin: str = "") -> sandbox.SandboxResult:
    return asyncio.run(run_sandboxed([sys.executable, "-c", code], cwd=cwd, stdin=stdin, limits=limits))


def no_sandbox_processes_left(before: set[int], within: float = 5.0) -> bool:
    """True once no process of ours but those in ``before`` is left (other tests may keep sandboxed
    processes, such as MathWithCode's warm sessions); the kernel may take a moment to tear a
    namespace down."""
    deadline = time.monotonic() + within
    while sandbox_processes() - before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def sandbox_processes() -> set[int]:
    """Pids running as one of this process's per-run uids."""
    ours = uid_block()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        if uid in ours:
            found.add(int(entry.name))
    return found


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_runs_code_with_stdin_and_captures_output(work: Path) -> None:
    result = python("import sys; data = sys.stdin.read(); print(data.upper()); sys.exit(3)", work, stdin="hi")
    assert (result.returncode, result.stdout, result.timed_out, result.limit) == (3, "HI\n", False, None)
    assert not result.ok
    ok = python("open('out.txt', 'w').write('x'); print('done')", work)
    assert ok.ok and ok.stdout == "done\n"
    assert (work / "out.txt").read_text() == "x"


def test_missing_program_is_reported(work: Path) -> None:
    result = asyncio.run(run_sandboxed(["no-such-program-xyz"], cwd=work, limits=SMALL))
    assert result.returncode == 127 and "no-such-program-xyz" in result.stderr


def test_infinite_loop_hits_the_cpu_limit(work: Path) -> None:
    result = python("while True: pass", work)
    assert result.limit == "cpu_seconds" and not result.ok
    assert result.returncode in (-9, -24)


def test_sleeping_forever_hits_the_wall_limit(work: Path) -> None:
    result = python("import time; time.sleep(60)", work, Limits(wall_seconds=0.5))
    assert result.timed_out and result.limit == "wall_seconds" and result.returncode == -9


def test_memory_bomb_is_stopped(work: Path) -> None:
    result = python("blocks = []\nwhile True: blocks.append(bytearray(10**7))", work)
    assert result.limit == "memory_mb" and "MemoryError" in result.stderr


@needs_isolation
def test_fork_bomb_is_stopped_and_the_host_is_unaffected(work: Path) -> None:
    bomb = "import os\nwhile True: os.fork()"

    async def scenario() -> tuple[sandbox.SandboxResult, sandbox.SandboxResult, int]:
        bomb_run = asyncio.ensure_future(run_sandboxed([sys.executable, "-c", bomb], cwd=work, limits=SMALL))
        await asyncio.sleep(0.3)  # the bomb is going off now
        other = await run_sandboxed([sys.executable, "-c", "print('fine')"], cwd=work, limits=SMALL)
        host = await asyncio.create_subprocess_exec("true")
        return await bomb_run, other, await host.wait()

    before = sandbox_processes()
    bomb_result, other, host_status = asyncio.run(scenario())
    assert bomb_result.limit in ("max_processes", "wall_seconds", "cpu_seconds")
    assert other.ok and other.stdout == "fine\n"
    assert host_status == 0
    assert no_sandbox_processes_left(before)


def test_one_gigabyte_write_is_stopped(work: Path) -> None:
    code = "with open('big', 'wb') as f:\n    for _ in range(1024): f.write(bytes(2**20))"
    result = python(code, work)
    assert result.limit == "max_file_mb" and "File too large" in result.stderr
    assert (work / "big").stat().st_size <= 2**20


def test_output_flood_is_capped(work: Path) -> None:
    result = python("while True: print('x' * 1000)", work)
    assert result.limit == "max_output_bytes" and len(result.stdout) == SMALL.max_output_bytes


@needs_isolation
def test_writing_outside_the_work_dir_is_refused(work: Path, tmp_path: Path) -> None:
    targets = [tmp_path / "escape.txt", Path("/tmp") / f"gym_llm_escape_{os.getpid()}", Path.home() / "x"]
    code = textwrap.dedent(
        f"""
        import os
        refused = 0
        for path in {[str(t) for t in targets]!r}:
            try:
                open(path, 'w').write('escaped')
            except OSError:
                refused += 1
        print(refused)
        """
    )
    result = python(code, work)
    assert result.stdout.strip() == str(len(targets))
    assert not any(target.exists() for target in targets)


@needs_root_mode
def test_root_only_files_are_unreadable(tmp_path: Path, work: Path) -> None:
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "key").write_text("hunter2")
    result = python(f"print(open({str(secret_dir / 'key')!r}).read())", work)
    assert "hunter2" not in result.stdout and "Permission denied" in result.stderr


@needs_isolation
def test_no_network_even_to_localhost(work: Path) -> None:
    async def scenario() -> tuple[sandbox.SandboxResult, int]:
        connections = 0

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            writer.close()

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        code = (
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')"
        )
        result = await run_sandboxed([sys.executable, "-c", code], cwd=work, limits=SMALL)
        server.close()
        await server.wait_closed()
        return result, connections

    result, connections = asyncio.run(scenario())
    assert "connected" not in result.stdout and result.returncode == 1
    assert "unreachable" in result.stderr or "refused" in result.stderr
    assert connections == 0


@pytest.mark.skipif(seccomp_arch() is None, reason="no seccomp fallback on this architecture")
def test_fallback_mode_refuses_sockets_with_seccomp(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys, tempfile
        from gym_llm.sandbox import run_sandboxed, sandbox_support
        assert sandbox_support().mode == "none"
        code = "import socket\\ntry:\\n    socket.socket()\\nexcept OSError as e:\\n    print(e.errno)\\n" \\
               "socket.socketpair(); print('unix ok')"
        print(asyncio.run(run_sandboxed([sys.executable, "-c", code], cwd=tempfile.gettempdir())).stdout)
        """
    )
    env = {**os.environ, sandbox.MODE_ENV: "none"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["13", "unix", "ok"]  # EACCES for AF_INET, AF_UNIX still works


@pytest.mark.skipif(
    seccomp_arch() is None or os.uname().machine != "x86_64", reason="the x32 ABI exists on x86-64 only"
)
def test_fallback_mode_refuses_x32_socket_calls(tmp_path: Path) -> None:
    # x32 calls (number | 0x40000000) pass the x86-64 arch check: socket() that way must be refused
    # too, with EACCES, not merely fail where the kernel lacks x32 (ENOSYS).
    script = textwrap.dedent(
        """
        import asyncio, sys, tempfile
        from gym_llm.sandbox import run_sandboxed, sandbox_support
        assert sandbox_support().mode == "none"
        code = (
            "import ctypes\\n"
            "libc = ctypes.CDLL(None, use_errno=True)\\n"
            "libc.syscall.restype = ctypes.c_long\\n"
            "print(libc.syscall(ctypes.c_long(41 | 0x40000000), 2, 1, 0), ctypes.get_errno())"
        )
        print(asyncio.run(run_sandboxed([sys.executable, "-c", code], cwd=tempfile.gettempdir())).stdout)
        """
    )
    env = {**os.environ, sandbox.MODE_ENV: "none"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["-1", "13"]  # refused with EACCES


@needs_isolation
def test_no_process_survives_the_run(work: Path) -> None:
    # A daemon that leaves the process group and outlives its parent is killed with the run.
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')"
    before = sandbox_processes()
    result = python(code, work)
    assert result.ok and result.stdout == "parent done\n"
    assert no_sandbox_processes_left(before)


def test_concurrent_runs_do_not_disturb_each_other(work: Path) -> None:
    async def scenario() -> list[sandbox.SandboxResult]:
        spin = run_sandboxed([sys.executable, "-c", "while True: pass"], cwd=work, limits=SMALL)
        quick = [
            run_sandboxed([sys.executable, "-c", f"print({i})"], cwd=work, limits=SMALL) for i in range(4)
        ]
        return await asyncio.gather(spin, *quick)

    spin, *quick = asyncio.run(scenario())
    assert spin.limit == "cpu_seconds"
    assert [r.stdout for r in quick] == [f"{i}\n" for i in range(4)] and all(r.ok for r in quick)


def test_long_lived_process_is_killed_on_close(work: Path) -> None:
    before = sandbox_processes()
    with open_sandboxed(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"], cwd=work
    ) as proc:
        assert proc.popen.stdout is not None and proc.popen.stdout.readline() == b"up\n"
    assert proc.popen.returncode is not None
    assert no_sandbox_processes_left(before)


def test_workdir_is_removed() -> None:
    with workdir(prefix="gym_llm_test_") as path:
        asyncio.run(
            run_sandboxed([sys.executable, "-c", "open('f', 'w').write('x')"], cwd=path, limits=SMALL)
        )
        assert (path / "f").exists()
    assert not path.exists()


def test_a_program_that_cannot_be_started_is_a_sandbox_error(work: Path) -> None:
    result = asyncio.run(run_sandboxed(["no-such-program-xyz"], cwd=work, limits=SMALL))
    assert result.sandbox_error is not None and "no-such-program-xyz" in result.sandbox_error
    assert result.limit is None and not result.ok
    # The program's own exit status 127 (bash: command not found) is the program's failure.
    own = asyncio.run(run_sandboxed(["bash", "-c", "no-such-program-xyz"], cwd=work, limits=SMALL))
    assert own.returncode == 127 and own.sandbox_error is None
    assert "not found" in own.stderr


def test_a_missing_work_directory_is_a_sandbox_error(tmp_path: Path) -> None:
    result = asyncio.run(run_sandboxed([sys.executable, "-c", "pass"], cwd=tmp_path / "gone", limits=SMALL))
    assert result.returncode is None and "work directory not found" in (result.sandbox_error or "")


def test_a_long_lived_process_that_cannot_start_reports_why(work: Path) -> None:
    proc = open_sandboxed(["no-such-program-xyz"], cwd=work, limits=SMALL)
    assert proc.popen.wait(timeout=10) is not None
    status = proc.close()
    assert status["exit"] == 127 and "no-such-program-xyz" in status["error"]


def test_limits_and_modes_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"Limits.cpu_seconds must be > 0, got -1"):
        Limits(cpu_seconds=-1)
    with pytest.raises(ValueError, match="max_output_bytes must be >= 0"):
        Limits(max_output_bytes=-5)
    from gym_llm.sandbox import support

    monkeypatch.setenv(sandbox.MODE_ENV, "chroot")
    with pytest.raises(ValueError, match=r"GYM_LLM_SANDBOX_MODE='chroot' is not one of root, userns, none"):
        support._detect()


def test_unshare_failing_after_detection_is_a_sandbox_error(broken_unshare) -> None:
    done = broken_unshare(
        """
        import asyncio, sys, tempfile
        from gym_llm.sandbox import run_sandboxed
        with tempfile.TemporaryDirectory() as work:
            result = asyncio.run(run_sandboxed([sys.executable, "-c", "print(1)"], cwd=work))
        print(repr(result.stdout), result.limit, result.sandbox_error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("'' None the sandbox launcher exited with status 1 without a report")
    assert "No space left on device" in done.stdout
