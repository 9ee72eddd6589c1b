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
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import sys
import tempfile
import weakref
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.sandbox import Limits, SandboxResult, run_sandboxed
from gym_llm.tasks import TaskRow
from gym_llm.tools import ToolError, tool
from gym_llm.verdict import Verdict

DATA = Path(__file__).parent / "data"
REPOS = DATA / "repos"
HIDDEN_TESTS = DATA / "hidden_tests"

COMMAND_LIMITS = Limits(cpu_seconds=10.0, wall_seconds=20.0)
TEST_LIMITS = Limits(cpu_seconds=60.0, wall_seconds=120.0)
MAX_OUTPUT_CHARS = 10_000
MODEL_PATCH_CHARS = 100_000
MAX_FILE_BYTES = 1_000_000

# failure_kind values
MALFORMED_RESPONSE = "malformed_response"
TESTS_FAILED = "tests_failed"
TEST_TIMEOUT = "test_timeout"
BAD_TEST_PATCH = "bad_test_patch"
SANDBOX_ERROR = "sandbox_error"

_SKIPPED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".git"})
_INSTANCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
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


class PatchError(ValueError):
    """A unified diff that does not apply to the files it names."""


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
                if not isinstance(test_id, str) or not _valid_test_id(test_id):
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
        if result.returncode is None:
            raise CommandError(f"the command could not be started: {result.stderr.strip()}")
        return f"returncode: {result.returncode}\n{body}".rstrip("\n")

    # ----------------------------------------------------------------- verify
    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response.get("output") if isinstance(response, dict) else None
        if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
            return Verdict(0.0, failure_kind=MALFORMED_RESPONSE, details={"error": "response.output"})
        if self._workdir is not None and self.is_live_response(task, response):
            return await self._evaluate(task, self._workdir, {"mode": "live"})
        root = checkout(task["instance_id"])
        try:
            replay = await self._replay(output, root)
            return await self._evaluate(task, root, {"mode": "replay", "replay": replay})
        finally:
            remove_tree(root)

    async def _replay(self, output: list[dict[str, Any]], root: Path) -> dict[str, int]:
        """Run the episode's executed ``bash`` commands again, in order, in ``root``."""
        spec = self.tools["bash"]
        commands = replay_commands(output, spec.validate)
        mismatches = 0
        for command, recorded in commands:
            result = await self._run_command(command, root)
            expected = re.match(r"returncode: (-?\d+)", recorded)
            if expected and (result.timed_out or str(result.returncode) != expected.group(1)):
                mismatches += 1
        return {"commands": len(commands), "returncode_mismatches": mismatches}

    async def _evaluate(self, task: dict[str, Any], root: Path, details: dict[str, Any]) -> Verdict:
        fail_to_pass = task_test_ids(task, "FAIL_TO_PASS")
        pass_to_pass = task_test_ids(task, "PASS_TO_PASS")
        base = read_files(REPOS / task["instance_id"])
        details["model_patch"] = model_patch(base, read_files(root))
        try:
            write_test_files(root, base, task["test_patch"], [*fail_to_pass, *pass_to_pass])
        except PatchError as exc:
            return Verdict(0.0, failure_kind=BAD_TEST_PATCH, details={**details, "error": str(exc)})
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
        failure_kind = None
        if not resolved:
            failure_kind = TEST_TIMEOUT if result.timed_out else TESTS_FAILED
            if result.returncode is None and not result.timed_out:
                failure_kind = SANDBOX_ERROR
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


# --------------------------------------------------------------------- repositories
def read_files(root: Path) -> dict[str, str]:
    """Every text file under ``root`` by POSIX relative path (caches and undecodable files skipped)."""
    files: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            path = Path(folder, name)
            # Symlinks, FIFOs and big files (the model may have left any) are not source code.
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            try:
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
    return files


def repo_hash(root: Path) -> str:
    """A 40-hex content hash of a repository folder, used as its ``base_commit``."""
    digest = hashlib.sha1()
    for path, text in sorted(read_files(root).items()):
        digest.update(f"{path}\0{len(text.encode())}\0".encode())
        digest.update(text.encode())
    return digest.hexdigest()


def checkout(instance_id: str) -> Path:
    """A fresh copy of the task's repository in a new temporary directory."""
    root = Path(tempfile.mkdtemp(prefix=f"gym_llm_mini_swe_{instance_id}_"))
    shutil.copytree(
        REPOS / instance_id, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_SKIPPED_DIRS)
    )
    return root


