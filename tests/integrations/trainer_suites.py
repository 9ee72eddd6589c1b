"""Trainer suites run only where their trainer is installed (``pip install -e .[trl]`` / ``[verl]``).

Elsewhere they are skipped with the reason. CI runs each suite in its own environment with
``GYM_LLM_REQUIRE_TRAINERS`` naming the suites that must run there (e.g. ``trl``): a skip of one of
those is turned into a failure, so a broken install cannot pass as a skipped suite.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

REQUIRED = {
    name.strip() for name in os.environ.get("GYM_LLM_REQUIRE_TRAINERS", "").split(",") if name.strip()
}


def require(suite: str, *modules: str) -> None:
    """Skip the calling test module unless ``modules`` import; fail instead where CI requires ``suite``."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if not missing:
        return
    reason = (
        f"the {suite} suite needs {', '.join(missing)}: it runs where torch and gym-llm[trl] or "
        "gym-llm[verl] are installed (see .ci/run)"
    )
    if suite in REQUIRED:
        pytest.fail(f"GYM_LLM_REQUIRE_TRAINERS={suite} but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
