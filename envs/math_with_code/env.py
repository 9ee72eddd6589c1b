"""MathWithCode: solve a math problem with a stateful ``execute_python`` tool, answer in ``\\boxed{}``.

Port of NeMo Gym's ``math_with_code``. Each episode gets one long-lived Python process (in the
:mod:`gym_llm.sandbox`: no network, writes only in its own temporary directory, memory/CPU/process
limits) whose globals persist across calls; numpy is preloaded (scipy and pandas too when
installed). The first call takes an already started process from a process-wide warm pool
(:mod:`~gym_llm.envs.math_with_code.session`), or starts one. A call whose code runs longer than
``execution_timeout`` (counted from when the code starts) kills the process and returns an error;
the next call starts a fresh one. A call the sandbox could not run at all (the process could not
be started) replies with a ``sandbox_error`` field; an episode that had one and is not answered
correctly gets ``failure_kind="sandbox_error"``, a masked rollout.

The reward is 1.0 iff the last ``\\boxed{...}`` of the assistant's messages (or, failing that, of
the tool outputs' stdout) matches ``expected_result`` by :func:`gym_llm.answers.answers_match`:
equal once ``$…$``, ``\\(…\\)`` and ``\\text{}`` wrappers are removed, or equal as numbers
(relative tolerance 1e-6).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from pydantic import field_validator

from gym_llm import items as it
from gym_llm.answers import answers_match, last_boxed
from gym_llm.env import LLMEnv, Observation
from gym_llm.failures import SANDBOX_ERROR
from gym_llm.sandbox import Limits
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict

from .session import (
    PythonSession,
    SessionError,
    SessionStartError,
    WarmPool,
    attach_while_alive,
    warm_pool,
)

NO_ANSWER = "no_answer"
WRONG_ANSWER = "wrong_answer"


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
# The name this module gave the toolkit's last_boxed (its tests and users import it from here).
extract_boxed = last_boxed


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
            answer = last_boxed(it.content_text(item.get("content")))
            if answer is not None:
                return answer
    for item in reversed(items):
        if item.get("type") == "function_call_output":
            answer = last_boxed(_tool_stdout(item.get("output")))
            if answer is not None:
                return answer
    return None


# ----------------------------------------------------------------------------------------- tool replies
_REPLY_KEYS = ("success", "stdout", "stderr", "error_message", "result")


def _error_reply(message: str) -> dict[str, Any]:
    return {"success": False, "stdout": "", "stderr": "", "error_message": message, "result": None}


def _sandbox_error_reply(reason: str) -> dict[str, Any]:
    """The reply to a call whose code never ran: the sandbox could not start Python."""
    message = f"Sandbox error: {reason}. The code did not run; you may call the tool again."
    return {**_error_reply(message), "sandbox_error": reason}


def sandbox_failure(output: list[dict[str, Any]]) -> str | None:
    """Why the sandbox failed an ``execute_python`` call of this episode, if it did (the last reason)."""
    for item in reversed(output):
        if item.get("type") != "function_call_output" or not isinstance(item.get("output"), str):
            continue
        if '"sandbox_error"' not in item["output"]:
            continue
        try:
            reply = json.loads(item["output"])
        except ValueError:
            continue
        if isinstance(reply, dict) and isinstance(reply.get("sandbox_error"), str):
            return reply["sandbox_error"]
    return None


# ----------------------------------------------------------------------------------------- env
class MathWithCodeEnv(LLMEnv):
    """Solve a math problem with a stateful, sandboxed ``execute_python`` tool; answer in ``\\boxed{}``.

    Reward 1.0 iff the last boxed answer matches ``expected_result``; see the module docstring for
    the tool's process, its limits and the warm pool.
    """

    task_model = MathWithCodeTask
    max_turns = 3  # NeMo's max_steps for math_with_code
    reward_components = ("accuracy",)
    tool_timeout = 600.0  # execute_python enforces its own, shorter, timeouts
    execution_timeout = 10.0  # NeMo's max_execution_time, counted from when the code starts
    startup_timeout = 60.0  # for a session that no warm one could replace
    warm_sessions = True
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
        warm_sessions: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            execution_timeout: Seconds one ``execute_python`` call may run (default 10, as NeMo),
                counted from when its code starts.
            session_limits: Sandbox limits of the episode's Python process.
            warm_sessions: Keep started Python processes ready in a process-wide pool, so that an
                episode's first call runs at once (default ``True``; about 100 MB per idle one).
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if execution_timeout is not None:
            self.execution_timeout = execution_timeout
        if session_limits is not None:
            self.session_limits = session_limits
        if warm_sessions is not None:
            self.warm_sessions = warm_sessions
        self._session: PythonSession | None = None
        super().__init__(tasks, **kwargs)
        self._pool = warm_pool(self.session_limits, self.startup_timeout) if self.warm_sessions else None
        self._detach: Any = None

    def setup(self, task: dict[str, Any]) -> None:
        self._session = None  # taken or started by the first call
        if self._pool is not None and self._detach is None:
            # From the first episode on (an env that only verifies warms nothing) until close.
            self._detach = attach_while_alive(self, self._pool)

    def teardown(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def close(self) -> None:
        super().close()
        if self._detach is not None:
            self._detach()  # the pool closes its idle sessions once no env is attached
            self._detach = None

    @property
    def session(self) -> PythonSession | None:
        """The episode's Python session, if a call has started one."""
        return self._session

    @property
    def pool(self) -> WarmPool | None:
        """The pool of warm sessions this env takes from (``None`` without ``warm_sessions``)."""
        return self._pool

    @tool
    async def execute_python(self, code: str) -> dict[str, Any]:
        """Execute Python code to perform calculations. You have access to numpy, scipy, pandas and
        basic math operations.

        Args:
            code: The Python code to execute for the calculation.
        """
        session = self._session
        if session is None:
            try:
                session = self._session = await self._open_session()
            except SessionStartError as exc:
                return _sandbox_error_reply(str(exc))
        # The time limit starts now, with the session ready: a start never eats into it.
        job = asyncio.ensure_future(asyncio.to_thread(session.execute, code))
        try:
            reply = await asyncio.wait_for(asyncio.shield(job), self.execution_timeout)
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
        return {key: reply.get(key) for key in _REPLY_KEYS}

    async def _open_session(self) -> PythonSession:
        """A warm session from the pool, else a freshly started one (off the event loop)."""
        pool, limits, timeout = self._pool, self.session_limits, self.startup_timeout

        def open_session() -> PythonSession:
            session = pool.take() if pool is not None else None
            if session is None:
                session = PythonSession(limits)
                session.start(timeout)
            return session

        def close_late(done: asyncio.Future[PythonSession]) -> None:
            if done.exception() is None:
                done.result().close()

        job = asyncio.ensure_future(asyncio.to_thread(open_session))
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            job.add_done_callback(close_late)  # the thread still finishes: close what it opens
            raise

    def _drop(self, session: PythonSession) -> None:
        session.close()
        if self._session is session:
            self._session = None

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        answer = extract_answer(response["output"])
        correct = answers_match(answer, str(task["expected_result"]))
        failure = None if correct else (NO_ANSWER if answer is None else WRONG_ANSWER)
        details: dict[str, Any] = {"extracted_answer": answer, "accuracy": correct}
        # Without its tool the model had no fair chance: a sandbox failure masks the zero.
        if not correct and (reason := sandbox_failure(response["output"])) is not None:
            failure, details["sandbox_error"] = SANDBOX_ERROR, reason
        return Verdict(
            1.0 if correct else 0.0,
            components={"accuracy": float(correct)},
            details=details,
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
