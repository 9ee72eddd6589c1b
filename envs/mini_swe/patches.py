"""A small unified-diff engine: make git-style diffs of file contents, apply them, write files.

Enough for SWE-bench-style gold and test patches (``git diff`` or ``diff -u`` output with
``a/``/``b/`` prefixes): edits, new and deleted files, hunks found near their stated line when
earlier edits moved them. Paths that leave the repository are refused.

Example:
    >>> patch = file_diff("a.txt", "one\\ntwo\\n", "one\\n2\\n")
    >>> apply_patch({"a.txt": "one\\ntwo\\n"}, patch)
    {'a.txt': 'one\\n2\\n'}
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections.abc import Mapping

MODEL_PATCH_CHARS = 100_000

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A unified diff that does not apply to the files it names."""


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
