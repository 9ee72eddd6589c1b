"""NeMo Gym's resources-server protocol, driven over raw HTTP the way NeMo's agents drive it."""

from __future__ import annotations

import json
from typing import Any

import gymnasium
import pytest
from server_wire import http, rows

from gym_llm import items as it

EPISODE = {"rollout_id": "rollout-1", "attempt": 0}
TASK_ID = {"taskset": "counter", "task_id": "0"}


class SimpleAgentLike:
    """What NeMo's simple_agent does with a resources server: seed with the whole row, carry the
    cookies of each reply to the next request (replacing its own), post each function call's
    arguments to ``/<name>``, hand the raw reply body to the model, then verify with the row."""

    def __init__(self, base_url: str, row: dict[str, Any]) -> None:
        self.base_url = base_url
        self.row = row
        self.output: list[dict[str, Any]] = []
        reply = http("POST", f"{base_url}/seed_session", row)
        assert reply.status == 200, reply.body
        self.cookies = reply.cookies

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        call = it.function_call(name, arguments, f"call_{len(self.output)}")
        reply = http("POST", f"{self.base_url}/{name}", arguments, cookies=self.cookies)
        self.cookies = reply.cookies  # simple_agent replaces its resources cookies with each reply's
        output = reply.body.decode()
        self.output += [call, it.function_call_output(call["call_id"], output)]
        return output

    def answer(self, text: str) -> dict[str, Any]:
        self.output.append(it.message(text, item_id="msg_1"))
        reply = http(
            "POST",
            f"{self.base_url}/verify",
            {**self.row, "response": {"output": self.output}},
            cookies=self.cookies,
        )
        assert reply.status == 200, reply.body
        return reply.json()


@pytest.mark.parametrize("index", range(6))
def test_a_simple_agent_episode_scores_every_counter_row(counter_server, index):
    row = rows("stateful_counter")[index]
    agent = SimpleAgentLike(counter_server.base_url, row)
    for count in row["increments"]:
        assert json.loads(agent.call("increment_counter", {"count": count})) == {"success": True}
    assert json.loads(agent.call("get_counter_value", {})) == {"count": row["expected_count"]}
    result = agent.answer(f"The count is {row['expected_count']}.")
    # the row and the response echoed, the verdict added
    assert {key: result[key] for key in row} == row
    assert result["response"]["output"] == agent.output
    assert result["reward"] == 1.0 and result["final_count"] == row["expected_count"]
    assert (
        result["mask_sample"] is False and result["failure_kind"] is None and result["failure_reason"] is None
    )


def test_a_wrong_count_scores_zero(counter_server):
    row = rows("stateful_counter")[0]
    agent = SimpleAgentLike(counter_server.base_url, row)
    agent.call("increment_counter", {"count": 100})
    assert agent.answer("done")["reward"] == 0.0


def test_state_belongs_to_each_session(counter_server):
    row = rows("stateful_counter")[1]
    first, second = (
        SimpleAgentLike(counter_server.base_url, row),
        SimpleAgentLike(counter_server.base_url, row),
    )
    first.call("increment_counter", {"count": 3})
    assert json.loads(second.call("get_counter_value", {})) == {"count": row["initial_count"]}
    assert json.loads(first.call("get_counter_value", {})) == {"count": row["initial_count"] + 3}


def test_every_reply_of_a_session_sets_its_cookie(counter_server):
    row = rows("stateful_counter")[0]
    seeded = http("POST", f"{counter_server.base_url}/seed_session", row)
    ((name, value),) = seeded.cookies.items()
    assert name == "gym_llm___StatefulCounter-v0" and len(value) >= 20
    assert "httponly" in seeded.headers["Set-Cookie"].lower()
    reply = http("POST", f"{counter_server.base_url}/get_counter_value", {}, cookies=seeded.cookies)
    assert reply.cookies == seeded.cookies
    # cookies of other servers, as an agent may carry them, are ignored
    mixed = {"OtherServer___model": "x", **seeded.cookies}
    assert http("POST", f"{counter_server.base_url}/get_counter_value", {}, cookies=mixed).status == 200


