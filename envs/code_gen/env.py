"""CodeGen: write a stdin/stdout program; it must pass every unit test (LiveCodeBench style).

Port of NeMo Gym's ``code_gen``. No tools, one turn. The code is the text between the last two
lines containing a code fence (```` ``` ````) of the final assistant message, as LiveCodeBench's
``extract_code``. Each test runs it as ``python solution.py`` in the :mod:`gym_llm.sandbox`
(no network, own work directory, time/memory/process limits) with the test input on stdin; the
output must equal the expected one line by line after stripping whitespace, numbers with a
decimal point or exponent within 1e-6. Tests stop at the first failure. Reward 1.0 iff all pass.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import shutil
import sys
import tempfile
import weakref
import zlib
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.sandbox import Limits, SandboxResult, run_sandboxed
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

EMPTY_RESPONSE = "empty_response"
NO_CODE_BLOCK = "no_code_block"
SYNTAX_ERROR = "syntax_error"
WRONG_ANSWER = "wrong_answer"
TIME_LIMIT = "time_limit"
MEMORY_LIMIT = "memory_limit"
RUNTIME_ERROR = "runtime_error"
BAD_TESTS = "bad_tests"
UNSUPPORTED_TESTS = "call_based_tests_unsupported"

# LiveCodeBench's per-test result codes (NeMo's ``result`` list): True, or one of these.
_CODES = {WRONG_ANSWER: -2, TIME_LIMIT: -3, MEMORY_LIMIT: -4, RUNTIME_ERROR: -4}

# LiveCodeBench runs stdin/stdout solutions after these imports, so solutions may use e.g.
# ``sys`` or ``sqrt`` without importing them; keep that behaviour so rewards agree.
_PRELUDE_MODULES = (
    "string re datetime collections heapq bisect copy math random statistics itertools functools "
    "operator io sys json builtins typing"
).split()
PRELUDE = (
    "".join(f"from {name} import *\n" for name in _PRELUDE_MODULES)
    + "".join(f"import {name}\n" for name in _PRELUDE_MODULES if name not in ("builtins", "typing"))
    + "sys.setrecursionlimit(50000)\n"
)


class UnitTests(BaseModel):
    """LiveCodeBench tests: stdin inputs and expected stdouts (``fn_name`` marks call-based ones)."""

    model_config = ConfigDict(extra="allow")

    inputs: list[str]
    outputs: list[str]
    fn_name: str | None = None

    @model_validator(mode="after")
    def _same_length(self) -> UnitTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        if not self.inputs:
            raise ValueError("no tests")
        return self


class PackedUnitTests(BaseModel):
    """NeMo's compressed form: ``packed`` = base64(zlib(json({"inputs": [...], "outputs": [...]})))."""

    model_config = ConfigDict(extra="allow")

    packed: str
    fn_name: str | None = None


class VerifierMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")

    unit_tests: PackedUnitTests | UnitTests
    difficulty: str | None = None


class CodeGenTask(TaskRow):
    """A row: NeMo's ``verifier_metadata.unit_tests``; ``reference_solution`` (ours) is optional."""

    verifier_metadata: VerifierMetadata
    reference_solution: str | None = None


