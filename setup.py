"""Packages under each root of setup.cfg's ``package_dir``, so new env folders need no listing."""

from setuptools import find_packages, setup

ROOTS = {
    "gym_llm": "gym_llm",
    "gym_llm.envs": "envs",
    "gym_llm.wrappers": "wrappers",
    "gym_llm.integrations": "integrations",
}

# an env's data/ may hold whole task repositories: never packages of ours
EXCLUDE = ["*.data", "*.data.*"]

setup(
    packages=[
        name
        for prefix, folder in ROOTS.items()
        for name in (prefix, *(f"{prefix}.{sub}" for sub in find_packages(folder, exclude=EXCLUDE)))
    ]
)
