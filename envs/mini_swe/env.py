"""MiniSWE: fix a bug in a small Python repository with one ``bash`` tool; hidden tests decide.

A small, self-contained take on SWE-bench (NeMo Gym runs SWE-bench itself through its
``mini_swe_agent`` agent in Docker). Each task is a repository shipped under
``data/repos/<instance_id>/`` and a SWE-bench-style row: ``problem_statement``, the gold ``patch``,
the hidden tests as ``test_patch``, and the test ids ``FAIL_TO_PASS`` / ``PASS_TO_PASS``.

An episode runs in a fresh copy of the repository (a temporary directory made at reset, removed at
teardown). The model's ``bash`` commands run there through :func:`gym_llm.sandbox.run_sandboxed`.
Verification restores the test files, applies ``test_patch`` and runs the listed tests with pytest
in the sandbox: the reward is 1.0 iff every ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` test passes.

``verify`` is a function of plain data: given a recorded rollout it replays the episode's ``bash``
commands, in order, on a fresh copy of the repository, then runs the tests. During a live episode
it uses the episode's own directory instead.

A ``bash`` call the sandbox could not run (an infrastructure failure, not the command's) is a tool
error starting ``"Sandbox error: "``; an unresolved episode with such a call, or whose replayed
commands or hidden tests the sandbox could not run, gets ``failure_kind="sandbox_error"`` (a masked
rollout) instead of a plain zero.

Modules: this one (row, env, tool, verify), :mod:`~gym_llm.envs.mini_swe.repos` (the shipped
repositories and their copies), :mod:`~gym_llm.envs.mini_swe.patches` (the unified-diff engine),
:mod:`~gym_llm.envs.mini_swe.junit` (test ids and pytest's JUnit report).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.failures import SANDBOX_ERROR
from gym_llm.sandbox import Limits, SandboxResult, run_sandboxed
from gym_llm.tasks import TaskRow
from gym_llm.tools import ToolError, tool
from gym_llm.verdict import Verdict

from .junit import junit_key, junit_outcomes, task_test_ids, valid_test_id
from .patches import (
    MODEL_PATCH_CHARS,
    PatchError,
    apply_patch,
    file_diff,
    model_patch,
    write_files_command,
)
from .repos import (
    DATA,
    HIDDEN_TESTS,
    MAX_FILE_BYTES,
    REPOS,
    checkout,
    read_files,
    remove_tree,
    repo_hash,
    write_test_files,
)

__all__ = [
    "BAD_TEST_PATCH",
    "COMMAND_LIMITS",
    "DATA",
    "HIDDEN_TESTS",
    "MAX_FILE_BYTES",
    "MAX_OUTPUT_CHARS",
    "MODEL_PATCH_CHARS",
    "REPOS",
    "SANDBOX_ERROR",
    "SYSTEM_PROMPT",
    "TESTS_FAILED",
    "TEST_LIMITS",
    "TEST_TIMEOUT",
    "CommandError",
    "MiniSWEEnv",
    "MiniSWETask",
    "PatchError",
    "apply_patch",
    "checkout",
    "file_diff",
    "junit_key",
    "junit_outcomes",
    "model_patch",
    "read_files",
    "remove_tree",
    "replay_commands",
    "repo_hash",
    "sandbox_env",
    "sandbox_failures",
    "task_test_ids",
    "write_files_command",
    "write_test_files",
]

COMMAND_LIMITS = Limits(cpu_seconds=10.0, wall_seconds=20.0)
TEST_LIMITS = Limits(cpu_seconds=60.0, wall_seconds=120.0)
MAX_OUTPUT_CHARS = 10_000

# failure_kind values (and SANDBOX_ERROR, masked: the sandbox could not run a command or the tests)
TESTS_FAILED = "tests_failed"
TEST_TIMEOUT = "test_timeout"
BAD_TEST_PATCH = "bad_test_patch"

# How a bash tool error that the sandbox (not the command) caused begins.
SANDBOX_ERROR_PREFIX = "Sandbox error: "

_INSTANCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Drop the current directory from sys.path before importing pytest, so that a ``pytest.py`` the
# model wrote cannot stand in for it; the ini's ``pythonpath`` puts the repository back afterwards.
_PYTEST_MAIN = (
    "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
    "import pytest; raise SystemExit(pytest.main())"
)

SYSTEM_PROMPT = """\
You are a software engineer fixing a bug in a Python repository.

