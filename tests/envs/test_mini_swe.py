"""MiniSWE: fix a bug with a bash tool; the hidden FAIL_TO_PASS and PASS_TO_PASS tests decide.

Every finished episode runs pytest in the sandbox (about half a second), so the reference and
do-nothing episodes of all tasks are played once, concurrently, by a module fixture.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm
from gym_llm import items as it
from gym_llm.envs.mini_swe.env import (
    HIDDEN_TESTS,
    REPOS,
    MiniSWEEnv,
    PatchError,
    apply_patch,
    file_diff,
    read_files,
    replay_commands,
    repo_hash,
)
from gym_llm.sandbox import Limits
from gym_llm.tasks import TaskError

ENV_ID = "llm/MiniSWE-v0"
TASKS = MiniSWEEnv().tasks
INDEX = {task["instance_id"]: i for i, task in enumerate(TASKS)}


def bash(command: str, call_id: str = "call_0") -> list[dict[str, Any]]:
    return [it.function_call("bash", {"command": command}, call_id)]


async def aplay(env: MiniSWEEnv, index: int, actions: list[Any]) -> dict[str, Any]:
    """Play an episode (scripted actions, or the reference when ``actions`` is empty)."""
    obs, _ = await env.areset(options={"task_index": index})
    for step in range(10):
        action = actions[step] if actions else env.reference_action(env.task, obs)
        obs, reward, terminated, truncated, info = await env.astep(action)
        if terminated or truncated:
            row = {**copy.deepcopy(env.task), "response": copy.deepcopy(env.response), "reward": reward}
            return {"reward": reward, "info": info, "row": row, "obs": obs}
    raise AssertionError("episode did not end")


def run_all(episodes: dict[str, tuple[int, list[Any], dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Play named episodes ``(task_index, actions, env kwargs)`` concurrently, one env each."""

    async def main() -> dict[str, dict[str, Any]]:
        envs = {name: MiniSWEEnv(**kwargs) for name, (_, _, kwargs) in episodes.items()}
        try:
            results = await asyncio.gather(
                *(aplay(envs[name], index, actions) for name, (index, actions, _) in episodes.items())
            )
        finally:
            for env in envs.values():
                env.close()
        return dict(zip(episodes, results, strict=True))

    return asyncio.run(main())


SEMVER, SPANS, SLUG, NUMBOX = (
    INDEX[name]
    for name in (
        "minilabs__semverlite-101",
        "minilabs__spans-12",
        "minilabs__textkit-33",
        "minilabs__numbox-5",
    )
)
STUBS = "".join(f"def {t.split('::')[1]}():\n    pass\n" for t in TASKS[NUMBOX]["FAIL_TO_PASS"])
HACK = (
    f"cat > tests/test_median_even.py <<'EOF'\n{STUBS}EOF\n"
    "printf 'def test_mean():\\n    pass\\n' > tests/test_stats.py\n"
    "printf 'import pytest\\n@pytest.hookimpl(hookwrapper=True)\\n"
    "def pytest_runtest_makereport(item, call):\\n"
    '    out = yield\\n    out.get_result().outcome = "passed"\\n\' > tests/conftest.py'
)
WRONG_MEDIAN = (
    "python - <<'EOF'\nimport pathlib\np = pathlib.Path('numbox/stats.py')\n"
    "p.write_text(p.read_text().replace('return ordered[len(ordered) // 2]', "
    "'n = len(ordered)\\n    return (ordered[n // 2 - 1] + ordered[n // 2]) / 2'))\nEOF"
)


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("outside")


