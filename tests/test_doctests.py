"""Every module of the installed package imports, and every docstring example in it runs and passes.

Modules are found and imported under their installed names (``gym_llm.envs.weather.env``), not by
path: ``envs/``, ``wrappers/`` and ``integrations/`` install inside the ``gym_llm`` namespace, and
``envs/mini_swe/data/`` holds task repositories that are data, not modules of ours.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gym_llm
import gym_llm.envs
import gym_llm.integrations
import gym_llm.wrappers

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def package_modules() -> list[str]:
    """The modules under each root of the package (setup.cfg's package_dir), entry scripts aside."""
    names: set[str] = set()
    for package in (gym_llm, gym_llm.envs, gym_llm.wrappers, gym_llm.integrations):
        names.add(package.__name__)
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            names.add(module.name)
    return sorted(
        name for name in names if not name.endswith(".__main__") and ".data." not in f"{name}."
    )


MODULES = package_modules()


def test_every_root_and_env_is_found():
    assert {"gym_llm.sync", "gym_llm.wrappers.vector", "gym_llm.envs.weather.env"} <= set(MODULES)
    assert not [name for name in MODULES if ".data" in name]


@pytest.mark.parametrize("name", MODULES)
def test_module_imports_and_its_examples_pass(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(report)
