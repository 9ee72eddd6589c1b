"""The env author's conformance checker: ``gym_llm.check(env_id)`` and ``gym-llm check ENV_ID``.

Each check plays real episodes of the env and reports one line, with the reason when it fails:

==================  ======================================================================
``check_env``       gymnasium's own ``check_env`` passes on the unwrapped env
``schemas``         every tool schema (the env's and the rows') is valid JSON Schema
``reference``       the reference solution reaches reward 1 on every task
``rerun``           ``verify`` is deterministic and re-verifies the env's own rollouts
``no_leaks``        an episode after a messy one equals the same episode in a fresh env
``global_rng``      ``random`` and ``numpy.random``'s global state are never touched
``bounded``         observations and memory stay bounded over many episodes
``fuzz``            fuzzed and malformed actions never raise (needs ``hypothesis``)
==================  ======================================================================

Example:
    >>> report = check("llm/Weather-v0", episodes=50, fuzz_examples=10)
    >>> report.ok, [result.name for result in report.results][:3]
    (True, ['check_env', 'schemas', 'reference'])
"""

from __future__ import annotations

import json
import pickle
import random
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gym_llm import items as it
from gym_llm.env import LLMEnv
from gym_llm.registry import make_llm_env

# memory an env may gain between its 10th and its last checked episode (caches warm up first)
MEMORY_ALLOWANCE = 2 * 1024 * 1024


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, whether it passed, and why not (or what it measured)."""

    name: str
    passed: bool
    message: str = ""

    def __str__(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name:11} {self.message}".rstrip()


@dataclass
class CheckReport:
    """Every check's result for one env."""

    env_id: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return all(result.passed for result in self.results)

    def __str__(self) -> str:
        return "\n".join(str(result) for result in self.results)


class CheckFailed(Exception):
    """A check's failure, with the reason shown to the author."""


def check(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    episodes: int = 1000,
    fuzz_examples: int = 200,
    only: list[str] | None = None,
) -> CheckReport:
    """Run the conformance checks on ``env_id``.

    Args:
        env_id: A registered env id (``module:id`` imports the module first).
        env_kwargs: Constructor arguments for ``gymnasium.make`` (e.g. a judge).
        episodes: Episodes of the boundedness check.
        fuzz_examples: Fuzzed episodes.
        only: Names of the checks to run (default: all).

    Returns:
        A :class:`CheckReport`; failures are reported, never raised.
    """
    kwargs = dict(env_kwargs or {})
    made: list[LLMEnv] = []

    def make() -> LLMEnv:
        env = make_llm_env(env_id, **kwargs)
        made.append(env)
        return env

    checks: dict[str, Callable[[], str]] = {
        "check_env": lambda: _check_env(make),
        "schemas": lambda: _schemas(make),
        "reference": lambda: _reference(make),
        "rerun": lambda: _rerun(make),
        "no_leaks": lambda: _no_leaks(make),
        "global_rng": lambda: _global_rng(make),
        "bounded": lambda: _bounded(make, episodes),
        "fuzz": lambda: _fuzz(make, fuzz_examples),
    }
    unknown = set(only or ()) - set(checks)
    if unknown:
        raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(checks)}")
    report = CheckReport(env_id)
    for name, run in checks.items():
        if only and name not in only:
            continue
        try:
            report.results.append(CheckResult(name, True, run()))
        except CheckFailed as exc:
            report.results.append(CheckResult(name, False, str(exc)))
        except Exception as exc:  # the env itself broke: that is the finding
            report.results.append(CheckResult(name, False, f"raised {type(exc).__name__}: {exc}"))
        finally:
            while made:  # free what the check's envs hold (work directories, worker processes)
                made.pop().close()
    return report


# --------------------------------------------------------------------------- episodes
def _play_reference(env: LLMEnv, task_index: int, max_steps: int = 100) -> tuple[float, dict[str, Any], list]:
    """One reference episode: its reward, final info, and every observation seen."""
    obs, _ = env.reset(options={"task_index": task_index})
    seen = [obs]
    assert env.task is not None
    for _ in range(max_steps):
        obs, reward, terminated, truncated, info = env.step(env.reference_action(env.task, obs))
        seen.append(obs)
        if terminated or truncated:
            return float(reward), info, seen
    raise CheckFailed(f"task {task_index}: the reference solution did not finish in {max_steps} steps")


def _messy_episode(env: LLMEnv) -> None:
    """An episode of bad calls and junk that a leaky env would remember."""
    env.reset(options={"task_index": len(env.tasks) - 1})
    for name in [*env.tools, "no_such_tool"][:4]:
        env.step([it.function_call(name, '{"junk": [1, 2, 3]}', f"junk_{name}")])
        if env.done:
            return
    env.finish("I give up.")


# --------------------------------------------------------------------------- checks
def _check_env(make: Callable[[], LLMEnv]) -> str:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(make(), skip_render_check=True)
    return ""