def remove_tree(root: Path) -> None:
    """Delete ``root``, even where the model removed write permissions."""
    if not root.exists():
        return
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            path = Path(folder, name)
            if not path.is_symlink():
                try:
                    path.chmod(0o700)
                except OSError:
                    pass
    shutil.rmtree(root, ignore_errors=True)


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


# --------------------------------------------------------------------- tests
def task_test_ids(task: Mapping[str, Any], key: str) -> list[str]:
    """``task[key]`` as a list of test ids (rows may hold it as a JSON string)."""
    value = task.get(key) or []
    return list(json.loads(value) if isinstance(value, str) else value)


def _valid_test_id(test_id: str) -> bool:
    path, sep, name = test_id.partition("::")
    parts = path.split("/")
    return (
        bool(sep and name and path.endswith(".py")) and not path.startswith(("/", "-")) and ".." not in parts
    )


def write_test_files(root: Path, base: Mapping[str, str], test_patch: str, ids: Iterable[str]) -> None:
    """Restore the test files the ids name and apply ``test_patch`` to their pristine versions.

    Raises:
        PatchError: ``test_patch`` does not apply to the repository.
    """
    patched = apply_patch(base, test_patch)
    paths = set(patched) | {test_id.partition("::")[0] for test_id in ids}
    for path in sorted(paths):
        content = patched[path] if path in patched else base.get(path)
        target = _clear_path(root, path)
        if content is not None:
            target.write_text(content, encoding="utf-8")


def _clear_path(root: Path, path: str) -> Path:
    """``root / path`` with real folders above it and nothing at it.

    This runs outside the sandbox, so a symlink the model planted (``tests -> /etc``) must not
    be followed: every symlink or non-folder on the way is removed first.
    """
    current = root
    *folders, name = path.split("/")
    for folder in folders:
        current = current / folder
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
    target = current / name
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        remove_tree(target)
    return target


def junit_key(test_id: str) -> tuple[str, str]:
    """The (classname, name) pytest writes to JUnit XML for a node id."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def junit_outcomes(report: Path) -> dict[tuple[str, str], str]:
    """``{(classname, name): "passed" | "failed" | "skipped"}`` from pytest's JUnit XML report."""
    if report.is_symlink() or not report.is_file() or report.stat().st_size > 10_000_000:
        return {}
    try:
        tree = ET.parse(report)
    except ET.ParseError:
        return {}
    outcomes: dict[tuple[str, str], str] = {}
    for case in tree.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes[key] = "failed"  # a teardown error after a pass still fails the test
        elif case.find("skipped") is not None:
            outcomes.setdefault(key, "skipped")
        else:
            outcomes.setdefault(key, "passed")
    return outcomes


def _fraction(status: Mapping[str, list[str]]) -> float:
    total = len(status["success"]) + len(status["failure"])
    return len(status["success"]) / total if total else 1.0


def replay_commands(output: list[dict[str, Any]], validate: Any) -> list[tuple[str, str]]:
    """The ``(command, recorded output)`` of each ``bash`` call that ran, in order.

    A call ran if a ``function_call_output`` answers it and its arguments pass the tool's own
    validation (so malformed calls, which the live episode refused, are skipped here too).
    """
    answered = {
        item.get("call_id"): item.get("output")
        for item in output
        if item.get("type") == "function_call_output"
    }
    commands = []
    for call in it.function_calls(output, "bash"):
        if call.get("call_id") not in answered:
            continue
        args = it.parse_arguments(call)
        if args is None:
            continue
        try:
            command = validate(args)["command"]
        except ValueError:  # pydantic's ValidationError
            continue
        recorded = answered[call.get("call_id")]
        commands.append((command, recorded if isinstance(recorded, str) else ""))
    return commands


# --------------------------------------------------------------------- diffs
def file_diff(path: str, old: str | None, new: str | None) -> str:
    """A git-style unified diff of one file (``None``: the file does not exist on that side)."""
    if old == new:
        return ""
    header = f"diff --git a/{path} b/{path}\n"
    if old is None:
        header += "new file mode 100644\n"
    elif new is None:
        header += "deleted file mode 100644\n"
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        "/dev/null" if old is None else f"a/{path}",
        "/dev/null" if new is None else f"b/{path}",
    )
    body = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return header + body


def model_patch(base: Mapping[str, str], current: Mapping[str, str]) -> str:
    """The diff from ``base`` to ``current`` (cut at ``MODEL_PATCH_CHARS``)."""
    paths = sorted(set(base) | set(current))
    diff = "".join(file_diff(p, base.get(p), current.get(p)) for p in paths)
    return diff if len(diff) <= MODEL_PATCH_CHARS else diff[:MODEL_PATCH_CHARS] + "\n[... cut ...]\n"


