"""MathWithCode: solve a math problem with a stateful ``execute_python`` tool, answer in ``\\boxed{}``.

Port of NeMo Gym's ``math_with_code``. Each episode gets one long-lived Python process (started on
the first call, in the :mod:`gym_llm.sandbox`: no network, writes only in its own temporary
directory, memory/CPU/process limits) whose globals persist across calls; numpy is preloaded
(scipy and pandas too when installed). A call that runs longer than ``execution_timeout`` kills
the process and returns an error; the next call starts a fresh one.

The reward is 1.0 iff the last ``\\boxed{...}`` of the assistant's messages (or, failing that, of
the tool outputs' stdout) equals ``expected_result`` after normalisation, exactly or numerically
(relative tolerance 1e-6).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sys
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.sandbox import Limits, SandboxedPopen, open_sandboxed
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict

NO_ANSWER = "no_answer"
WRONG_ANSWER = "wrong_answer"

_BOXED = "\\boxed{"


class MathWithCodeTask(TaskRow):
    """A row: NeMo's ``expected_result`` (and unused ``expected_code_contains``), plus ours.

    ``reference_code`` (ours, optional) is Python that prints the answer on its last line; the
    reference solution runs it with the tool and boxes what it printed.
    """

    expected_result: str
    expected_code_contains: str = ""
    reference_code: str | None = None

    @field_validator("expected_result", mode="before")
    @classmethod
    def _number_as_text(cls, value: Any) -> Any:
        # Some datasets store numeric answers as numbers; NeMo compares text.
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


# ----------------------------------------------------------------------------------------- grading
def extract_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` in ``text`` (nested braces allowed), or ``None``."""
    start = text.rfind(_BOXED)
    if start < 0:
        return None
    depth = 0
    begin = start + len(_BOXED)
    for index in range(begin, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                answer = text[begin:index].strip()
                return answer or None
            depth -= 1
    return None  # unbalanced


def normalize_answer(answer: str) -> str:
    """Strip ``\\(...\\)``, ``$...$`` and ``\\text{...}`` wrappers and collapse whitespace."""
    answer = answer.strip()
    if answer.startswith("\\(") and answer.endswith("\\)"):
        answer = answer[2:-2].strip()
    if len(answer) > 1 and answer.startswith("$") and answer.endswith("$"):
        answer = answer[1:-1].strip()
    if answer.startswith("\\text{") and answer.endswith("}"):
        answer = answer[6:-1].strip()
    return " ".join(answer.split())


def answers_match(actual: str | None, expected: str) -> bool:
    """Equal after :func:`normalize_answer`, or equal as numbers within a relative 1e-6."""
    if actual is None:
        return False
    left, right = normalize_answer(actual), normalize_answer(expected)
    if left == right:
        return True
    try:
        a, b = float(left), float(right)
    except (ValueError, OverflowError):
        return False
    return abs(a - b) < 1e-6 * max(1.0, abs(b))


def _tool_stdout(output: Any) -> str:
    """The ``stdout`` of an ``execute_python`` output (the raw output if it is not that JSON)."""
    if not isinstance(output, str):
        return ""
    try:
        decoded = json.loads(output)
    except ValueError:
        return output
    if isinstance(decoded, dict) and isinstance(decoded.get("stdout"), str):
        return decoded["stdout"]
    return output


def extract_answer(output: list[dict[str, Any]]) -> str | None:
    """NeMo's rule: the last boxed answer of the assistant messages, else of the tool stdout."""
    items = [item for item in output if isinstance(item, dict)]
    for item in reversed(items):
        if item.get("type", "message") == "message" and item.get("role") == "assistant":
            answer = extract_boxed(it.content_text(item.get("content")))
            if answer is not None:
                return answer
    for item in reversed(items):
        if item.get("type") == "function_call_output":
            answer = extract_boxed(_tool_stdout(item.get("output")))
            if answer is not None:
                return answer
    return None


# ----------------------------------------------------------------------------------------- session
@cache
def _worker_source() -> str:
    return (Path(__file__).parent / "worker.py").read_text(encoding="utf-8")


class SessionError(RuntimeError):
    """The Python process died or broke the protocol."""


class PythonSession:
    """One sandboxed Python process with persistent globals, and its temporary work directory.

    Blocking methods (``start``, ``execute``) run in a worker thread; ``kill`` may be called from
    any thread and makes a blocked call return at once.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.workdir = tempfile.mkdtemp(prefix="gym_llm_python_")
        self.process: SandboxedPopen | None = None
        self.preloaded: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        with self._lock:
            if self._closed:
                raise SessionError("the session is closed")
            self.process = open_sandboxed(
                [sys.executable, "-I", "-c", _worker_source()],
                cwd=self.workdir,
                limits=self.limits,
                env={"GYM_LLM_OUTPUT_CAP": str(self.limits.max_output_bytes)},
            )
            ready = self._receive()
            self.preloaded = list(ready.get("preloaded", []))

    def execute(self, code: str) -> dict[str, Any]:
        with self._lock:
            if self.process is None or self._closed:
                raise SessionError("the session is closed")
            stdin = self.process.popen.stdin
            assert stdin is not None
            try:
                stdin.write(json.dumps({"code": code}).encode() + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise SessionError(self._death_reason()) from exc
            return self._receive()

    def _receive(self) -> dict[str, Any]:
        assert self.process is not None and self.process.popen.stdout is not None
        try:
            line = self.process.popen.stdout.readline()
        except (ValueError, OSError):
            line = b""
        if not line:
            raise SessionError(self._death_reason())
        try:
            message = json.loads(line)
        except ValueError:
            raise SessionError("the Python process broke its reply protocol") from None
        if not isinstance(message, dict):
            raise SessionError("the Python process broke its reply protocol")
        return message

    def _death_reason(self) -> str:
        if self._closed:
            return "the Python process was stopped"
        assert self.process is not None
        self.process.kill()  # the tree is dead, so reading stderr to its end cannot block
        stderr = b""
        with contextlib.suppress(Exception):
            stderr = self.process.popen.stderr.read()[-2000:] if self.process.popen.stderr else b""
        status = self.process.close()
        code = status.get("exit", self.process.popen.returncode)
        detail = stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit status {code}"]
        return f"the Python process exited ({detail[0]})"

    def kill(self) -> None:
        """Stop the process now (thread-safe; a blocked call then fails promptly)."""
        self._closed = True
        if self.process is not None:
            self.process.kill()

    def close(self) -> None:
        """Kill the process, reap it and remove the work directory."""
        self.kill()
        with self._lock:
            if self.process is not None:
                self.process.close()
            shutil.rmtree(self.workdir, ignore_errors=True)


def _error_reply(message: str) -> dict[str, Any]:
    return {"success": False, "stdout": "", "stderr": "", "error_message": message, "result": None}


# ----------------------------------------------------------------------------------------- env
class MathWithCodeEnv(LLMEnv):
    task_model = MathWithCodeTask
    max_turns = 3  # NeMo's max_steps for math_with_code
    tool_timeout = 600.0  # execute_python enforces its own, shorter, timeouts
    execution_timeout = 10.0  # NeMo's max_execution_time
    startup_timeout = 60.0
    session_limits = Limits(
        cpu_seconds=120,
        wall_seconds=600,
        memory_mb=2048,
        max_processes=32,
        max_file_mb=16,
        max_output_bytes=100_000,
    )

    def __init__(
        self,
        tasks: Any = None,
        *,
        execution_timeout: float | None = None,
        session_limits: Limits | None = None,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            execution_timeout: Seconds one ``execute_python`` call may run (default 10, as NeMo).
            session_limits: Sandbox limits of the episode's Python process.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if execution_timeout is not None:
            self.execution_timeout = execution_timeout
        if session_limits is not None:
            self.session_limits = session_limits
        self._session: PythonSession | None = None
        super().__init__(tasks, **kwargs)

    def setup(self, task: dict[str, Any]) -> None:
        self._session = None  # started by the first call

    def teardown(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    @property
    def session(self) -> PythonSession | None:
        """The episode's Python session, if a call has started one."""
        return self._session

    @tool
    async def execute_python(self, code: str) -> dict[str, Any]:
        """Execute Python code to perform calculations. You have access to numpy, scipy, pandas and
        basic math operations.

        Args:
            code: The Python code to execute for the calculation.
        """
        session = self._session
        fresh = session is None
        if session is None:
            session = self._session = PythonSession(self.session_limits)
        job = asyncio.ensure_future(asyncio.to_thread(self._start_and_execute, session, code, fresh))
        timeout = self.execution_timeout + (self.startup_timeout if fresh else 0.0)
        try:
            return await asyncio.wait_for(asyncio.shield(job), timeout)
        except asyncio.TimeoutError:
            self._drop(session)
            with contextlib.suppress(Exception):
                await job
            return _error_reply(
                f"Execution timed out after {self.execution_timeout:g} s. The Python session was "
                "restarted: variables from earlier calls are lost."
            )
        except SessionError as exc:
            self._drop(session)
            return _error_reply(f"{exc}. The Python session was restarted: variables are lost.")
        except BaseException:
            self._drop(session)  # cancelled: never leave the process running
            raise

    @staticmethod
    def _start_and_execute(session: PythonSession, code: str, fresh: bool) -> dict[str, Any]:
        if fresh:
            session.start()
        reply = session.execute(code)
        return {key: reply.get(key) for key in ("success", "stdout", "stderr", "error_message", "result")}

    def _drop(self, session: PythonSession) -> None:
        session.close()
        if self._session is session:
            self._session = None

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response.get("output")
        answer = extract_answer(output if isinstance(output, list) else [])
        correct = answers_match(answer, str(task["expected_result"]))
        failure = None if correct else (NO_ANSWER if answer is None else WRONG_ANSWER)
        return Verdict(
            1.0 if correct else 0.0,
            components={"accuracy": float(correct)},
            details={"extracted_answer": answer, "accuracy": correct},
            failure_kind=failure,
        )

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        code = task.get("reference_code")
        if not code:
            return [it.message(f"The answer is \\boxed{{{task['expected_result']}}}.")]
        outputs = [item for item in observation["input"] if item.get("type") == "function_call_output"]
        if not outputs:
            return [it.function_call("execute_python", {"code": code}, "call_reference")]
        lines = [line.strip() for line in _tool_stdout(outputs[-1]["output"]).splitlines() if line.strip()]
        answer = lines[-1] if lines else "?"
        return [it.message(f"The computation gives {answer}, so the answer is \\boxed{{{answer}}}.")]
