"""Safe by default: loopback only, an optional token, capped bodies, and a 4xx JSON error that names
the field for every bad request, never a 500."""

from __future__ import annotations

import pytest
from server_wire import http, rows

from gym_llm.server import EnvServer

WEATHER_ROW = rows("weather")[0]


@pytest.fixture(scope="module")
def session_cookies(weather_server):
    return http("POST", f"{weather_server.base_url}/seed_session", WEATHER_ROW).cookies


def bad_requests(cookies):
    """(path, body or raw bytes, cookies, expected status, expected field or None, words of the message)."""
    no_cookie: dict[str, str] = {}
    return [
        ("/seed_session", b"{not json", no_cookie, 400, None, "not valid JSON"),
        ("/seed_session", b"", no_cookie, 400, None, "empty"),
        ("/seed_session", [1, 2], no_cookie, 400, None, "must be a JSON object"),
        ("/seed_session", {"responses_create_params": 3}, no_cookie, 422, "responses_create_params", "field"),
        ("/seed_session", {**WEATHER_ROW, "city": 4}, no_cookie, 422, "city", "city"),
        ("/seed_session", {"task_data": {}, "episode_id": {}, "x": 1}, no_cookie, 422, "x", "unknown field"),
        ("/seed_session", {"task_data": [], "episode_id": {}}, no_cookie, 422, "task_data", "an object"),
        ("/get_weather", {"city": "x"}, no_cookie, 400, None, "seed_session first"),
        ("/get_weather", {"city": "x"}, {"gym_llm___Weather-v0": "forged"}, 404, None, "unknown or expired"),
        ("/get_weather", b"nope", cookies, 400, None, "not valid JSON"),
        ("/get_weather", ["Paris"], cookies, 400, None, "must be a JSON object"),
        ("/get_weather", {"city": 7}, cookies, 422, "city", "valid string"),
        ("/no_such_tool", {}, cookies, 404, None, "unknown tool 'no_such_tool'"),
        ("/verify", b"[", no_cookie, 400, None, "not valid JSON"),
        ("/verify", {**WEATHER_ROW}, no_cookie, 422, "response", "'response' is required"),
        ("/verify", {**WEATHER_ROW, "response": []}, no_cookie, 422, "response", "must be an object"),
        ("/verify", {**WEATHER_ROW, "response": {}}, no_cookie, 422, "response.output", "required"),
        ("/verify", {**WEATHER_ROW, "response": {"output": "x"}}, no_cookie, 422, "response.output", "array"),
        ("/verify", {**WEATHER_ROW, "response": {"output": [3]}}, no_cookie, 422, "response.output", "item"),
        ("/verify", {"response": {"output": []}}, no_cookie, 422, "responses_create_params", "required"),
        ("/verify", {"verification_input": 1}, no_cookie, 422, "verification_input", "object"),
        ("/close_session", {"resources_session_id": 5}, no_cookie, 422, "resources_session_id", "string"),
        ("/aggregate_metrics", {}, no_cookie, 422, "verify_responses", "required"),
        ("/aggregate_metrics", {"verify_responses": [1]}, no_cookie, 422, "verify_responses.0", "object"),
        ("/reset", {"seed": "1"}, no_cookie, 422, "seed", "integer"),
        ("/reset", {"seed": True}, no_cookie, 422, "seed", "integer"),
        ("/reset", {"seed": -1}, no_cookie, 422, "seed", "non-negative"),
        ("/reset", {"options": []}, no_cookie, 422, "options", "object"),
        ("/reset", {"options": {"task_index": 99}}, no_cookie, 422, "options.task_index", "out of range"),
        ("/reset", {"options": {"task_index": "0"}}, no_cookie, 422, "options.task_index", "integer"),
        ("/reset", {"options": {"task": {}}}, {}, 422, "options.task.responses_create_params", "field"),
        ("/reset", {"session_id": "gone"}, no_cookie, 404, "session_id", "unknown or expired"),
        ("/step", {"action": "hi"}, no_cookie, 422, "session_id", "required"),
        ("/step", {"session_id": 3, "action": "hi"}, no_cookie, 422, "session_id", "string"),
        ("/step", {"session_id": "gone", "action": "hi"}, no_cookie, 404, "session_id", "unknown or expired"),
        ("/finish", {"session_id": "gone"}, no_cookie, 404, "session_id", "unknown or expired"),
        ("/call_tool", {"session_id": "gone", "name": "x"}, no_cookie, 404, "session_id", "unknown"),
        ("/close", {}, no_cookie, 422, "session_id", "required"),
    ]  # fmt: skip


