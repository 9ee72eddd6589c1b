"""CodeGen: write a program or a function; it must pass every unit test (LiveCodeBench style).

Port of NeMo Gym's ``code_gen``. No tools, one turn. The code is the text between the last two
lines containing a code fence (```` ``` ````) of the final assistant message, as LiveCodeBench's
``extract_code``. Each test runs in the :mod:`gym_llm.sandbox` (no network, own work directory,
time/memory/process limits), a fresh process per test:

- stdin tests (``fn_name`` null): ``python solution.py`` with the test input on stdin; the output
  must equal the expected one line by line after stripping whitespace, numbers with a decimal
  point or exponent within 1e-6.
- call-based tests (``fn_name`` set, LiveCodeBench's LeetCode rows or TACO/APPS rows): the
  function ``fn_name`` (a method of a ``Solution`` instance when the code defines that class,
  else a top-level function) is called with the test's arguments; its return value must match
  the expected one as the reference graders compare (:mod:`~gym_llm.envs.code_gen.compare`).

Tests stop at the first failure. Reward 1.0 iff all pass. A test the sandbox could not run at all
gives ``failure_kind="sandbox_error"`` (a masked rollout), never a plain zero.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Tag

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.failures import SANDBOX_ERROR
from gym_llm.sandbox import Limits
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

from .compare import compare_output, extract_code, returns_match
from .runner import (
    MEMORY_LIMIT,
    PRELUDE,
    RESULT_CODES,
    RUNTIME_ERROR,
    TIME_LIMIT,
    WRONG_ANSWER,
    TestOutcome,
    run_call_test,
    run_stdin_test,
    write_solution,
)
from .unit_tests import (
    PackedUnitTests,
    UnitTests,
    call_arguments,
    expected_return,
    is_json_text_form,
    pack_unit_tests,
    unpack_unit_tests,
)

__all__ = [
    "BAD_TESTS",
    "EMPTY_RESPONSE",
    "MEMORY_LIMIT",
    "NO_CODE_BLOCK",
    "PRELUDE",
    "RUNTIME_ERROR",
    "SYNTAX_ERROR",
    "TIME_LIMIT",
    "WRONG_ANSWER",
    "CodeGenEnv",
    "CodeGenTask",
    "PackedUnitTests",
    "UnitTests",
    "VerifierMetadata",
    "compare_output",
    "extract_code",
    "pack_unit_tests",
    "returns_match",
    "unpack_unit_tests",
]

EMPTY_RESPONSE = "empty_response"
NO_CODE_BLOCK = "no_code_block"
SYNTAX_ERROR = "syntax_error"
BAD_TESTS = "bad_tests"


def _unit_tests_form(value: Any) -> str:
    return "packed" if isinstance(value, dict) and "packed" in value else "plain"


class VerifierMetadata(BaseModel):
    """A row's ``verifier_metadata``: its unit tests (plain or packed) and, optionally, a difficulty.

    Other fields pass through. ``unit_tests`` holds ``inputs``, ``outputs`` and ``fn_name`` (null
    for stdin tests), or ``{"packed": ...}``, the same compressed (see :func:`pack_unit_tests`).
    """

    model_config = ConfigDict(extra="allow")

    # The form is chosen by the "packed" key, so that errors name the form the row uses.
    unit_tests: Annotated[
        Annotated[PackedUnitTests, Tag("packed")] | Annotated[UnitTests, Tag("plain")],
        Discriminator(_unit_tests_form),
    ]
    difficulty: str | None = None


class CodeGenTask(TaskRow):
    """A row: NeMo's ``verifier_metadata.unit_tests``; ``reference_solution`` (ours) is optional."""

    verifier_metadata: VerifierMetadata
    reference_solution: str | None = None


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


