"""Pytest test ids (``tests/test_x.py::test_y``) and their outcomes in pytest's JUnit XML report."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def task_test_ids(task: Mapping[str, Any], key: str) -> list[str]:
    """``task[key]`` as a list of test ids (rows may hold it as a JSON string)."""
    value = task.get(key) or []
    return list(json.loads(value) if isinstance(value, str) else value)


def valid_test_id(test_id: str) -> bool:
    """Whether ``test_id`` names a test function in a ``.py`` file inside the repository."""
    path, sep, name = test_id.partition("::")
    parts = path.split("/")
    return (
        bool(sep and name and path.endswith(".py")) and not path.startswith(("/", "-")) and ".." not in parts
    )


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
