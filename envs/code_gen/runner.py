"""Running one unit test of a solution in the sandbox, and judging how it went.

Every test is a fresh ``python`` process in :mod:`gym_llm.sandbox`, in a work directory that holds
``solution.py`` (the prelude and the model's code). A stdin test feeds the input and compares
stdout; a call-based test runs ``call_harness.py``, which calls the function and reports its
return value, compared here (:func:`~gym_llm.envs.code_gen.compare.returns_match`).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gym_llm.failures import SANDBOX_ERROR
from gym_llm.sandbox import Limits, SandboxResult, run_sandboxed

from .call_harness import decode, encode
from .compare import clip, compare_output, returns_match

# failure_kind values of one test
WRONG_ANSWER = "wrong_answer"
TIME_LIMIT = "time_limit"
MEMORY_LIMIT = "memory_limit"
RUNTIME_ERROR = "runtime_error"

# LiveCodeBench's per-test result codes (NeMo's ``result`` list): True, or one of these.
RESULT_CODES = {WRONG_ANSWER: -2, TIME_LIMIT: -3, MEMORY_LIMIT: -4, RUNTIME_ERROR: -4}

# LiveCodeBench runs solutions after these imports, so solutions may use e.g. ``sys`` or ``sqrt``
# without importing them; keep that behaviour so rewards agree.
_PRELUDE_MODULES = (
    "string re datetime collections heapq bisect copy math random statistics itertools functools "
    "operator io sys json builtins typing"
).split()
PRELUDE = (
    "".join(f"from {name} import *\n" for name in _PRELUDE_MODULES)
    + "".join(f"import {name}\n" for name in _PRELUDE_MODULES if name not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)


@dataclass(frozen=True)
class TestOutcome:
    """How one test went.

    Attributes:
        failure_kind: ``None`` when it passed; else a kind of this module, or ``"sandbox_error"``
            when the sandbox could not run it (not the solution's failure).
        reason: Why it failed (empty when it passed).
    """

    failure_kind: str | None
    reason: str = ""


PASSED = TestOutcome(None)


@cache
def harness_source() -> str:
    """The source of ``call_harness.py``, sent with ``python -I -c``."""
    return (Path(__file__).parent / "call_harness.py").read_text(encoding="utf-8")


def write_solution(work: Path, code: str) -> None:
    """Put the prelude and ``code`` in ``work/solution.py``."""
    (work / "solution.py").write_text(PRELUDE + code, encoding="utf-8")


async def run_stdin_test(work: Path, stdin: str, expected: str, limits: Limits) -> TestOutcome:
    """Run ``solution.py`` with ``stdin``; its stdout must match ``expected``."""
    run = await run_sandboxed([sys.executable, "-I", "solution.py"], cwd=work, stdin=stdin, limits=limits)
    failed = _run_failure(run)
    if failed is not None:
        return failed
    mismatch = compare_output(run.stdout, expected)
    return PASSED if mismatch is None else TestOutcome(WRONG_ANSWER, f"wrong answer: {mismatch}")


async def run_call_test(
    work: Path, fn_name: str, arguments: list[Any], expected: Any, *, json_text: bool, limits: Limits
) -> TestOutcome:
    """Call ``fn_name(*arguments)`` of ``solution.py``; its return value must match ``expected``."""
    request = json.dumps({"fn_name": fn_name, "arguments": encode(arguments)})
    run = await run_sandboxed(
        [sys.executable, "-I", "-c", harness_source()], cwd=work, stdin=request, limits=limits
    )
    failed = _run_failure(run)
    if failed is not None:
        return failed
    try:
        report = json.loads(run.stdout.strip().splitlines()[-1])
        if "error" in report:
            return TestOutcome(RUNTIME_ERROR, f"runtime error: {clip(str(report['error']))}")
        got = decode(report["value"])
    except (ValueError, IndexError, KeyError, TypeError):
        return TestOutcome(RUNTIME_ERROR, "the call reported no return value")
    if returns_match(got, expected, json_text=json_text):
        return PASSED
    reason = f"wrong answer: expected {clip(repr(expected))}, got {clip(repr(got))}"
    return TestOutcome(WRONG_ANSWER, reason)


def _run_failure(run: SandboxResult) -> TestOutcome | None:
    """The outcome of a run that did not end normally (``None`` if it exited with status 0)."""
    if run.sandbox_error is not None:
        return TestOutcome(SANDBOX_ERROR, f"sandbox error: {clip(run.sandbox_error)}")
    if run.limit in ("cpu_seconds", "wall_seconds"):
        return TestOutcome(TIME_LIMIT, f"time limit exceeded ({run.limit})")
    if run.limit == "memory_mb":
        return TestOutcome(MEMORY_LIMIT, "memory limit exceeded")
    if run.returncode != 0 or run.limit is not None:
        why = f" ({run.limit})" if run.limit else ""
        return TestOutcome(RUNTIME_ERROR, f"exit status {run.returncode}{why}: {_last_line(run.stderr)}")
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return clip(lines[-1]) if lines else ""