You have one tool, `bash`: it runs a command in the repository root and returns its exit code and \
output. Every call starts a fresh shell in the repository root, so `cd` and exported variables do \
not carry over: chain commands with `&&` and use paths relative to the repository root. Commands \
must finish within a few seconds; there is no network and nothing can be installed. `python` and \
`pytest` are available.

Fix the issue by editing the source files, not the tests. Hidden tests will be run on the \
repository when you finish. When you are done, reply with a short summary of your fix and no tool \
call: your first reply without a tool call ends the task."""


class MiniSWETask(TaskRow):
    """A SWE-bench-style row whose repository ships in ``data/repos/<instance_id>/``."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str = Field(min_length=1)
    patch: str = Field(min_length=1)
    test_patch: str = Field(min_length=1)
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str] = Field(default_factory=list)

    @field_validator("instance_id")
    @classmethod
    def _repo_exists(cls, value: str) -> str:
        if not _INSTANCE_ID.match(value):
            raise ValueError("must be letters, digits, '_', '.' or '-'")
        if not (REPOS / value).is_dir():
            raise ValueError(f"no repository folder {REPOS / value}")
        return value

    @field_validator("base_commit")
    @classmethod
    def _commit_matches(cls, value: str, info: ValidationInfo) -> str:
        instance_id = info.data.get("instance_id")
        if instance_id is not None and value != repo_hash(REPOS / instance_id):
            raise ValueError(f"does not match the content hash of data/repos/{instance_id}")
        return value

    @field_validator("patch", "test_patch")
    @classmethod
    def _patch_applies(cls, value: str, info: ValidationInfo) -> str:
        instance_id = info.data.get("instance_id")
        if instance_id is not None:
            changed = apply_patch(read_files(REPOS / instance_id), value)  # raises PatchError
            if not changed:
                raise ValueError("is not a unified diff")
        return value

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _test_ids(cls, value: Any) -> Any:
        if isinstance(value, str):  # SWE-bench on the Hub stores these lists as JSON strings
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError("must be a list of test ids or a JSON string of one") from None
        if isinstance(value, list):
            for test_id in value:
                if not isinstance(test_id, str) or not valid_test_id(test_id):
                    raise ValueError(f"{test_id!r} is not a test id like 'tests/test_x.py::test_y'")
        return value