def test_every_bad_request_gets_a_4xx_json_error_naming_its_field(weather_server, session_cookies):
    for path, body, cookies, status, bad_field, words in bad_requests(session_cookies):
        raw = body if isinstance(body, bytes) else None
        reply = http(
            "POST",
            weather_server.base_url + path,
            None if raw is not None else body,
            raw=raw,
            cookies=cookies,
        )
        assert reply.status == status, (path, body, reply.status, reply.body)
        assert reply.headers["Content-Type"].startswith("application/json"), path
        error = reply.json()
        assert words in error["error"], (path, body, error)
        assert error.get("field") == bad_field, (path, body, error)


def test_bad_step_bodies_in_a_live_session(weather_server):
    session = http("POST", f"{weather_server.base_url}/reset", {}).json()["session_id"]
    url = weather_server.base_url
    reply = http("POST", f"{url}/step", {"session_id": session})
    assert (reply.status, reply.json()["field"]) == (422, "action")
    reply = http("POST", f"{url}/call_tool", {"session_id": session, "name": 3})
    assert (reply.status, reply.json()["field"]) == (422, "name")
    reply = http(
        "POST", f"{url}/call_tool", {"session_id": session, "name": "get_weather", "count_turn": "no"}
    )
    assert (reply.status, reply.json()["field"]) == (422, "count_turn")
    # an action that is no model turn is the model's failure, as in-process: reward 0, not an error
    reply = http("POST", f"{url}/step", {"session_id": session, "action": 42})
    assert reply.status == 200 and reply.json()["info"]["failure_kind"] == "invalid_action"
    reply = http("POST", f"{url}/step", {"session_id": session, "action": "again"})
    assert reply.status == 409 and "episode is over" in reply.json()["error"]


def test_unknown_routes_and_methods_are_json_errors(weather_server):
    assert http("GET", f"{weather_server.base_url}/a/b").status == 404
    reply = http("GET", f"{weather_server.base_url}/verify")
    assert reply.status == 405 and reply.json() == {"error": "/verify does not take GET"}


def test_bodies_over_the_limit_are_refused_with_413():
    with EnvServer("llm/Weather-v0", max_request_bytes=1000) as server:
        reply = http("POST", f"{server.base_url}/seed_session", {**WEATHER_ROW, "padding": "x" * 2000})
        assert reply.status == 413 and "1000 bytes" in reply.json()["error"]
        assert http("POST", f"{server.base_url}/seed_session", WEATHER_ROW).status == 200


def test_a_token_guards_every_route_but_health():
    with EnvServer("llm/Weather-v0", token="s3cret") as server:
        url = server.base_url
        assert http("GET", f"{url}/health").status == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
            reply = http("POST", f"{url}/seed_session", WEATHER_ROW, headers=headers)
            assert reply.status == 401 and "bearer token" in reply.json()["error"]
            assert reply.headers["WWW-Authenticate"] == "Bearer"
            assert http("GET", f"{url}/env_info", headers=headers).status == 401
        good = {"Authorization": "Bearer s3cret"}
        assert http("POST", f"{url}/seed_session", WEATHER_ROW, headers=good).status == 200
        assert http("GET", f"{url}/env_info", headers=good).json()["env_id"] == "llm/Weather-v0"


def test_the_server_binds_loopback_by_default():
    server = EnvServer("llm/Weather-v0")
    assert server.host == "127.0.0.1"
    with server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.port > 0


def test_a_full_server_refuses_new_sessions_with_503():
    with EnvServer("llm/Weather-v0", max_sessions=2) as server:
        url = server.base_url
        assert [http("POST", f"{url}/seed_session", WEATHER_ROW).status for _ in range(2)] == [200, 200]
        reply = http("POST", f"{url}/seed_session", WEATHER_ROW)
        assert reply.status == 503 and "maximum of 2 open sessions" in reply.json()["error"]
        assert http("POST", f"{url}/reset", {}).status == 503


def test_a_tool_named_like_a_route_cannot_be_served():
    import gymnasium

    from gym_llm import LLMEnv, Verdict, tool

    class Clashing(LLMEnv):
        @tool
        def verify_answer(self) -> str:
            """Fine."""
            return "ok"

        @tool(name="reset")
        def restart(self) -> str:
            """Clashes with /reset."""
            return "no"

        def verify(self, task, response):
            return Verdict(0.0)

    gymnasium.register("llm_test/Clashing-v0", entry_point=lambda **kw: Clashing(tasks=[WEATHER_ROW], **kw))
    try:
        with pytest.raises(ValueError, match=r"tools \['reset'\] are named like protocol routes"):
            EnvServer("llm_test/Clashing-v0")
        with pytest.raises(ValueError, match="unknown env"):
            EnvServer("llm/Nope-v0")
    finally:
        del gymnasium.registry["llm_test/Clashing-v0"]