def _schemas(make: Callable[[], LLMEnv]) -> str:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    env = make()
    schemas = [("env", schema) for schema in env.default_tool_schemas]
    for index, task in enumerate(env.tasks):
        schemas += [(f"row {index}", schema) for schema in task["responses_create_params"].get("tools") or ()]
    for origin, schema in schemas:
        name = schema.get("name") or schema.get("function", {}).get("name")
        parameters = schema.get("parameters") or schema.get("function", {}).get("parameters")
        if not isinstance(name, str) or not name:
            raise CheckFailed(f"{origin}: a tool schema has no name: {json.dumps(schema)[:200]}")
        if parameters is None:
            continue
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            raise CheckFailed(f"{origin}: tool {name!r}: invalid JSON Schema: {exc.message}") from None
    return f"{len(schemas)} schemas"


def _reference(make: Callable[[], LLMEnv]) -> str:
    env = make()
    for index in range(len(env.tasks)):
        reward, info, _ = _play_reference(env, index)
        if reward != 1.0:
            raise CheckFailed(
                f"task {index}: the reference solution got reward {reward} "
                f"(failure_kind {info.get('failure_kind')!r}, details {str(info.get('details'))[:200]})"
            )
    return f"reward 1.0 on all {len(env.tasks)} tasks"


def _rerun(make: Callable[[], LLMEnv]) -> str:
    env, other = make(), make()
    for index in range(len(env.tasks)):
        reward, _, _ = _play_reference(env, index)
        assert env.task is not None
        row = {**env.task, "response": {"output": it.copy_json(env.response["output"])}}
        first, second = env.verify_row(row).reward, other.verify_row(row).reward
        if not first == second == reward:
            raise CheckFailed(
                f"task {index}: the episode's reward {reward}, re-verified {first}, then again {second}"
            )
    return ""


def _no_leaks(make: Callable[[], LLMEnv]) -> str:
    env = make()
    expected = [_play_reference(make(), index) for index in range(len(env.tasks))]  # a fresh env each
    for index, (reward, _, seen) in enumerate(expected):
        _messy_episode(env)
        again, _, seen_again = _play_reference(env, index)
        if (again, _strip_ids(seen_again)) != (reward, _strip_ids(seen)):
            raise CheckFailed(f"task {index}: after another episode it plays differently than in a fresh env")
    return ""


def _global_rng(make: Callable[[], LLMEnv]) -> str:
    # the caller's own RNG states, compared (never reset) around the env's episodes
    before = (random.getstate(), _numpy_rng_state())
    env = make()
    for seed in range(3):
        env.reset(seed=seed)
    for index in range(len(env.tasks)):
        _play_reference(env, index)
    _messy_episode(env)
    after = (random.getstate(), _numpy_rng_state())
    if before[0] != after[0]:
        raise CheckFailed("the env used the global `random` module's RNG (use self.np_random)")
    if before[1] != after[1]:
        raise CheckFailed("the env used numpy's global RNG (use self.np_random)")
    return ""


def _numpy_rng_state() -> bytes:
    """numpy's global RNG state (the legacy ``np.random`` functions use it), as comparable bytes."""
    return pickle.dumps(np.random.get_state(legacy=False))


def _bounded(make: Callable[[], LLMEnv], episodes: int) -> str:
    env = make()
    sizes: dict[int, int] = {}
    tracemalloc.start()
    try:
        baseline = 0
        for episode in range(episodes):
            index = episode % len(env.tasks)
            _, _, seen = _play_reference(env, index)
            size = len(json.dumps(seen[0], default=repr))
            if sizes.setdefault(index, size) != size:
                raise CheckFailed(f"episode {episode}: task {index}'s first observation grew to {size} chars")
            if episode == min(10, episodes - 1):
                baseline = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    if grown > MEMORY_ALLOWANCE:
        raise CheckFailed(f"memory grew by {grown / 1024:.0f} KiB over {episodes} episodes")
    return f"{episodes} episodes, memory {grown / 1024:+.0f} KiB after warm-up"


def _fuzz(make: Callable[[], LLMEnv], examples: int) -> str:
    try:
        from gym_llm.fuzz import fuzz_env
    except ImportError:  # pragma: no cover - hypothesis is in the dev extra
        raise CheckFailed("needs hypothesis: pip install hypothesis") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = fuzz_env(make(), examples=examples, seed=0)
    if not report.ok:
        raise CheckFailed(
            f"{report.escapes} escapes, {report.unbounded} unbounded, {report.nondeterministic} "
            f"nondeterministic in {report.episodes} episodes; first: {report.failures[0][-600:]}"
        )
    return f"{report.episodes} episodes, {report.steps} actions"


def _strip_ids(observations: list[Any]) -> str:
    """Observations as text without the ids that differ between runs (``id`` fields)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "id"}
        if isinstance(value, (list, tuple)):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(observations), sort_keys=True, default=repr)