class MiniSWEEnv(LLMEnv):
    """Fix the bug the issue describes; ``bash`` is the only tool.

    Args:
        tasks: Task rows (default: the bundled ``data/example.jsonl``).
        command_limits: Sandbox limits for one ``bash`` command.
        test_limits: Sandbox limits for the hidden test run.
        max_output_chars: Characters of stdout and of stderr the model sees per command.
        **kwargs: Passed to :class:`~gym_llm.env.LLMEnv` (``max_turns``, ``render_mode``, …).
    """

    task_model = MiniSWETask
    default_tasks = DATA / "example.jsonl"
    max_turns = 20
    reward_components = ("resolved", "fail_to_pass", "pass_to_pass")
    tool_timeout = 60.0

    def __init__(
        self,
        tasks: Any = None,
        *,
        command_limits: Limits | None = None,
        test_limits: Limits | None = None,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        **kwargs: Any,
    ) -> None:
        self._workdir: Path | None = None
        self._cleanup: weakref.finalize | None = None
        super().__init__(tasks, **kwargs)
        self.command_limits = command_limits or COMMAND_LIMITS
        self.test_limits = test_limits or TEST_LIMITS
        self.max_output_chars = max_output_chars
        # The sandbox's own wall limit must fire first, so the model reads its timeout message.
        self.tool_timeout = max(self.tool_timeout, self.command_limits.wall_seconds + 10.0)

    @property
    def workdir(self) -> Path | None:
        """The live episode's copy of the repository (``None`` between episodes)."""
        return self._workdir

    # ----------------------------------------------------------------- episode state
    def setup(self, task: dict[str, Any]) -> None:
        self._workdir = checkout(task["instance_id"])
        # Also removed if the env is garbage-collected without close().
        self._cleanup = weakref.finalize(self, remove_tree, self._workdir)

    def teardown(self) -> None:
        if self._cleanup is not None:
            self._cleanup()
        self._cleanup = None
        self._workdir = None

    # ----------------------------------------------------------------- tool
    @tool
    async def bash(self, command: str) -> str:
        """Run a bash command in the repository root and return its exit code and output.

        Args:
            command: The command to run, e.g. "grep -rn 'def parse' src" or "python -m pytest -q".
        """
        if self._workdir is None:
            raise RuntimeError("no episode is running")
        result = await self._run_command(command, self._workdir)
        return self._command_output(result)

    async def _run_command(self, command: str, root: Path) -> SandboxResult:
        return await run_sandboxed(
            ["bash", "-c", command], cwd=root, limits=self.command_limits, env=sandbox_env(root)
        )

    def _command_output(self, result: SandboxResult) -> str:
        """What the model reads; a timeout or a broken limit becomes a tool error."""
        if result.sandbox_error is not None:
            raise CommandError(f"{SANDBOX_ERROR_PREFIX}the command did not run: {result.sandbox_error}")
        body = _streams_text(result, self.max_output_chars)
        if result.timed_out:
            raise CommandError(
                f"the command timed out after {self.command_limits.wall_seconds:g} s and was killed"
                + (f"; partial output:\n{body}" if body else "")
            )
        if result.limit:
            raise CommandError(
                f"the command exceeded the {result.limit} limit and was killed"
                + (f"; partial output:\n{body}" if body else "")
            )
        return f"returncode: {result.returncode}\n{body}".rstrip("\n")

    # ----------------------------------------------------------------- verify
    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response["output"]
        if self._workdir is not None and self.is_live_response(task, response):
            return await self._evaluate(task, self._workdir, {"mode": "live"}, sandbox_failures(output))
        root = checkout(task["instance_id"])
        try:
            replay, failures = await self._replay(output, root)
            # A command the sandbox failed live or in the replay leaves the repository unlike the episode's.
            failures = [*sandbox_failures(output), *failures]
            return await self._evaluate(task, root, {"mode": "replay", "replay": replay}, failures)
        finally:
            remove_tree(root)

    async def _replay(self, output: list[dict[str, Any]], root: Path) -> tuple[dict[str, int], list[str]]:
        """Run the episode's executed ``bash`` commands again, in order, in ``root``.

        Returns:
            Counts (``commands``, ``returncode_mismatches``), and why the sandbox failed any of them.
        """
        spec = self.tools["bash"]
        commands = replay_commands(output, spec.validate)
        mismatches = 0
        failures = []
        for command, recorded in commands:
            result = await self._run_command(command, root)
            if result.sandbox_error is not None:
                failures.append(result.sandbox_error)
            expected = re.match(r"returncode: (-?\d+)", recorded)
            if expected and (result.timed_out or str(result.returncode) != expected.group(1)):
                mismatches += 1
        return {"commands": len(commands), "returncode_mismatches": mismatches}, failures

    async def _evaluate(
        self, task: dict[str, Any], root: Path, details: dict[str, Any], sandbox_errors: list[str]
    ) -> Verdict:
        fail_to_pass = task_test_ids(task, "FAIL_TO_PASS")
        pass_to_pass = task_test_ids(task, "PASS_TO_PASS")
        base = read_files(REPOS / task["instance_id"])
        details["model_patch"] = model_patch(base, read_files(root))
        try:
            write_test_files(root, base, task["test_patch"], [*fail_to_pass, *pass_to_pass])
        except PatchError as exc:
            # the row's hidden tests are broken, not the model's fix
            failed = {**details, "error": str(exc)}
            return Verdict(0.0, failure_kind=BAD_TEST_PATCH, details=failed, masked=True)
        except OSError as exc:  # the model left something in the way that even cleaning cannot fix
            return Verdict(0.0, failure_kind=TESTS_FAILED, details={**details, "error": str(exc)})

        token = secrets.token_hex(6)
        ini, report = f".gym_llm_pytest_{token}.ini", root / f".gym_llm_junit_{token}.xml"
        (root / ini).write_text("[pytest]\npythonpath = .\naddopts =\n", encoding="utf-8")
        argv = [
            sys.executable, "-c", _PYTEST_MAIN, "-q", "--tb=short", "-p", "no:cacheprovider",
            "--noconftest", "-c", ini, "--rootdir", ".", f"--junitxml={report.name}",
            *dict.fromkeys([*fail_to_pass, *pass_to_pass]),
        ]  # fmt: skip
        env = {**sandbox_env(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        result = await run_sandboxed(argv, cwd=root, limits=self.test_limits, env=env)
        outcomes = junit_outcomes(report)
        for leftover in (root / ini, report):
            leftover.unlink(missing_ok=True)

        status = {
            name: {
                "success": [t for t in ids if outcomes.get(junit_key(t)) == "passed"],
                "failure": [t for t in ids if outcomes.get(junit_key(t)) != "passed"],
            }
            for name, ids in (("FAIL_TO_PASS", fail_to_pass), ("PASS_TO_PASS", pass_to_pass))
        }
        resolved = not status["FAIL_TO_PASS"]["failure"] and not status["PASS_TO_PASS"]["failure"]
        if result.sandbox_error is not None:
            sandbox_errors = [*sandbox_errors, f"the hidden tests did not run: {result.sandbox_error}"]
        failure_kind = None
        if not resolved:
            failure_kind = TEST_TIMEOUT if result.timed_out else TESTS_FAILED
            if sandbox_errors:  # not the model's failure: the rollout is masked
                failure_kind = SANDBOX_ERROR
                details["sandbox_errors"] = sandbox_errors
        details.update(
            resolved=resolved,
            tests_status=status,
            test_output=_tail(result.stdout + result.stderr, 4000),
        )
        return Verdict(
            float(resolved),
            components={
                "resolved": float(resolved),
                "fail_to_pass": _fraction(status["FAIL_TO_PASS"]),
                "pass_to_pass": _fraction(status["PASS_TO_PASS"]),
            },
            details=details,
            failure_kind=failure_kind,
        )

    # ----------------------------------------------------------------- reference
    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """Write the files the gold ``patch`` produces (bash heredocs), then say so."""
        if not any(item.get("type") == "function_call_output" for item in observation["input"]):
            patched = apply_patch(read_files(REPOS / task["instance_id"]), task["patch"])
            return [it.function_call("bash", {"command": write_files_command(patched)}, "call_fix")]
        return [it.message("I fixed the bug described in the issue.")]


class CommandError(ToolError):
    """A ``bash`` command that was stopped by the sandbox (reported to the model as a tool error)."""


# --------------------------------------------------------------------- helpers
def sandbox_env(root: Path) -> dict[str, str]:
    """The environment of sandboxed commands: this interpreter's ``python``/``pytest`` first on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        "PATH": os.pathsep.join(dict.fromkeys([bin_dir, "/usr/local/bin", "/usr/bin", "/bin"])),
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


def sandbox_failures(output: list[dict[str, Any]]) -> list[str]:
    """The ``bash`` calls of an episode that the sandbox could not run: their tool errors, in order."""
    failures = []
    for item in output:
        text = item.get("output") if item.get("type") == "function_call_output" else None
        if not isinstance(text, str) or SANDBOX_ERROR_PREFIX not in text:
            continue
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            continue
        if isinstance(error, str) and error.startswith(SANDBOX_ERROR_PREFIX):
            failures.append(error)
    return failures


def _fraction(status: Mapping[str, list[str]]) -> float:
    total = len(status["success"]) + len(status["failure"])
    return len(status["success"]) / total if total else 1.0


def replay_commands(output: list[dict[str, Any]], validate: Any) -> list[tuple[str, str]]:
    """The ``(command, recorded output)`` of each ``bash`` call that ran, in order.

    A call ran if a ``function_call_output`` answers it and its arguments pass the tool's own
    validation (so malformed calls, which the live episode refused, are skipped here too).
    """
    commands = []
    for call, recorded in it.answered_calls(output, "bash"):
        args = it.parse_arguments(call)
        if args is None:
            continue
        try:
            command = validate(args)["command"]
        except ValueError:  # pydantic's ValidationError
            continue
        commands.append((command, recorded if isinstance(recorded, str) else ""))
    return commands


# --------------------------------------------------------------------- text helpers
def _streams_text(result: SandboxResult, limit: int) -> str:
    sections = []
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            sections.append(f"{name}:\n{_clip(text, limit)}")
    return "\n".join(section if section.endswith("\n") else section + "\n" for section in sections)


def _clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]