def test_tool_replies_are_the_outputs_the_model_reads_in_process(weather_server):
    agent = SimpleAgentLike(weather_server.base_url, rows("weather")[0])
    env = gymnasium.make("llm/Weather-v0").unwrapped
    env.reset(options={"task_index": 0})
    assert agent.call("get_weather", {"city": "Paris"}) == env.call_tool("get_weather", {"city": "Paris"})
    assert agent.call("get_weather", {"city": "Paris"}) == (
        '{"city":"Paris","weather_description":"The weather in Paris is cold."}'
    )


def test_arguments_of_the_wrong_shape_are_a_422_the_model_can_read(weather_server):
    agent = SimpleAgentLike(weather_server.base_url, rows("weather")[0])
    for arguments, bad in (({"city": 5}, "city"), ({}, "city"), ({"city": "x", "extra": 1}, "extra")):
        reply = http("POST", f"{weather_server.base_url}/get_weather", arguments, cookies=agent.cookies)
        assert reply.status == 422
        assert reply.json()["field"] == bad and reply.json()["error"].startswith(
            "Invalid arguments for get_weather"
        )


def test_verify_frees_the_session(counter_server):
    store = counter_server.sessions
    agent = SimpleAgentLike(counter_server.base_url, rows("stateful_counter")[0])
    open_before = len(store)
    agent.answer("nothing")
    assert len(store) == open_before - 1
    reply = http("POST", f"{counter_server.base_url}/get_counter_value", {}, cookies=agent.cookies)
    assert reply.status == 404 and "seed" in reply.json()["error"]


def test_verify_without_a_session_scores_a_recorded_row(counter_server):
    row = rows("stateful_counter")[1]
    output = [
        it.function_call("increment_counter", {"count": 4}, "c1"),
        it.function_call_output("c1", '{"success":true}'),
    ]
    reply = http("POST", f"{counter_server.base_url}/verify", {**row, "response": {"output": output}})
    assert reply.status == 200 and reply.json()["reward"] == 1.0
    assert http("GET", f"{counter_server.base_url}/reverify_mode").json() == "stateless"


def test_verify_reports_components_as_nemo_servers_do():
    from gym_llm.server import EnvServer

    row = rows("multi_step")[0]
    output = [
        it.function_call("extract_synonym_values", {"synonym_values": row["expected_synonym_values"]}, "c")
    ]
    with EnvServer("llm/MultiStep-v0") as server:
        result = http("POST", f"{server.base_url}/verify", {**row, "response": {"output": output}}).json()
    assert result["reward"] == 1.0
    assert result["reward_components"]["set_overlap"] == result["set_overlap"] == 1.0
    assert result["original_term_minefield_hit"] == 0.0


def test_the_typed_session_contract(counter_server):
    """NeMo 0.7's session conformance: seed, repeated seed, close, repeated close, close of a
    never-seeded id, and no seed after close."""
    url = counter_server.base_url
    seed = {
        "resources_session_id": "resources-session-contract",
        "episode_id": EPISODE,
        "task_id": TASK_ID,
        "task_data": {"expected_count": 9, "initial_count": 7},
    }
    close = {"resources_session_id": seed["resources_session_id"], "episode_id": EPISODE}
    first = http("POST", f"{url}/seed_session", seed)
    assert first.status == 200
    assert first.json() == {
        "resources_session_id": "resources-session-contract",
        "resources_tools": None,
        "sandbox_access": None,
    }
    assert first.cookies  # single_agent_turn refuses a seed that sets no cookie
    again = http("POST", f"{url}/seed_session", seed)
    assert again.status == 200 and again.json() == first.json() and again.cookies == first.cookies
    # the task data reached the env: the counter starts at initial_count
    assert http("POST", f"{url}/get_counter_value", {}, cookies=first.cookies).json() == {"count": 7}
    for _ in range(2):
        reply = http("POST", f"{url}/close_session", close)
        assert reply.status == 200 and reply.json() == {"resources_session_id": "resources-session-contract"}
    never = {"resources_session_id": "resources-session-never", "episode_id": EPISODE}
    assert http("POST", f"{url}/close_session", never).status == 200
    assert http("POST", f"{url}/seed_session", seed).status == 409
    assert http("POST", f"{url}/seed_session", {**seed, **never}).status == 409
    assert http("POST", f"{url}/get_counter_value", {}, cookies=first.cookies).status == 404