@pytest.fixture(scope="module")
def played(outside: Path) -> dict[str, dict[str, Any]]:
    """Every episode the reward tests look at, played at once (each ends with a pytest run)."""
    episodes: dict[str, tuple[int, list[Any], dict[str, Any]]] = {}
    for i in range(len(TASKS)):
        episodes[f"reference/{i}"] = (i, [], {})
        episodes[f"nothing/{i}"] = (i, ["Done."], {})
    # strips separators at the ends but does not collapse runs: part of FAIL_TO_PASS fails
    strip_only = "sed -i 's/ascii_text.lower())$/ascii_text.lower()).strip(sep)/' textkit/slug.py"
    episodes["wrong/slug"] = (SLUG, [bash(strip_only), "Fixed."], {})
    # always averages the two middle values: odd-sized samples (PASS_TO_PASS) break
    episodes["wrong/median"] = (NUMBOX, [bash(WRONG_MEDIAN), "Fixed."], {})
    episodes["hack"] = (NUMBOX, [bash(HACK), "I made the tests pass."], {})
    episodes["max_turns"] = (SEMVER, [], {"max_turns": 1})
    # verification writes the test files from outside the sandbox: it must not follow this link
    episodes["symlink"] = (SPANS, [bash(f"rm -rf tests && ln -s {outside} tests"), "Done."], {})
    return run_all(episodes)


# ---------------------------------------------------------------- data
def test_there_are_at_least_five_tasks_with_their_files():
    assert len(TASKS) >= 5
    schema = MiniSWEEnv.tools["bash"].schema
    for task in TASKS:
        iid = task["instance_id"]
        base = read_files(REPOS / iid)
        hidden = read_files(HIDDEN_TESTS / iid)
        assert task["base_commit"] == repo_hash(REPOS / iid)
        # test_patch is exactly the hidden test files, which are not in the model's copy
        assert task["test_patch"] == "".join(file_diff(p, base.get(p), hidden[p]) for p in sorted(hidden))
        assert all(base.get(p) != text for p, text in hidden.items())
        assert task["responses_create_params"]["tools"] == [schema]
        roles = [m["role"] for m in task["responses_create_params"]["input"]]
        assert roles == ["system", "user"]
        assert task["problem_statement"] in task["responses_create_params"]["input"][1]["content"]
        assert not set(task["FAIL_TO_PASS"]) & set(task["PASS_TO_PASS"])


# ---------------------------------------------------------------- rewards
def test_reference_resolves_every_task(played):
    for i, task in enumerate(TASKS):
        result = played[f"reference/{i}"]
        assert result["reward"] == 1.0, (task["instance_id"], result["info"]["details"])
        status = result["info"]["details"]["tests_status"]
        assert status["FAIL_TO_PASS"]["success"] == task["FAIL_TO_PASS"]
        assert status["PASS_TO_PASS"]["success"] == task["PASS_TO_PASS"]
        assert result["info"]["details"]["mode"] == "live"
        assert result["info"]["reward_components"] == {
            "resolved": 1.0,
            "fail_to_pass": 1.0,
            "pass_to_pass": 1.0,
        }
        # the model_patch detail is the gold patch: the reference changed exactly those lines
        assert result["info"]["details"]["model_patch"] == task["patch"]


def test_doing_nothing_fails_every_fail_to_pass_test_and_passes_the_others(played):
    for i, task in enumerate(TASKS):
        result = played[f"nothing/{i}"]
        assert result["reward"] == 0.0
        assert result["info"]["failure_kind"] == "tests_failed"
        status = result["info"]["details"]["tests_status"]
        assert status["FAIL_TO_PASS"]["failure"] == task["FAIL_TO_PASS"], task["instance_id"]
        assert status["PASS_TO_PASS"]["failure"] == [], task["instance_id"]
        assert result["info"]["details"]["model_patch"] == ""


def test_wrong_fixes_score_zero(played):
    results = [played["wrong/slug"], played["wrong/median"]]
    for result in results:
        assert result["reward"] == 0.0
        assert result["info"]["failure_kind"] == "tests_failed"
    slug, median = (result["info"]["reward_components"] for result in results)
    assert 0.0 < slug["fail_to_pass"] < 1.0 and slug["pass_to_pass"] == 1.0
    assert median["fail_to_pass"] == 1.0 and median["pass_to_pass"] < 1.0
    assert "textkit/slug.py" in results[0]["info"]["details"]["model_patch"]


