"""The launcher: the first program of every sandboxed run, set up as the sandbox and reporting the exit.

:func:`launcher_main` is sent as source with ``python -I -S -c`` (the sandbox may be unable to read
this package), so it imports nothing from it. It receives its configuration (built by
:mod:`gym_llm.sandbox.launch`) as marshalled hex in ``argv[1]`` and writes one marshalled status
dict to ``status_fd`` when the program has exited: ``{"exit": code, "cpu": seconds}``, plus
``"error"`` when the sandbox could not be set up or the program could not be started.
"""

from __future__ import annotations

import inspect
from functools import cache


@cache
def launcher_source() -> str:
    """The launcher's source, ready for ``python -c``."""
    return inspect.getsource(launcher_main) + "\nlauncher_main()\n"


def launcher_main() -> None:  # pragma: no cover (runs in the sandbox, via ``python -I -S -c``)
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
        # seccomp: socket() for any family but AF_UNIX, and io_uring_setup, fail with EACCES. So
        # does every x32 call (numbers with bit 30 set): they pass the x86-64 arch check, and x32's
        # socket() is 41 | 0x40000000.
        deny, allow = 0x00050000 | 13, 0x7FFF0000
        program = [
            (0x20, 0, 0, 4),  # A = arch
            (0x15, 1, 0, arch),  # native ABI: go on
            (0x06, 0, 0, deny),
            (0x20, 0, 0, 0),  # A = syscall number
            (0x35, 3, 0, 0x40000000),  # x32 ABI (A >= 0x40000000): deny
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

    # The child reports why it could not exec on this pipe; a successful exec closes it (CLOEXEC).
    failure_r, failure_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(status_fd)
            os.close(failure_r)
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
            os.write(failure_w, f"sandbox: cannot start {config['argv'][0]!r}: {exc}\n".encode())
            os._exit(127)
    os.close(failure_w)
    failure = b""
    while chunk := os.read(failure_r, 4096):  # returns at the exec or the child's exit
        failure += chunk
    os.close(failure_r)
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
    status: dict = {"exit": code, "cpu": usage.ru_utime + usage.ru_stime}
    if failure:
        status["error"] = failure.decode(errors="replace")
    report(status)
    sys.exit(0 if code == 0 else 1)