class CodeGenEnv(LLMEnv):
    """Write code that passes every unit test of the row, run in the sandbox; one turn, no tools.

    Reward 1.0 iff all tests pass (stdin programs or calls of ``fn_name``); see the module
    docstring for extraction, comparison and the failure kinds.
    """

    task_model = CodeGenTask
    max_turns = 2  # one answer; a stray tool call (there are no tools) gets an error and one more turn
    reward_components = ("accuracy",)
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
        text = it.last_assistant_text(response["output"])
        metadata = task.get("verifier_metadata") or {}
        details: dict[str, Any] = {"difficulty": metadata.get("difficulty")}
        if not text.strip():
            return _fail(EMPTY_RESPONSE, details, "the response has no text")
        code = extract_code(text)
        details["extracted_model_code"] = code
        if not code.strip():
            return _fail(NO_CODE_BLOCK, details, "no ``` code block in the final message")
        problem = await asyncio.to_thread(_compile_problem, code)
        if problem is not None:
            return _fail(SYNTAX_ERROR, details, problem)
        try:
            tests = unpack_unit_tests(metadata.get("unit_tests") or {})
            cases = _test_cases(tests)
        except ValueError as exc:  # the row's tests are broken, not the answer
            return _fail(BAD_TESTS, details, str(exc), masked=True)
        return await self._run_tests(code, tests["fn_name"], cases, details)

    async def _run_tests(
        self, code: str, fn_name: str | None, cases: list[tuple[Any, Any]], details: dict[str, Any]
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
        details.update(tests_total=len(cases), tests_passed=0, result=results)
        try:
            work = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="gym_llm_codegen_"))
        except OSError as exc:
            return _fail(SANDBOX_ERROR, details, f"sandbox error: cannot make a work directory: {exc}")
        try:
            write_solution(work, code)
            async with _semaphore(self.max_concurrency):
                for number, (test_input, expected) in enumerate(cases, 1):
                    outcome = await self._run_one(work, fn_name, test_input, expected, limits)
                    if outcome.failure_kind == SANDBOX_ERROR:
                        return _fail(SANDBOX_ERROR, details, f"test {number}: {outcome.reason}")
                    if outcome.failure_kind is not None:
                        results.append(RESULT_CODES[outcome.failure_kind])
                        return _fail(outcome.failure_kind, details, f"test {number}: {outcome.reason}")
                    results.append(True)
                    details["tests_passed"] = number
        except OSError as exc:  # writing solution.py: the disk, not the model
            return _fail(SANDBOX_ERROR, details, f"sandbox error: {exc}")
        finally:
            await asyncio.to_thread(shutil.rmtree, work, True)
        details["first_failure"] = None
        return Verdict(1.0, components={"accuracy": 1.0}, details=details)

    @staticmethod
    async def _run_one(
        work: Path, fn_name: str | None, test_input: Any, expected: Any, limits: Limits
    ) -> TestOutcome:
        if fn_name is None:
            return await run_stdin_test(work, test_input, expected, limits)
        arguments, json_text = test_input
        return await run_call_test(work, fn_name, arguments, expected, json_text=json_text, limits=limits)

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        solution = task.get("reference_solution") or ""
        return [it.message(f"Here is my solution.\n\n```python\n{solution.rstrip()}\n```\n")]


def _test_cases(tests: dict[str, Any]) -> list[tuple[Any, Any]]:
    """``(input, expected)`` per test; a call-based input is ``(arguments, json_text)``.

    Raises:
        ValueError: A call-based test value is not valid JSON.
    """
    pairs = list(zip(tests["inputs"], tests["outputs"], strict=True))
    if tests["fn_name"] is None:
        return pairs
    json_text = is_json_text_form(tests)
    cases = []
    for number, (test_input, test_output) in enumerate(pairs, 1):
        try:
            arguments = call_arguments(test_input)
            expected = expected_return(test_output, json_text)
        except ValueError as exc:
            raise ValueError(f"call-based test {number} is not valid JSON: {exc}") from None
        cases.append(((arguments, json_text), expected))
    return cases


def _compile_problem(code: str) -> str | None:
    """Why ``code`` does not compile, or None. Runs in a thread: compiling a big answer takes a while.

    Besides syntax errors, code nested too deep for the compiler (``1+1+...+1``, ``---...1``) fails
    with RecursionError or MemoryError: the answer's fault too.

    Example:
        >>> _compile_problem("x = 1"), _compile_problem("x = (")[:11]
        (None, 'SyntaxError')
    """
    try:
        compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def _fail(kind: str, details: dict[str, Any], reason: str, *, masked: bool = False) -> Verdict:
    details["first_failure"] = reason
    return Verdict(0.0, components={"accuracy": 0.0}, details=details, failure_kind=kind, masked=masked)
