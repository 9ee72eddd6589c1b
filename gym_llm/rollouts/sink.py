"""Where finished rollouts go in the process that owns the output file.

Records (local workers) or batches of encoded lines (Ray workers) are appended to the file,
counted in the run's metrics and shown in the progress. Until the model server has answered one
rollout, rollouts that failed to reach it are held back: if the first ``fail_fast`` rollouts all
fail that way, the run stops with a clear error before a single masked row is written.
"""

from __future__ import annotations

from typing import Any

from gym_llm import fastjson
from gym_llm.failures import MODEL_ERROR
from gym_llm.rollouts.errors import CollectError
from gym_llm.rollouts.metrics import MetricsAccumulator
from gym_llm.rollouts.output import RolloutWriter
from gym_llm.rollouts.progress import Progress


class RolloutSink:
    """Write, count and show finished rollouts; stop a run whose model server answers none.

    Args:
        writer: The output file.
        metrics: The run's accumulator (it may already hold the resumed rows).
        progress: The run's progress display.
        fail_fast: Stop when this many rollouts failed to reach the model before one reached it
            (0: never stop).
    """

    def __init__(
        self, writer: RolloutWriter, metrics: MetricsAccumulator, progress: Progress, fail_fast: int
    ) -> None:
        self.writer = writer
        self.metrics = metrics
        self.progress = progress
        self.fail_fast = fail_fast
        self.written = 0
        self.answered = fail_fast <= 0  # the model server answered at least once
        self._held: list[bytes] = []
        self._held_count = 0
        self._held_metrics = MetricsAccumulator()

    def add_record(self, record: dict[str, Any]) -> None:
        """One finished rollout record (from a worker in this process)."""
        line = fastjson.dumps_line(record)
        if not self.answered:
            if record.get("failure_kind") == MODEL_ERROR:
                self._held_metrics.add(record)
                self._hold(line, 1)
                return
            self._release()
        self.writer.write_lines(line)
        self.metrics.add(record)
        self.written += 1
        self.progress.update(1)

    def add_batch(self, lines: bytes, count: int, metrics: MetricsAccumulator) -> None:
        """``count`` finished rollouts as encoded lines, with their counts (from a Ray worker)."""
        if not self.answered:
            if metrics.failure_kinds.get(MODEL_ERROR, 0) == metrics.num_rollouts:
                self._held_metrics.merge(metrics)
                self._hold(lines, count)
                return
            self._release()
        self.writer.write_lines(lines)
        self.metrics.merge(metrics)
        self.written += count
        self.progress.update(count)

    def finish(self) -> None:
        """End of the run: if no rollout reached the model, stop with the error instead of writing them.

        Raises:
            CollectError: Every rollout of the run failed to reach the model.
        """
        if self._held_count:
            raise self._unreachable()

    def _hold(self, lines: bytes, count: int) -> None:
        self._held.append(lines)
        self._held_count += count
        self.progress.update(count)
        if self._held_count >= self.fail_fast:
            raise self._unreachable()

    def _release(self) -> None:
        self.answered = True
        if self._held:
            self.writer.write_lines(b"".join(self._held))
            self.metrics.merge(self._held_metrics)
            self.written += self._held_count
        self._held, self._held_count = [], 0

    def _unreachable(self) -> CollectError:
        first = fastjson.loads(self._held[0].split(b"\n", 1)[0])
        return CollectError(
            f"the model server answered none of the first {self._held_count} rollouts, so the run stopped "
            f"before writing them; first error: {first.get('failure_reason')}. Check that the server is up "
            "and its address and model name"
        )
