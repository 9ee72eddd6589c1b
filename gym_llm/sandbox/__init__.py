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
    ``socket()`` for every family but ``AF_UNIX``, ``io_uring_setup`` and every x32-ABI call
    (x86-64 and aarch64). The file system is *not*
    protected in this mode: a warning is logged once.

In all modes: ``RLIMIT_CPU`` (whole seconds, rounded up; ``SIGXCPU`` then ``SIGKILL`` a second
later), ``RLIMIT_AS`` (memory), ``RLIMIT_NPROC``, ``RLIMIT_FSIZE`` (per file; the total size of
the work directory is not limited), ``RLIMIT_CORE=0``, a wall-clock limit (the whole process tree
is killed) and an output cap (the run is killed once stdout or stderr exceeds it). A run the sandbox
could not start (an infrastructure failure, not the program's own) says why in
``SandboxResult.sandbox_error``.

Modules: :mod:`~gym_llm.sandbox.limits` (limits and results), :mod:`~gym_llm.sandbox.support`
(detection), :mod:`~gym_llm.sandbox.uids` (per-run uids), :mod:`~gym_llm.sandbox.launch` and
:mod:`~gym_llm.sandbox.launcher` (the launcher, its command line and the program inside the
sandbox), :mod:`~gym_llm.sandbox.spawn` (one prepared launch), :mod:`~gym_llm.sandbox.run`
(one-shot runs) and :mod:`~gym_llm.sandbox.popen` (long-lived processes).

Example:
    >>> import asyncio, tempfile
    >>> from gym_llm.sandbox import Limits, run_sandboxed
    >>> with tempfile.TemporaryDirectory() as work:  # doctest: +SKIP
    ...     result = asyncio.run(run_sandboxed(["python3", "-c", "print(6 * 7)"], cwd=work))
    >>> result.stdout, result.ok  # doctest: +SKIP
    ('42\\n', True)
"""

from gym_llm.sandbox.limits import Limits, SandboxResult
from gym_llm.sandbox.popen import SandboxedPopen, open_sandboxed
from gym_llm.sandbox.run import run_sandboxed, workdir
from gym_llm.sandbox.support import MODE_ENV, SandboxSupport, sandbox_support

__all__ = [
    "MODE_ENV",
    "Limits",
    "SandboxResult",
    "SandboxSupport",
    "SandboxedPopen",
    "open_sandboxed",
    "run_sandboxed",
    "sandbox_support",
    "workdir",
]
