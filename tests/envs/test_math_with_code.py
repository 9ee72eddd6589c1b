"""MathWithCode: a stateful sandboxed Python tool, answers graded from the last \\boxed{}."""

from __future__ import annotations

import json
import os
import time

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from gym_llm import items as it
from gym_llm.envs.math_with_code.env import answers_match, extract_boxed
from gym_llm.envs.math_with_code.session import PythonSession, SessionStartError
from gym_llm.sandbox import Limits
from gym_llm.tasks import TaskError
from gym_llm.testing import play, play_reference


@pytest.fixture
def env():
    env = gymnasium.make("llm/MathWithCode-v0", execution_timeout=1.0)
    yield env
    env.close()


def call(code: str, call_id: str = "c") -> list[dict]:
    return [it.function_call("execute_python", {"code": code}, call_id)]


def tool_reply(obs) -> dict:
    return json.loads(obs["input"][-1]["output"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_reference_scores_one_on_every_row(env):
    for index in range(len(env.unwrapped.tasks)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert env.unwrapped.session is None or result.terminated


def test_right_answer_scores_one(env):
    assert env.unwrapped.tasks[0]["expected_result"] == "130"
    result = play(env, ["So the count is \\boxed{130}."])
    assert result.reward == 1.0 and result.info["details"] == {"extracted_answer": "130", "accuracy": True}


def test_wrong_and_missing_answers_score_zero(env):
    wrong = play(env, ["\\boxed{129}"])
    assert wrong.reward == 0.0 and wrong.info["failure_kind"] == "wrong_answer"
    missing = play(env, ["I think it is 130."])
    assert missing.reward == 0.0 and missing.info["failure_kind"] == "no_answer"


def test_state_persists_and_errors_are_reported(env):
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(call("import math\nx = 6 * 7\nprint('x is', x)"))
    assert tool_reply(obs) == {
        "success": True,
        "stdout": "x is 42\n",
        "stderr": "",
        "error_message": None,
        "result": None,
    }
    obs, *_ = env.step(call("y = np.arange(4)\nx + int(y.sum())", "d"))
    reply = tool_reply(obs)
    assert reply["success"] and reply["result"] == "48"
    obs, *_ = env.step(call("print('before')\n1 / 0", "e"))
    reply = tool_reply(obs)
    assert not reply["success"] and reply["error_message"] == "ZeroDivisionError: division by zero"
    assert reply["stdout"] == "before\n" and "ZeroDivisionError" in reply["stderr"]


def test_syntax_error_is_a_tool_error(env):
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(call("def broken(:\n    pass"))
    reply = tool_reply(obs)
    assert not reply["success"] and reply["error_message"].startswith("SyntaxError")


def test_timeout_kills_the_worker_and_the_next_call_starts_fresh(env):
    env.reset(options={"task_index": 0})
    env.step(call("x = 1"))
    first_pid = env.unwrapped.session.process.pid
    obs, *_ = env.step(call("while True: pass", "loop"))
    reply = tool_reply(obs)
    assert not reply["success"] and "timed out" in reply["error_message"]
    assert env.unwrapped.session is None and not alive(first_pid)
    obs, *_ = env.step(call("print('x' in globals())", "after"))
    assert tool_reply(obs)["stdout"] == "False\n"


def test_the_boxed_answer_may_come_from_tool_stdout(env):
    env.reset(options={"task_index": 4})
    env.step(call("print(f'\\\\boxed{{{pow(3, 2024, 1000)}}}')"))
    _obs, reward, _terminated, _truncated, info = env.step("Done.")
    assert reward == 1.0 and info["details"]["extracted_answer"] == "481"


def test_worker_is_killed_at_reset_and_close(env):
    env.reset(options={"task_index": 0})
    env.step(call("x = 1"))
    session = env.unwrapped.session
    pid, workdir = session.process.pid, session.workdir
    env.reset(options={"task_index": 1})
    assert not alive(pid) and not os.path.exists(workdir)
    env.step(call("x = 2"))
    session = env.unwrapped.session
    pid, workdir = session.process.pid, session.workdir
    env.close()
    assert not alive(pid) and not os.path.exists(workdir)


def test_boxed_extraction_and_matching():
    assert extract_boxed("a \\boxed{1} then \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert extract_boxed("\\boxed{unclosed") is None and extract_boxed("\\boxed{ }") is None
    assert (
        answers_match("42.0", "42")
        and answers_match("\\(4227\\)", "4227")
        and answers_match("1", "\\text{1}")
    )
    assert not answers_match("0.5", "0.51") and not answers_match(None, "1")


def test_bad_row_names_the_field():
    row = {"responses_create_params": {"input": "1+1?"}}
    with pytest.raises(TaskError, match="expected_result"):
        gymnasium.make("llm/MathWithCode-v0", tasks=[row])


def test_check_env(env):
    check_env(env.unwrapped)


def test_a_first_call_infinite_loop_stops_at_the_execution_limit(env):
    # The limit counts from when the code starts; a warm session makes the first call start at once.
    env.reset(options={"task_index": 0})
    assert env.unwrapped.pool.wait_ready(1, timeout=60)
    start = time.monotonic()
    obs, *_ = env.step(call("while True: pass", "loop"))
    elapsed = time.monotonic() - start
    assert "timed out after 1 s" in tool_reply(obs)["error_message"]
    assert elapsed < 1.0 + 2.0, elapsed


def test_a_cold_first_call_gets_its_full_execution_limit():
    env = gymnasium.make("llm/MathWithCode-v0", execution_timeout=1.0, warm_sessions=False)
    try:
        assert env.unwrapped.pool is None
        env.reset(options={"task_index": 0})
        start = time.monotonic()
        obs, *_ = env.step(
            call("import time\nwhile time.time() < %r: pass\nprint('done')" % (time.time() + 0.8))
        )
        reply = tool_reply(obs)
        assert reply["success"] and reply["stdout"] == "done\n", reply  # start-up did not eat the second
        obs, *_ = env.step(call("while True: pass", "loop"))
        assert "timed out after 1 s" in tool_reply(obs)["error_message"]
        assert time.monotonic() - start < 0.8 + 1.0 + 5.0  # a cold start costs well under 5 s
    finally:
        env.close()


def test_the_warm_pool_hands_out_fresh_sessions_and_refills():
    limits = Limits(cpu_seconds=119, memory_mb=2048, max_processes=32)  # a pool of this test's own
    env = gymnasium.make("llm/MathWithCode-v0", session_limits=limits)
    pool = env.unwrapped.pool
    assert pool.target == 0  # an env that never runs an episode (a verifier) warms nothing
    env.reset(options={"task_index": 0})
    assert pool.wait_ready(1, timeout=60)
    session = pool.take()
    try:
        assert session is not None and session.alive and "numpy" in session.preloaded
        assert session.execute("print('x' in globals(), np.arange(3).sum())")["stdout"] == "False 3\n"
        assert pool.wait_ready(1, timeout=60)  # a replacement was started
    finally:
        session.close()
    env.close()  # the last env attached: the pool closes its idle sessions
    deadline = time.monotonic() + 10
    while pool.idle and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.idle == pool.target == 0


def test_a_session_that_cannot_start_is_a_start_error():
    session = PythonSession(Limits(memory_mb=1))  # too little for the interpreter to start
    with pytest.raises(SessionStartError, match="did not start"):
        session.start(timeout=30)
    assert not os.path.exists(session.workdir)


def test_a_recorded_sandbox_error_masks_a_wrong_answer(env):
    task = env.unwrapped.tasks[0]
    failed = json.dumps(
        {"success": False, "error_message": "Sandbox error: x", "sandbox_error": "unshare failed"}
    )
    output = [*call("print(1)"), it.function_call_output("c", failed), it.message("\\boxed{7}")]
    verdict = env.unwrapped.verify(task, {"output": output})
    assert verdict.failure_kind == "sandbox_error" and verdict.details["sandbox_error"] == "unshare failed"
    right = env.unwrapped.verify(task, {"output": [*output[:2], it.message("\\boxed{130}")]})
    assert right.reward == 1.0 and right.failure_kind is None
    # The model's own output cannot claim a sandbox error: only the reply's field counts.
    printed = json.dumps({"success": True, "stdout": '"sandbox_error": "x"', "result": None})
    own = env.unwrapped.verify(
        task, {"output": [*call("x"), it.function_call_output("c", printed), it.message("no")]}
    )
    assert own.failure_kind == "no_answer"


def test_sandbox_failures_are_masked_sandbox_errors(broken_unshare):
    done = broken_unshare(
        """
        import json
        import gymnasium
        import gym_llm
        from gym_llm import items as it

        env = gymnasium.make("llm/MathWithCode-v0")
        for answer in ("\\\\boxed{0}", "\\\\boxed{130}"):
            env.reset(options={"task_index": 0})
            obs, *_ = env.step([it.function_call("execute_python", {"code": "print(1)"}, "c")])
            reply = json.loads(obs["input"][-1]["output"])
            _, reward, _, _, info = env.step(answer)
            print(json.dumps([reply["sandbox_error"], reward, info["failure_kind"], info["mask_sample"]]))
        env.close()
        """
    )
    assert done.returncode == 0, done.stderr
    wrong, right = (json.loads(line) for line in done.stdout.splitlines())
    assert "No space left on device" in wrong[0] and wrong[1:] == [0.0, "sandbox_error", True]
    assert right[1:] == [1.0, None, False]  # a right answer stands
