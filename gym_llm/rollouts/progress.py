"""Progress of a collection run: a tqdm bar on a terminal, else a line every ``interval`` seconds."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, TextIO

from tqdm import tqdm

from gym_llm.rollouts.metrics import MetricsAccumulator


class Progress:
    """Show how far a run is.

    Args:
        total: Rollouts this run will play.
        metrics: The run's accumulator (read for the mean reward and masked count).
        enabled: Show anything at all.
        stream: Where to write (default: ``sys.stderr``).
        interval: Seconds between lines when ``stream`` is not a terminal.
    """

    def __init__(
        self,
        total: int,
        metrics: MetricsAccumulator,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        interval: float = 10.0,
    ) -> None:
        self.total = total
        self.done = 0
        self.metrics = metrics
        self.interval = interval
        self._stream = stream if stream is not None else sys.stderr
        self._start = time.monotonic()
        self._baseline = (metrics.num_rollouts, metrics.reward_sum, metrics.num_used, metrics.num_masked)
        self._bar: Any = None
        self._ticker: asyncio.Task[None] | None = None
        if enabled and total:
            if _is_terminal(self._stream):
                self._bar = tqdm(total=total, file=self._stream, unit="rollout", dynamic_ncols=True)
            else:
                self._ticker = asyncio.get_running_loop().create_task(self._tick())

    def update(self, count: int) -> None:
        """``count`` more rollouts finished (the metrics already hold them)."""
        self.done += count
        if self._bar is not None:
            self._bar.update(count)
            if self.done % 64 < count:
                self._bar.set_postfix(mean_reward=f"{self._mean_reward():.3f}", refresh=False)

    def line(self) -> str:
        """One line on the run so far: done/total, rate, mean reward of this run's rollouts, masked, ETA."""
        elapsed = time.monotonic() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        text = f"gym-llm: {self.done:,}/{self.total:,} rollouts ({self.done / self.total:.0%}), {rate:,.1f}/s"
        text += f", mean reward {self._mean_reward():.4f}"
        masked = self.metrics.num_masked - self._baseline[3]
        if masked:
            text += f", {masked:,} masked"
        if rate > 0 and self.done < self.total:
            text += f", ETA {_duration((self.total - self.done) / rate)}"
        return text

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self._stream.write(self.line() + "\n")
            self._stream.flush()

    def _mean_reward(self) -> float:
        used = self.metrics.num_used - self._baseline[2]
        return (self.metrics.reward_sum - self._baseline[1]) / used if used > 0 else 0.0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"
