"""What the sub-commands share: the user-error type, argument types and env-id checks."""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
from typing import Any

import gymnasium

import gym_llm


class CLIError(Exception):
    """A user error: printed as one line, exit status 1."""


def positive_int(text: str) -> int:
    """An ``argparse`` type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """An ``argparse`` type: a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def import_modules(modules: list[str] | None) -> None:
    """Import the modules named by ``--import`` (they register their own envs with gymnasium)."""
    for module in modules or ():
        _import(module, "--import")


def check_env_id(env_id: str) -> None:
    """Raise :class:`CLIError` if ``env_id`` names no registered env, suggesting close ids.

    ``module:id`` (gymnasium's form) imports ``module`` first, so an env it registers is found.
    """
    module, _, name = env_id.rpartition(":")
    if module:
        _import(module, env_id)
    if name in gymnasium.registry:
        return
    ids = list(gymnasium.registry)
    close = difflib.get_close_matches(name, ids, n=2, cutoff=0.8)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise CLIError(
        f"unknown env {name!r}; {hint}registered llm/ envs: {', '.join(gym_llm.env_ids())} "
        "(an env of your own: pass MODULE:ID or --import MODULE)"
    )


def _import(module: str, what: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise CLIError(f"{what}: cannot import module {module!r}: {exc}") from None
