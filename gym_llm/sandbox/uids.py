"""Per-run uids for the ``"root"`` mode: a block of 256 per host process, far above any real account.

A run's own uid keeps it from signalling other runs and makes ``RLIMIT_NPROC`` count its
processes only.
"""

from __future__ import annotations

import os
import threading

UID_BASE = 100_000
UID_SLOTS = 256
PROBE_UID = UID_BASE - 1  # used once per process, by the support probe

_lock = threading.Lock()
_in_use: set[int] = set()
_next = 0


def uid_block(pid: int | None = None) -> range:
    """The uids the runs of process ``pid`` (default: this one) are given."""
    base = UID_BASE + ((os.getpid() if pid is None else pid) % (1 << 22)) * UID_SLOTS
    return range(base, base + UID_SLOTS)


def take_uid() -> int:
    """A uid no other run of this process is using (slots wrap beyond 256 concurrent runs)."""
    global _next
    block = uid_block()
    with _lock:
        for _ in range(UID_SLOTS):
            uid = block[_next]
            _next = (_next + 1) % UID_SLOTS
            if uid not in _in_use:
                _in_use.add(uid)
                return uid
        return block[_next]  # all taken: share one (its runs then share RLIMIT_NPROC)


def release_uid(uid: int | None) -> None:
    """Give back a uid from :func:`take_uid` (``None`` is ignored)."""
    if uid is not None:
        with _lock:
            _in_use.discard(uid)
