"""Property-based fuzzing of an env's ``step`` with the malformed turns real models produce.

:func:`actions` is a hypothesis strategy over every action form the env accepts and many it does
not: Responses items (valid, mutated, wrong types), Chat Completions messages, Hermes text with
broken ``<tool_call>`` JSON, huge and odd strings, and values that are no turn at all. Calls name
the env's own tools as often as unknown ones, with arguments that fit, do not fit, or are no JSON.

:func:`fuzz_env` plays whole episodes with such actions and checks three properties:

- nothing escapes ``step`` (every malformed turn becomes a tool error or an invalid-action ending);
- observations stay bounded (the conversation grows only by what the turns and outputs add);
- ``verify`` is deterministic: re-verifying the finished episode gives the same reward.

Needs ``hypothesis`` (in the ``dev`` extra).

Example:
    >>> import gymnasium as gym, gym_llm
    >>> report = fuzz_env(gym.make("llm/Weather-v0").unwrapped, examples=20, seed=0)
    >>> report.escapes, report.episodes
    (0, 20)
"""

from __future__ import annotations

import json
import math
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gym_llm import items as it
from gym_llm.failures import INVALID_ACTION

# one action may add at most this many characters to the conversation beyond its own size (tool
# outputs are capped by the envs; an error message is short)
OUTPUT_ALLOWANCE = 200_000


@dataclass
class FuzzReport:
    """What a fuzzing run found.

    Attributes:
        episodes: Episodes played.
        steps: Actions stepped.
        escapes: Exceptions that escaped ``step``/``verify`` (should be 0).
        unbounded: Observations that grew beyond what the actions and outputs explain.
        nondeterministic: Episodes whose re-verification gave another reward.
        failures: The first few problems, with a traceback or a description.
    """

    episodes: int = 0
    steps: int = 0
    escapes: int = 0
    unbounded: int = 0
    nondeterministic: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run found no problem."""
        return not (self.escapes or self.unbounded or self.nondeterministic)

    def record(self, kind: str, message: str) -> None:
        """Count a problem of ``kind`` (an attribute name) and keep the first few messages."""
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.failures) < 5:
            self.failures.append(f"{kind}: {message}")


def actions(tool_names: Sequence[str]) -> Any:
    """A hypothesis strategy of model turns, well- and ill-formed, for an env with ``tool_names``."""
    from hypothesis import strategies as st

    odd_text = st.one_of(
        st.text(max_size=200),
        st.sampled_from(["", " ", "\x00", "\ud800", "<tool_call>", "</think>", "{}", "null", "💥" * 50]),
        st.integers(1_000, 200_000).map(lambda n: "x" * n),
    )
    names = st.one_of(st.sampled_from(list(tool_names) or ["none"]), st.text(max_size=30), st.just(""))
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=12,
    )
    arguments = st.one_of(
        st.dictionaries(st.text(max_size=12), json_values, max_size=4).map(json.dumps),
        json_values.map(lambda v: json.dumps(v, allow_nan=True)),
        odd_text,
        json_values,  # not even a string
    )
    call_ids = st.one_of(st.just("call_0"), st.text(max_size=8), st.none(), st.integers())
    function_call = st.fixed_dictionaries(
        {"type": st.just("function_call"), "name": names, "arguments": arguments, "call_id": call_ids}
    )
    message = st.fixed_dictionaries(
        {
            "type": st.just("message"),
            "role": st.sampled_from(["assistant", "user", "system", "tool", ""]),
            "content": st.one_of(
                odd_text, st.lists(st.fixed_dictionaries({"type": st.just("output_text"), "text": odd_text}))
            ),
        }
    )
    reasoning = st.fixed_dictionaries(
        {
            "type": st.just("reasoning"),
            "summary": st.lists(st.fixed_dictionaries({"text": odd_text}), max_size=2),
        }
    )
    junk_item = st.one_of(
        st.dictionaries(
            st.sampled_from(["type", "name", "role", "content", "output"]), json_values, max_size=4
        ),
        json_values,
    )
    items = st.lists(st.one_of(function_call, message, reasoning, junk_item), max_size=5)
    hermes_call = st.builds(
        lambda name, args: f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {args}}}</tool_call>',
        names,
        st.one_of(arguments.map(lambda a: a if isinstance(a, str) else json.dumps(a)), st.just("{")),
    )
    hermes_text = st.lists(st.one_of(hermes_call, odd_text, st.just("<think>hmm</think>")), max_size=4).map(
        "".join
    )
    chat_call = st.fixed_dictionaries(
        {
            "id": call_ids,
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": names, "arguments": arguments}),
        }
    )
    chat_message = st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.one_of(st.none(), odd_text),
            "tool_calls": st.one_of(st.none(), st.lists(chat_call, max_size=3), json_values),
        }
    )
    response = st.fixed_dictionaries({"output": st.one_of(items, json_values)})
    return st.one_of(hermes_text, items, chat_message, response, json_values, st.tuples(function_call))


def fuzz_env(env: Any, *, examples: int = 100, seed: int = 0, max_actions: int | None = None) -> FuzzReport:
    """Play ``examples`` fuzzed episodes of ``env`` (an unwrapped :class:`~gym_llm.env.LLMEnv`).

    Args:
        env: The env; its tasks are drawn with ``seed``.
        examples: Episodes to play.
        seed: Seeds hypothesis and the task draw, so a run repeats.
        max_actions: Actions per episode at most (default: the env's ``max_turns``).

    Returns:
        A :class:`FuzzReport`; problems are counted, never raised.
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    report = FuzzReport()
    turns = max_actions or env.max_turns
    strategy = st.lists(actions(tuple(env.tools)), min_size=1, max_size=turns)

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(episode=strategy, task_draw=st.integers(0, 2**31 - 1))
    def play(episode: list[Any], task_draw: int) -> None:
        _play_one(env, episode, task_draw, report)

    play()
    return report


def _play_one(env: Any, episode: list[Any], task_draw: int, report: FuzzReport) -> None:
    report.episodes += 1
    try:
        obs, _ = env.reset(seed=task_draw)
    except Exception:
        report.record("escapes", "reset: " + _error())
        return
    size = _size(obs)
    reward, done, info = 0.0, False, {}
    for action in episode:
        report.steps += 1
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except Exception:
            report.record("escapes", f"step({_short(action)}): " + _error())
            return
        new_size = _size(obs)
        if new_size > size + _size(action) + OUTPUT_ALLOWANCE:
            report.record("unbounded", f"observation grew {new_size - size} chars on {_short(action)}")
        size = new_size
        if terminated or truncated:
            done = True
            break
    if not done:
        try:
            reward, info = env.finish()
        except Exception:
            report.record("escapes", "finish: " + _error())
            return
    if info.get("failure_kind") != INVALID_ACTION:  # such an episode ends unverified, with reward 0
        _check_determinism(env, float(reward), report)


def _check_determinism(env: Any, reward: float, report: FuzzReport) -> None:
    row = {**env.task, "response": {"output": it.copy_json(env.response["output"])}}
    try:
        again = env.verify_row(row).reward
    except Exception:
        report.record("escapes", "verify: " + _error())
        return
    if not (again == reward or (math.isnan(again) and math.isnan(reward))):
        report.record("nondeterministic", f"reward {reward} then {again}")


def _error() -> str:
    """The exception being handled, with its innermost frames (where it was raised)."""
    return traceback.format_exc(limit=-4)


def _size(value: Any) -> int:
    try:
        return len(json.dumps(value, default=repr, allow_nan=True))
    except (TypeError, ValueError, RecursionError):
        return len(repr(value))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "…"