# ----------------------------------------------------------------------------------------- helpers
def extract_code(text: str) -> str:
    """The lines between the last two lines that contain a code fence (``""`` if fewer than two)."""
    lines = text.split("\n")
    fences = [index for index, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def pack_unit_tests(inputs: list[str], outputs: list[str]) -> str:
    """The ``packed`` string of NeMo's compressed unit tests."""
    return base64.b64encode(
        zlib.compress(json.dumps({"inputs": inputs, "outputs": outputs}).encode())
    ).decode()


def unpack_unit_tests(unit_tests: dict[str, Any]) -> dict[str, Any]:
    """Plain ``{inputs, outputs, fn_name}`` from either form; raises ``ValueError`` when corrupt."""
    if "packed" in unit_tests:
        try:
            decoded = json.loads(zlib.decompress(base64.b64decode(unit_tests["packed"])))
        except (binascii.Error, zlib.error, ValueError, TypeError) as exc:
            raise ValueError(f"cannot unpack unit tests: {exc}") from None
        if not isinstance(decoded, dict):
            raise ValueError("packed unit tests are not an object")
        unit_tests = {**decoded, "fn_name": unit_tests.get("fn_name")}
    return UnitTests.model_validate(unit_tests).model_dump()


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _tokens_close(expected: str, actual: str, want: Decimal, got: Decimal) -> bool:
    if want == got:
        return True
    floating = any("." in token or "e" in token.lower() for token in (expected, actual))
    if not floating or not (want.is_finite() and got.is_finite()):
        return False
    error = abs(want - got)
    return error <= Decimal("1e-6") or error / max(abs(want), Decimal(1)) <= Decimal("1e-6")


def compare_output(actual: str, expected: str) -> str | None:
    """``None`` if ``actual`` matches ``expected`` as LiveCodeBench judges it, else why not."""
    got_lines = [line.strip() for line in actual.strip().split("\n")]
    want_lines = [line.strip() for line in expected.strip().split("\n")]
    if len(got_lines) != len(want_lines):
        return f"expected {len(want_lines)} output lines, got {len(got_lines)}"
    for number, (got, want) in enumerate(zip(got_lines, want_lines, strict=True), 1):
        if got == want:
            continue
        got_numbers, want_numbers = _decimals(got), _decimals(want)
        if (
            got_numbers is not None
            and want_numbers is not None
            and len(got_numbers) == len(want_numbers)
            and all(
                _tokens_close(w, g, wn, gn)
                for w, g, wn, gn in zip(want.split(), got.split(), want_numbers, got_numbers, strict=True)
            )
        ):
            continue
        return f"line {number}: expected {_clip(want)!r}, got {_clip(got)!r}"
    return None


def _clip(text: str, length: int = 200) -> str:
    return text if len(text) <= length else text[: length // 2] + " ... " + text[-length // 2 :]


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _clip(lines[-1]) if lines else ""


_semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _semaphore(size: int) -> asyncio.Semaphore:
    """One semaphore per event loop, shared by every CodeGen env of the process."""
    loop = asyncio.get_running_loop()
    semaphore = _semaphores.get(loop)
    if semaphore is None:
        semaphore = _semaphores[loop] = asyncio.Semaphore(size)
    return semaphore


# ----------------------------------------------------------------------------------------- env
class CodeGenEnv(LLMEnv):
    task_model = CodeGenTask
    max_turns = 2  # one answer; a stray tool call (there are no tools) gets an error and one more turn
    unit_test_timeout = 10.0  # NeMo's unit_test_timeout_secs
    max_concurrency = os.cpu_count() or 2  # programs running at once, per process (NeMo: num_processes)
    test_limits = Limits(memory_mb=1024, max_processes=16, max_file_mb=16, max_output_bytes=1_000_000)

    def __init__(self, tasks: Any = None, *, unit_test_timeout: float | None = None, **kwargs: Any) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            unit_test_timeout: Seconds of CPU and (plus one for start-up) wall time per test.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if unit_test_timeout is not None:
            self.unit_test_timeout = unit_test_timeout
        super().__init__(tasks, **kwargs)

    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response.get("output")
        items = [item for item in output if isinstance(item, dict)] if isinstance(output, list) else []
        text = it.last_assistant_text(items)
        metadata = task.get("verifier_metadata") or {}
        details: dict[str, Any] = {"difficulty": metadata.get("difficulty")}
        if not text.strip():
            return _fail(EMPTY_RESPONSE, details, "the response has no text")
        code = extract_code(text)
        details["extracted_model_code"] = code
        if not code.strip():
            return _fail(NO_CODE_BLOCK, details, "no ``` code block in the final message")
        try:
            compile(code, "solution.py", "exec")
        except (SyntaxError, ValueError) as exc:
            return _fail(SYNTAX_ERROR, details, f"{type(exc).__name__}: {exc}")
        try:
            tests = unpack_unit_tests(metadata.get("unit_tests") or {})
        except ValueError as exc:
            return _fail(BAD_TESTS, details, str(exc))
        if tests.get("fn_name"):
            return _fail(UNSUPPORTED_TESTS, details, "call-based (fn_name) tests are not supported")
        return await self._run_tests(PRELUDE + code, tests["inputs"], tests["outputs"], details)

    async def _run_tests(
        self, program: str, inputs: list[str], outputs: list[str], details: dict[str, Any]
    ) -> Verdict:
        limits = Limits(
            cpu_seconds=self.unit_test_timeout,
            wall_seconds=self.unit_test_timeout + 1.0,
            memory_mb=self.test_limits.memory_mb,
            max_processes=self.test_limits.max_processes,
            max_file_mb=self.test_limits.max_file_mb,
            max_output_bytes=self.test_limits.max_output_bytes,
        )
        results: list[bool | int] = []
        details.update(tests_total=len(inputs), tests_passed=0, result=results)
        work = await asyncio.to_thread(tempfile.mkdtemp, prefix="gym_llm_codegen_")
        try:
            Path(work, "solution.py").write_text(program, encoding="utf-8")
            async with _semaphore(self.max_concurrency):
                for number, (stdin, expected) in enumerate(zip(inputs, outputs, strict=True), 1):
                    run = await run_sandboxed(
                        [sys.executable, "-I", "solution.py"], cwd=work, stdin=stdin, limits=limits
                    )
                    kind, reason = _judge(run, expected)
                    if kind is not None:
                        results.append(_CODES[kind])
                        return _fail(kind, details, f"test {number}: {reason}")
                    results.append(True)
                    details["tests_passed"] = number
        finally:
            await asyncio.to_thread(shutil.rmtree, work, True)
        details["first_failure"] = None
        return Verdict(1.0, components={"accuracy": 1.0}, details=details)

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        solution = task.get("reference_solution") or ""
        return [it.message(f"Here is my solution.\n\n```python\n{solution.rstrip()}\n```\n")]


def _judge(run: SandboxResult, expected: str) -> tuple[str | None, str]:
    """The failure kind and reason of one test run (``None`` if it passed)."""
    if run.limit in ("cpu_seconds", "wall_seconds"):
        return TIME_LIMIT, f"time limit exceeded ({run.limit})"
    if run.limit == "memory_mb":
        return MEMORY_LIMIT, "memory limit exceeded"
    if run.returncode != 0 or run.limit is not None:
        why = f" ({run.limit})" if run.limit else ""
        return RUNTIME_ERROR, f"exit status {run.returncode}{why}: {_last_line(run.stderr)}"
    mismatch = compare_output(run.stdout, expected)
    if mismatch is not None:
        return WRONG_ANSWER, f"wrong answer: {mismatch}"
    return None, ""


def _fail(kind: str, details: dict[str, Any], reason: str) -> Verdict:
    details["first_failure"] = reason
    return Verdict(0.0, components={"accuracy": 0.0}, details=details, failure_kind=kind)