def apply_patch(files: Mapping[str, str], diff: str) -> dict[str, str | None]:
    """Apply a unified diff to file contents.

    Args:
        files: Current contents by relative path.
        diff: A unified diff with ``a/``/``b/`` prefixes (``git diff`` or ``diff -u`` output).

    Returns:
        The new contents of every file the diff touches (``None`` for a deleted file).

    Raises:
        PatchError: A hunk does not match, a file is missing, or a path leaves the repository.
    """
    lines = diff.splitlines(keepends=True)
    result: dict[str, str | None] = {}
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old_path, new_path = _diff_path(lines[i][4:]), _diff_path(lines[i + 1][4:])
        i += 2
        if old_path is None:
            text: list[str] = []
        else:
            source = result[old_path] if old_path in result else files.get(old_path)
            if source is None:
                raise PatchError(f"{old_path}: no such file")
            text = source.splitlines(keepends=True)
        cursor, offset = 0, 0
        while i < len(lines) and lines[i].startswith("@@"):
            hunk, i = _read_hunk(lines, i)
            start, old_block, new_block = hunk
            at = _find_block(text, old_block, start + offset, cursor)
            if at is None:
                raise PatchError(f"{new_path or old_path}: hunk at line {start + 1} does not match")
            text[at : at + len(old_block)] = new_block
            offset = at + len(new_block) - len(old_block) - start
            cursor = at + len(new_block)
        if old_path is not None and new_path != old_path:
            result[old_path] = None
        if new_path is not None:
            result[new_path] = "".join(text)
    return result


def _diff_path(raw: str) -> str | None:
    path = raw.rstrip("\r\n").split("\t")[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or "" in parts:
        raise PatchError(f"unsafe or empty path in diff: {raw.strip()!r}")
    return path


def _read_hunk(lines: list[str], i: int) -> tuple[tuple[int, list[str], list[str]], int]:
    """One hunk starting at ``lines[i]``: (0-based old start, old lines, new lines), next index."""
    match = _HUNK.match(lines[i])
    if match is None:
        raise PatchError(f"bad hunk header: {lines[i].strip()!r}")
    old_start, old_count = int(match.group(1)), int(match.group(2) or 1)
    new_count = int(match.group(4) or 1)
    start = old_start if old_count == 0 else old_start - 1
    old: list[str] = []
    new: list[str] = []
    last = ""
    i += 1
    while i < len(lines) and (len(old) < old_count or len(new) < new_count or lines[i].startswith("\\")):
        line = lines[i]
        tag, body = (line[0], line[1:]) if line.strip("\r\n") else (" ", line)
        if tag == "\\":  # "\ No newline at end of file" belongs to the line before it
            if last in " -" and old:
                old[-1] = old[-1].rstrip("\r\n")
            if last in " +" and new:
                new[-1] = new[-1].rstrip("\r\n")
        elif tag == " ":
            old.append(body)
            new.append(body)
        elif tag == "-":
            old.append(body)
        elif tag == "+":
            new.append(body)
        else:
            raise PatchError(f"bad line in hunk: {line.strip()!r}")
        last = tag if tag != "\\" else last
        i += 1
    if len(old) != old_count or len(new) != new_count:
        raise PatchError("hunk is shorter than its header says")
    return (start, old, new), i


def _find_block(text: list[str], block: list[str], guess: int, cursor: int) -> int | None:
    """Where ``block`` sits in ``text``: at ``guess`` if it matches there, else the nearest match."""
    size = len(block)
    candidates = range(cursor, len(text) - size + 1)
    if guess in candidates and text[guess : guess + size] == block:
        return guess
    matches = [at for at in candidates if text[at : at + size] == block]
    return min(matches, key=lambda at: abs(at - guess)) if matches else None


def write_files_command(files: Mapping[str, str | None]) -> str:
    """A bash command that writes (or deletes, for ``None``) each file, with quoted heredocs."""
    parts = []
    for path, content in sorted(files.items()):
        quoted = shlex.quote(path)
        if content is None:
            parts.append(f"rm -f {quoted}")
            continue
        marker = "GYM_LLM_EOF"
        while marker in content:
            marker += "_"
        folder = os.path.dirname(path)
        mkdir = f"mkdir -p {shlex.quote(folder)} && " if folder else ""
        body = content if content.endswith("\n") else content + "\n"
        parts.append(f"{mkdir}cat > {quoted} <<'{marker}'\n{body}{marker}")
        if not content.endswith("\n"):
            parts.append(f"truncate -s -1 {quoted}")
    return "\n".join(parts)


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
