"""What one collection run plays: :class:`CollectPlan`, handed whole to local workers and Ray workers.

A (task, repeat) pair travels as one int, its *code* ``task_index * num_repeats + repeat_index``;
pairs are generated lazily from the code range, and :class:`PairSet` marks codes in one bit each.

Each record carries the run's fingerprint, so a resumed run can tell whose rows a file holds:
``task_digest`` (a digest of the task row the rollout played) and ``run_digest`` (a digest of the
env id, the env arguments, the policy's model and sampling settings and the sampling overrides).
Addresses and keys are left out of ``run_digest``: the same model on another server is the same run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import orjson

from gym_llm.policies.base import Policy

# settings that say where or how to reach a server, not what it samples
_DIGEST_CACHE_SIZE = 4096
_ADDRESS_KEYS = frozenset({"api_key", "base_url", "timeout", "max_retries", "backoff", "max_connections"})


@dataclass
class CollectPlan:
    """Everything a worker needs to play its share of a run.

    Attributes:
        env_id: A registered env id.
        env_kwargs: Keyword arguments for ``gymnasium.make``; ``tasks`` holds the validated rows.
        num_tasks: Tasks played: the first ``num_tasks`` rows (``limit`` applied).
        num_repeats: Rollouts per task.
        concurrency: Episodes in flight at once, over all workers.
        overrides: Sampling fields that override the rows'.
        policy: The policy (bound to each worker env with ``policy.bind(env)``).
        run_digest: The run's fingerprint (see the module docstring); set by :meth:`create`.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    num_tasks: int
    num_repeats: int
    concurrency: int
    policy: Policy
    overrides: dict[str, Any] = field(default_factory=dict)
    run_digest: str = ""

    @classmethod
    def create(
        cls,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        *,
        num_tasks: int,
        num_repeats: int,
        concurrency: int,
        policy: Policy,
        overrides: Mapping[str, Any] | None = None,
    ) -> CollectPlan:
        """A plan with its ``run_digest`` computed.

        Returns:
            The plan.
        """
        plan = cls(
            env_id, dict(env_kwargs), num_tasks, num_repeats, concurrency, policy, dict(overrides or {})
        )
        plan.run_digest = digest(
            {
                "env_id": env_id,
                "env_kwargs": _without_addresses({k: v for k, v in env_kwargs.items() if k != "tasks"}),
                "policy": _without_addresses(policy.describe()),
                "overrides": plan.overrides,
            }
        )
        return plan

    @property
    def tasks(self) -> Any:
        """The validated task rows (all of them, ``num_tasks`` or more)."""
        return self.env_kwargs["tasks"]

    @property
    def num_pairs(self) -> int:
        """(task, repeat) pairs in the run."""
        return self.num_tasks * self.num_repeats

    def make_env(self) -> Any:
        """A fresh env for this run (unwrapped: the engine drives ``areset``/``astep`` itself)."""
        return gymnasium.make(self.env_id, disable_env_checker=True, **self.env_kwargs).unwrapped

    def pair(self, code: int) -> tuple[int, int]:
        """The (task_index, repeat_index) of a pair code."""
        return divmod(code, self.num_repeats)

    def code(self, task_index: int, repeat_index: int) -> int | None:
        """The code of a pair, or None when the pair lies outside this run."""
        if 0 <= task_index < self.num_tasks and 0 <= repeat_index < self.num_repeats:
            return task_index * self.num_repeats + repeat_index
        return None

    def task_digest(self, task_index: int) -> str:
        """The digest of task row ``task_index``."""
        cache = self.__dict__.setdefault("_digests", {})
        found = cache.get(task_index)
        if found is None:
            if len(cache) >= _DIGEST_CACHE_SIZE:  # bounded: a task's repeats come together anyway
                cache.clear()
            found = cache[task_index] = digest(self.tasks[task_index])
        return found

    def stamp(self, record: dict[str, Any]) -> dict[str, Any]:
        """Add the run's fingerprint to a record of this run.

        Returns:
            ``record``, with ``task_digest`` and ``run_digest`` set.
        """
        record["task_digest"] = self.task_digest(record["task_index"])
        record["run_digest"] = self.run_digest
        return record

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "_digests"}


class PairSet:
    """A set of pair codes in ``range(size)``, one bit each (1,000,000 pairs: 125 kB)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._bits = bytearray((size + 7) // 8)
        self._count = 0

    def add(self, code: int) -> bool:
        """Mark ``code``.

        Returns:
            True if it was not marked before.
        """
        byte, bit = code >> 3, 1 << (code & 7)
        if self._bits[byte] & bit:
            return False
        self._bits[byte] |= bit
        self._count += 1
        return True

    def __contains__(self, code: int) -> bool:
        return bool(self._bits[code >> 3] & (1 << (code & 7)))

    def __len__(self) -> int:
        return self._count

    def missing(self) -> Iterator[int]:
        """The codes not marked, in order, generated lazily."""
        bits = self._bits
        for byte_index in range(len(bits)):
            byte = bits[byte_index]
            if byte == 0xFF:
                continue
            base = byte_index << 3
            for bit in range(8):
                code = base + bit
                if code >= self.size:
                    return
                if not byte & (1 << bit):
                    yield code


def digest(value: Any) -> str:
    """A short stable digest of JSON-like data (keys sorted; objects JSON cannot hold by type name).

    Example:
        >>> digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})
        True
    """
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=_stable_name)
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _stable_name(value: Any) -> str:
    """A name for what JSON cannot hold that is the same in every process (no memory addresses)."""
    if callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
    return type(value).__qualname__


def _without_addresses(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_addresses(v) for k, v in value.items() if k not in _ADDRESS_KEYS}
    if isinstance(value, (list, tuple)):
        return [_without_addresses(v) for v in value]
    return value
