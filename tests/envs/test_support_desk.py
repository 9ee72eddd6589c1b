"""SupportDesk: a multi-turn episode with a simulated customer; the reward is the shop's final state."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest

from gym_llm import items as it
from gym_llm.envs.support_desk.env import SupportDeskEnv
from gym_llm.testing import play, play_reference
from gym_llm.user_sim import STOP, LLMUser, ScriptedUser, user_view


@pytest.fixture
def env() -> SupportDeskEnv:
    return gymnasium.make("llm/SupportDesk-v0").unwrapped


def call(name: str, call_id: str = "c", **arguments: Any) -> list[dict[str, Any]]:
    return [it.function_call(name, arguments, call_id)]


@pytest.mark.parametrize("task_index", range(6))
def test_reference_serves_every_customer(env: SupportDeskEnv, task_index: int) -> None:
    result = play_reference(env, task_index=task_index)
    assert result.reward == 1.0 and result.terminated
    script = env.tasks[task_index]["user_script"]
    users = [item for item in result.observation["input"] if item.get("role") == "user"]
    assert [u["content"] for u in users[1:]] == script  # the scripted customer said every line, in order


def test_the_customer_answers_back_in_new_items(env: SupportDeskEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, reward, terminated, _, info = env.step("Could you confirm your email address?")
    assert (reward, terminated) == (0.0, False)
    assert info["new_items"] == [{"type": "message", "role": "user", "content": "Thank you, that's all."}]
    assert obs["input"][-1] == info["new_items"][0]
    _, _, terminated, _, info = env.step("Anything else?")  # the script has run out: the customer is done
    assert terminated and info["reward_components"] == {"state_match": 0.0, "write_calls": 0.0}


def test_wrong_and_forbidden_actions_leave_the_wrong_state(env: SupportDeskEnv) -> None:
    env.reset(options={"task_index": 0})
    _, _, _, _, info = env.step(call("cancel_pending_order", order_id="W2002", reason="no longer needed"))
    assert json.loads(info["new_items"][0]["output"])["refund"] == 49.0  # another customer's order: allowed
    _, _, _, _, info = env.step(
        call("cancel_pending_order", "d", order_id="W1002", reason="no longer needed")
    )
    assert "only pending orders" in json.loads(info["new_items"][0]["output"])["error"]
    result = play(env, ["Done.", "Bye."], task_index=0)
    assert result.reward == 0.0


def test_recorded_rollouts_re_verify_by_replay(env: SupportDeskEnv) -> None:
    result = play_reference(env, task_index=5)
    row = {**env.tasks[5], "response": {"output": it.copy_json(env.response["output"])}}
    fresh = gymnasium.make("llm/SupportDesk-v0").unwrapped
    verdict = fresh.verify_row(row)
    assert verdict.reward == result.reward == 1.0
    assert verdict.components == {"state_match": 1.0, "write_calls": 2.0}
    assert verdict.details["final_orders"]["W2002"] == "cancelled"


def test_llm_user_sees_its_instructions_and_swapped_roles() -> None:
    asked: list[list[dict[str, Any]]] = []

    async def ask(messages: list[dict[str, Any]]) -> str:
        asked.append(messages)
        return "Yes, jane@example.com." if len(asked) == 1 else f"Thanks! {STOP}"

    env = SupportDeskEnv(user=LLMUser(ask))
    env.reset(options={"task_index": 0})
    _, _, terminated, _, info = env.step("What is your email?")
    assert not terminated and info["new_items"][0]["content"] == "Yes, jane@example.com."
    system, *turns = asked[0]
    assert "Cancel order W1001" in system["content"] and STOP in system["content"]
    assert [m["role"] for m in turns] == ["assistant", "user"]  # the customer's own words are "assistant"
    _, _, terminated, _, _ = env.step("Thanks for waiting.")
    assert terminated  # the customer said STOP


def test_scripted_user_and_user_view_are_pure() -> None:
    conversation = [{"role": "user", "content": "hi"}, it.message("hello"), it.function_call("f", {}, "x")]
    assert user_view(conversation, {"user_instructions": "Be brief."})[1:] == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "hello"},
    ]
    with pytest.raises(ValueError, match="user simulator"):
        SupportDeskEnv(user="not a simulator")  # type: ignore[arg-type]
    assert isinstance(SupportDeskEnv().user, ScriptedUser)


def test_a_model_plays_the_customer_over_http_under_collect(tmp_path) -> None:
    from gym_llm.policies import ChatPolicy
    from gym_llm.rollouts import collect
    from gym_llm.testing import ModelServer
    from gym_llm.testing.model_server import oracle

    def script(conversation: list[dict[str, Any]], tools: list[dict], request: dict) -> Any:
        first = conversation[0] if conversation else {}
        if first.get("role") == "system" and "talking to a support agent" in it.content_text(
            first.get("content")
        ):
            customer_turns = sum(item.get("role") == "assistant" for item in conversation)
            return "Could you also tell me the refund?" if customer_turns == 1 else f"Perfect, thanks. {STOP}"
        return oracle(conversation, tools, request)  # the agent: the reference solution

    with ModelServer(script=script) as server:
        result = collect(
            "llm/SupportDesk-v0",
            tmp_path / "r.jsonl",
            policy=ChatPolicy("agent", server.base_url),
            env_kwargs={"user": {"model": "customer", "base_url": server.base_url, "api": "chat"}},
            concurrency=3,
        )
        customer_requests = [r for r in server.requests if r["model"] == "customer"]
    assert result.summary["mean_reward"] == 1.0 and result.summary["num_masked"] == 0
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    said = [item for item in rows[0]["response"]["output"] if item.get("role") == "user"]
    assert said and said[0]["content"] == "Could you also tell me the refund?"
    assert len(customer_requests) == 2 * len(rows)  # one question, then STOP, per conversation


def test_a_customer_that_cannot_answer_masks_the_episode_instead_of_crashing() -> None:
    async def unreachable(messages: list[dict[str, Any]]) -> str:
        raise ConnectionError("customer model is down")

    env = SupportDeskEnv(user=LLMUser(unreachable))
    env.reset(options={"task_index": 0})
    _, reward, terminated, _, info = env.step("What is your email?")
    assert (reward, terminated, info["failure_kind"], info["mask_sample"]) == (
        0.0,
        True,
        "user_sim_error",
        True,
    )
    assert "customer model is down" in info["details"]["error"]
    env.reset(options={"task_index": 0})  # the next episode starts clean
    assert env.user_error is None
    result = play_reference(env, task_index=0)  # the tool calls run; the reply to the customer fails
    assert (
        result.info["failure_kind"] == "user_sim_error"
        and env.shop["orders"]["W1001"]["status"] == "cancelled"
    )


def test_calls_recorded_but_never_run_change_nothing(env: SupportDeskEnv) -> None:
    env.reset(options={"task_index": 0})
    calls = [
        it.function_call(a["name"], a["arguments"], f"c{i}")
        for i, a in enumerate(env.task["expected_actions"])
    ]
    reward, info = env.finish(calls)  # the calls are recorded with the last turn, never run
    assert reward == 0.0 and info["reward_components"]["write_calls"] == 0.0
    assert env.shop["orders"]["W1001"]["status"] == "pending"