def test_a_typed_episode_verifies_with_the_flat_body(counter_server):
    """single_agent_turn: typed seed, tools by cookie, flat verify (task_data | params | response), close."""
    url = counter_server.base_url
    row = rows("stateful_counter")[1]
    task_data = {key: value for key, value in row.items() if key != "responses_create_params"}
    seed = {
        "resources_session_id": "rs-typed",
        "episode_id": EPISODE,
        "task_id": TASK_ID,
        "task_data": task_data,
    }
    cookies = http("POST", f"{url}/seed_session", seed).cookies
    output = []
    for count in row["increments"]:
        body = http("POST", f"{url}/increment_counter", {"count": count}, cookies=cookies).body.decode()
        output += [
            it.function_call("increment_counter", {"count": count}, "c"),
            it.function_call_output("c", body),
        ]
    verify = http("POST", f"{url}/verify", {**row, "response": {"output": output}}, cookies=cookies)
    assert verify.json()["reward"] == 1.0
    assert (
        http(
            "POST", f"{url}/close_session", {"resources_session_id": "rs-typed", "episode_id": EPISODE}
        ).status
        == 200
    )


def test_a_seed_with_another_episode_id_is_refused(counter_server):
    url = counter_server.base_url
    seed = {
        "resources_session_id": "rs-owned",
        "episode_id": EPISODE,
        "task_id": TASK_ID,
        "task_data": {"expected_count": 1},
    }
    assert http("POST", f"{url}/seed_session", seed).status == 200
    other = {**seed, "episode_id": {"rollout_id": "someone-else", "attempt": 0}}
    reply = http("POST", f"{url}/seed_session", other)
    assert reply.status == 409 and reply.json()["field"] == "episode_id"
    assert (
        http(
            "POST", f"{url}/close_session", {"resources_session_id": "rs-owned", "episode_id": EPISODE}
        ).status
        == 200
    )


def test_aggregate_metrics_has_nemo_s_shape(counter_server):
    responses = [
        {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "mask_sample": False,
         "response": {"usage": {"input_tokens": 10, "output_tokens": 4}}},
        {"_ng_task_index": 0, "_ng_rollout_index": 1, "reward": 0.0, "mask_sample": False,
         "response": {"usage": {"input_tokens": 12, "output_tokens": 6}}},
        {"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 1.0, "mask_sample": True,
         "response": {"usage": {"input_tokens": 20, "output_tokens": 2}}},
    ]  # fmt: skip
    reply = http("POST", f"{counter_server.base_url}/aggregate_metrics", {"verify_responses": responses})
    assert reply.status == 200
    metrics = reply.json()
    agent = metrics["agent_metrics"]
    assert agent["mean/reward"] == pytest.approx(2 / 3) and agent["median/reward"] == 1.0
    assert agent["max/input_tokens"] == 20 and agent["min/output_tokens"] == 2
    assert agent["mean/mask_sample"] == pytest.approx(1 / 3)
    assert agent["std/reward"] == pytest.approx(0.5773502691896258)
    assert "mean/_ng_task_index" not in agent
    assert metrics["key_metrics"] == {
        name: value for name, value in agent.items() if name.startswith("mean/")
    }
    first, second = metrics["group_level_metrics"]
    assert (first["_ng_task_index"], first["num_rollouts"], first["mean/reward"]) == (0, 2, 0.5)
    assert (second["_ng_task_index"], second["num_rollouts"], second["std/reward"]) == (1, 1, 0.0)
    assert [info["rollout_id"] for info in first["rollout_infos"]] == ["0:0", "0:1"]
    empty = http("POST", f"{counter_server.base_url}/aggregate_metrics", {"verify_responses": []}).json()
    assert empty == {"group_level_metrics": [], "agent_metrics": {}, "key_metrics": {}}