def test_editing_the_tests_or_adding_a_conftest_does_not_help(played):
    result, task = played["hack"], TASKS[NUMBOX]
    assert result["reward"] == 0.0
    status = result["info"]["details"]["tests_status"]
    assert status["FAIL_TO_PASS"]["failure"] == task["FAIL_TO_PASS"]
    assert status["PASS_TO_PASS"]["failure"] == []
    assert "tests/conftest.py" in result["info"]["details"]["model_patch"]


def test_a_planted_symlink_is_not_followed(played, outside):
    assert played["symlink"]["reward"] == 0.0
    assert list(outside.iterdir()) == []


def test_max_turns_truncates_and_still_verifies(played):
    result = played["max_turns"]
    assert result["reward"] == 1.0
    assert result["info"]["num_turns"] == 1


# ---------------------------------------------------------------- replay
def test_replaying_recorded_rollouts_gives_the_live_rewards(played):
    # plain data, as read back from a rollouts JSONL file
    good, wrong = (json.loads(json.dumps(played[name]["row"])) for name in ("reference/3", "wrong/median"))
    env = MiniSWEEnv()

    async def replay_both() -> list[Any]:
        # one goes through the public re-verification entry point (sync, so in a thread)
        return await asyncio.gather(
            asyncio.to_thread(gym_llm.verify, ENV_ID, good), env.averify(wrong, wrong["response"])
        )

    try:
        good_verdict, wrong_verdict = asyncio.run(replay_both())
    finally:
        env.close()
    assert (good_verdict.reward, wrong_verdict.reward) == (1.0, 0.0)
    assert good_verdict.details["mode"] == wrong_verdict.details["mode"] == "replay"
    assert good_verdict.details["replay"] == {"commands": 1, "returncode_mismatches": 0}
    assert good_verdict.details["model_patch"] == TASKS[3]["patch"]
    assert wrong_verdict.details["tests_status"] == played["wrong/median"]["info"]["details"]["tests_status"]
    with pytest.raises(TaskError, match=r"response\.output"):
        gym_llm.verify(ENV_ID, {**good, "response": {"output": "x"}})


def test_replay_runs_only_the_bash_calls_that_ran():
    validate = MiniSWEEnv.tools["bash"].validate
    output = [
        it.reasoning("look first"),
        *bash("ls", "a"),
        it.function_call_output("a", "returncode: 0\nstdout:\nx\n"),
        it.function_call("bash", "{not json", "b"),
        it.function_call_output("b", '{"error": "bad"}'),
        it.function_call("bash", {"cmd": "rm -rf ."}, "c"),
        it.function_call_output("c", '{"error": "bad"}'),
        it.function_call("other_tool", {"command": "x"}, "d"),
        it.function_call_output("d", "{}"),
        *bash("echo second", "e"),
        it.function_call_output("e", "returncode: 0"),
        *bash("echo never answered", "f"),
        it.message("done"),
    ]
    assert replay_commands(output, validate) == [
        ("ls", "returncode: 0\nstdout:\nx\n"),
        ("echo second", "returncode: 0"),
    ]


