"""The task repositories shipped in ``data/repos/``: reading, hashing, copying and removing them."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from .patches import apply_patch

DATA = Path(__file__).parent / "data"
REPOS = DATA / "repos"
HIDDEN_TESTS = DATA / "hidden_tests"
MAX_FILE_BYTES = 1_000_000

_SKIPPED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".git"})


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