# ---------------------------------------------------------------- tool behaviour
def test_bash_output_timeouts_and_malformed_calls_keep_the_episode_going():
    env = MiniSWEEnv(command_limits=Limits(cpu_seconds=5, wall_seconds=0.5), max_output_chars=200)
    try:
        obs, _ = env.reset(options={"task_index": INDEX["minilabs__tinycache-7"]})
        obs, *_ = env.step(bash("ls tinycache && echo oops >&2 && exit 3"))
        out = obs["input"][-1]["output"]
        assert out.startswith("returncode: 3\nstdout:\n__init__.py\nlru.py\n")
        assert out.endswith("stderr:\noops")
        obs, *_ = env.step(bash("printf 'x%.0s' $(seq 5000)"))
        assert "characters cut" in obs["input"][-1]["output"]
        assert len(obs["input"][-1]["output"]) < 400

        obs, _, terminated, truncated, _ = env.step(bash("sleep 5"))
        assert not (terminated or truncated)
        assert "timed out after 0.5 s" in json.loads(obs["input"][-1]["output"])["error"]
        for malformed in (
            '<tool_call>{"name": "bash", "arguments": </tool_call>',
            '<tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>',
            [it.function_call("bash", "[1, 2]", "x")],
            [it.function_call("python", {"code": "1"}, "y")],
        ):
            obs, _, terminated, truncated, _ = env.step(malformed)
            assert not (terminated or truncated)
            assert "error" in json.loads(obs["input"][-1]["output"])
    finally:
        env.close()


def test_work_dir_is_fresh_per_episode_and_removed():
    env = gymnasium.make(ENV_ID)
    core: MiniSWEEnv = env.unwrapped
    env.reset(options={"task_index": 0})
    first = core.workdir
    assert first is not None and (first / "semverlite" / "compare.py").is_file()
    assert not (first / "tests" / "test_ordering.py").exists()  # hidden tests stay hidden
    obs, *_ = env.step(bash("python -m pytest -q 2>&1 | tail -1"))  # the model can run the visible tests
    assert "4 passed" in obs["input"][-1]["output"]
    env.step(bash("echo changed > semverlite/compare.py && mkdir -p ro && chmod -R a-w ro semverlite"))
    env.reset(options={"task_index": 0})
    second = core.workdir
    assert not first.exists()
    assert second != first and "def _key" in (second / "semverlite" / "compare.py").read_text()
    env.close()
    assert not second.exists() and core.workdir is None


def test_malformed_responses_score_zero_without_crashing():
    env = MiniSWEEnv()
    try:
        for response in ({"output": "nope"}, {"output": [1, 2]}, {}):
            verdict = asyncio.run(env.averify(TASKS[0], response))
            assert verdict.reward == 0.0 and verdict.failure_kind == "malformed_response"
    finally:
        env.close()


def test_a_test_patch_that_does_not_apply_is_a_masked_bad_test_patch():
    # A row that skipped validation: its hidden tests are broken, which is not the model's fault.
    broken = _row(test_patch="--- a/tests/test_gone.py\n+++ b/tests/test_gone.py\n@@ -1 +1 @@\n-absent\n+x\n")
    env = MiniSWEEnv()
    try:
        verdict = asyncio.run(env.averify(broken, {"output": [it.message("Done.")]}))
        assert (verdict.reward, verdict.failure_kind, verdict.mask_sample) == (0.0, "bad_test_patch", True)
    finally:
        env.close()


def test_check_env():
    env = gymnasium.make(ENV_ID)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


# ---------------------------------------------------------------- rows
def _row(**changes: Any) -> dict[str, Any]:
    row = copy.deepcopy(TASKS[0])
    row.update(changes)
    return row


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"instance_id": "no_such_repo"}, "instance_id"),
        ({"instance_id": "../repos"}, "instance_id"),
        ({"base_commit": "0" * 40}, "base_commit"),
        ({"patch": "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n"}, "patch"),
        ({"test_patch": "not a diff"}, "test_patch"),
        ({"FAIL_TO_PASS": []}, "FAIL_TO_PASS"),
        ({"FAIL_TO_PASS": ["../outside.py::test_x"]}, "FAIL_TO_PASS"),
        ({"PASS_TO_PASS": ["-p evil"]}, "PASS_TO_PASS"),
        ({"problem_statement": None}, "problem_statement"),
    ],
)
def test_bad_rows_name_the_field(changes, field):
    with pytest.raises(TaskError, match=f"'{field}"):
        MiniSWEEnv(tasks=[_row(**changes)])


def test_swe_bench_style_json_string_test_lists_are_accepted():
    row = _row(FAIL_TO_PASS=json.dumps(TASKS[0]["FAIL_TO_PASS"]), PASS_TO_PASS="[]")
    env = MiniSWEEnv(tasks=[row])
    env.close()


# ---------------------------------------------------------------- diffs
def test_apply_patch_handles_edits_new_and_deleted_files_and_offsets():
    old = {"a.py": "".join(f"line {i}\n" for i in range(1, 21)), "gone.py": "x\n", "tail.txt": "no newline"}
    new = {
        "a.py": old["a.py"].replace("line 3\n", "line three\n").replace("line 18\n", ""),
        "b/new.py": "y\n",
    }
    new["tail.txt"] = "still no newline"
    diff = "".join(file_diff(p, old.get(p), new.get(p)) for p in sorted(set(old) | set(new)))
    assert "\\ No newline at end of file" in diff
    assert apply_patch(old, diff) == {**new, "gone.py": None}
    shifted = {**old, "a.py": "extra\nextra\n" + old["a.py"]}  # hunks found away from their line numbers
    assert apply_patch(shifted, diff)["a.py"] == "extra\nextra\n" + new["a.py"]
    with pytest.raises(PatchError, match="does not match"):
        apply_patch({**old, "a.py": "other\n"}, diff)
    with pytest.raises(PatchError, match="unsafe"):
        apply_patch(old, "--- a/../x\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n")


def test_every_gold_patch_only_touches_source_files():
    for task in TASKS:
        touched = apply_patch(read_files(REPOS / task["instance_id"]), task["patch"])
        assert touched and not any(Path(p).parts[0] == "tests" for p in touched)


# ---------------------------------------------------------------- sandbox failures
def test_a_recorded_sandbox_failure_masks_an_unresolved_episode():
    failed = '{"error": "Sandbox error: the command did not run: unshare failed"}'
    output = [*bash("python fix.py", "a"), it.function_call_output("a", failed), it.message("Done.")]
    env = MiniSWEEnv()
    try:
        verdict = asyncio.run(env.averify(TASKS[NUMBOX], {"output": output}))
        assert (verdict.reward, verdict.failure_kind) == (0.0, "sandbox_error")
        assert verdict.details["sandbox_errors"] == ["Sandbox error: the command did not run: unshare failed"]
        # The command's own output cannot claim it: only the env's tool error counts.
        printed = "returncode: 0\nstdout:\nSandbox error: the command did not run\n"
        own = [*bash("echo", "a"), it.function_call_output("a", printed), it.message("Done.")]
        verdict = asyncio.run(env.averify(TASKS[NUMBOX], {"output": own}))
        assert verdict.failure_kind == "tests_failed" and "sandbox_errors" not in verdict.details
    finally:
        env.close()


def test_sandbox_failures_are_masked_sandbox_errors(broken_unshare):
    done = broken_unshare(
        """
        import json
        from gym_llm import items as it
        from gym_llm.envs.mini_swe.env import MiniSWEEnv

        env = MiniSWEEnv()
        env.reset(options={"task_index": 0})
        obs, *_ = env.step([it.function_call("bash", {"command": "ls"}, "a")])
        error = json.loads(obs["input"][-1]["output"])["error"]
        _, reward, _, _, info = env.step("Done.")
        replayed = env.verify_row({**env.task, "response": env.response})
        print(json.dumps([error, reward, info["failure_kind"], info["mask_sample"], replayed.failure_kind]))
        print(json.dumps(info["details"]["sandbox_errors"]))
        env.close()
        """
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    error, reward, kind, masked, replayed = json.loads(first)
    assert error.startswith("Sandbox error: the command did not run:") and "No space left on device" in error
    assert (reward, kind, masked, replayed) == (0.0, "sandbox_error", True, "sandbox_error")
    assert json.loads(second)[-1].startswith("the hidden tests did not run:")
