"""The shared judge: configuration, calls over real HTTP to the test server, verdict parsing."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from gym_llm.judge import (
    JudgeConfig,
    JudgeError,
    ask,
    exact_form,
    parse_verdict,
    reference_judgement,
    register_oracle_judge,
)
from gym_llm.testing import ModelServer
from gym_llm.testing.model_server import ServerError, oracle

JUDGE_VARS = (
    "GYM_LLM_JUDGE_MODEL",
    "GYM_LLM_JUDGE_BASE_URL",
    "GYM_LLM_JUDGE_API_KEY",
    "GYM_LLM_JUDGE_API",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
)
DOWN = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


@pytest.fixture
def clean_env(monkeypatch):
    for name in JUDGE_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def fast(url: str, **fields) -> JudgeConfig:
    return JudgeConfig(model="judge-m", base_url=url, api_key="secret-key", backoff=0.01, **fields)


# ----------------------------------------------------------------------------- config
def test_defaults_without_environment(clean_env):
    config = JudgeConfig.from_env()
    assert (config.model, config.base_url, config.api_key, config.api) == (
        "gpt-4.1-mini",
        "https://api.openai.com/v1",
        None,
        "responses",
    )


def test_environment_variables_fill_the_fields(clean_env):
    clean_env.setenv("GYM_LLM_JUDGE_MODEL", "judge-x")
    clean_env.setenv("OPENAI_BASE_URL", "http://fallback/v1")
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    clean_env.setenv("GYM_LLM_JUDGE_API", "chat")
    config = JudgeConfig.coerce({"temperature": 0.3})
    assert (config.model, config.base_url, config.api_key, config.api, config.temperature) == (
        "judge-x",
        "http://fallback/v1",
        "sk-openai",
        "chat",
        0.3,
    )
    clean_env.setenv("GYM_LLM_JUDGE_BASE_URL", "http://judge/v1")
    clean_env.setenv("GYM_LLM_JUDGE_API_KEY", "sk-judge")
    assert JudgeConfig.coerce(None).base_url == "http://judge/v1"
    assert JudgeConfig.coerce(None).api_key == "sk-judge"
    # Explicit fields beat the environment.
    assert JudgeConfig.coerce({"model": "mine"}).model == "mine"


def test_config_is_hashable_and_hides_the_key():
    a, b = fast("http://x/v1"), fast("http://x/v1")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert "secret-key" not in repr(a)
    with pytest.raises(ValidationError, match="frozen"):
        a.model = "other"


@pytest.mark.parametrize(
    ("value", "field"),
    [({"modle": "x"}, "modle"), ({"api": "completions"}, "api"), ({"timeout": 0}, "timeout"), ("gpt", None)],
)
def test_bad_judge_arguments_name_the_field(value, field):
    with pytest.raises(ValueError) as error:
        JudgeConfig.coerce(value)
    if field:
        assert f"'{field}'" in str(error.value)


# ----------------------------------------------------------------------------- ask over HTTP
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_ask_sends_the_prompt_and_returns_the_text(api):
    with ModelServer(script=lambda conv, tools, req: f"saw {len(conv)} messages [[A=B]]") as server:
        config = fast(server.base_url, api=api, temperature=0.2, max_output_tokens=64)
        messages = [{"role": "system", "content": "be fair"}, {"role": "user", "content": "compare"}]
        text = asyncio.run(ask(config, messages))
    assert text == "saw 2 messages [[A=B]]"
    request = server.requests[-1]
    assert request["api"] == api and request["model"] == "judge-m" and request["temperature"] == 0.2
    if api == "responses":
        assert request["input"] == messages and request["max_output_tokens"] == 64
    else:
        assert request["messages"] == messages and request["max_tokens"] == 64


def test_ask_with_a_string_prompt_and_a_reused_client():
    with ModelServer(script=lambda conv, tools, req: conv[-1]["content"].upper()) as server:
        config = fast(server.base_url)

        async def twice() -> list[str]:
            return [await ask(config, "one"), await ask(config, "two")]

        assert asyncio.run(twice()) == ["ONE", "TWO"]
    assert server.requests[0]["input"] == [{"role": "user", "content": "one"}]


def test_ask_retries_a_server_error_then_succeeds():
    calls = []

    def flaky(conv, tools, req):
        calls.append(1)
        return ServerError(500) if len(calls) == 1 else "[[A=B]]"

    with ModelServer(script=flaky) as server:
        assert asyncio.run(ask(fast(server.base_url, max_retries=2), "q")) == "[[A=B]]"
    assert len(calls) == 2


def test_ask_raises_judge_error_when_the_judge_stays_down():
    with pytest.raises(JudgeError, match="gave up after 2 attempts"):
        asyncio.run(ask(fast(DOWN, max_retries=1), "q"))
    with ModelServer(script=lambda conv, tools, req: ServerError(503)) as server:
        with pytest.raises(JudgeError, match="503"):
            asyncio.run(ask(fast(server.base_url, max_retries=1), "q"))
    with ModelServer(script=lambda conv, tools, req: ServerError(400, "bad request")) as server:
        with pytest.raises(JudgeError, match="400"):  # not retried
            asyncio.run(ask(fast(server.base_url, max_retries=3), "q"))
        assert server.num_requests == 1


def test_a_reply_without_a_message_is_a_judge_error():
    reasoning_only = [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}]
    with ModelServer(script=lambda conv, tools, req: reasoning_only) as server:
        with pytest.raises(JudgeError, match="without answer text"):
            asyncio.run(ask(fast(server.base_url), "q"))


# ----------------------------------------------------------------------------- verdicts
@pytest.mark.parametrize(
    ("text", "position", "label", "issues"),
    [
        ("Equivalent. [[A=B]]", "first", "[[A=B]]", []),
        ("They differ: [[A!=B]]", "first", "[[A!=B]]", []),
        ("[[A!=B]] at first, but then [[A=B]]", "first", "[[A!=B]]", ["conflicting_verdicts"]),
        ("[[A!=B]] at first, but then [[A=B]]", "last", "[[A=B]]", ["conflicting_verdicts"]),
        ("[[A=B]] and again [[A=B]]", "first", "[[A=B]]", ["repeated_verdict"]),
        ("I cannot tell.", "first", None, ["no_verdict"]),
        ("[[A = B]]", "first", None, ["no_verdict"]),
    ],
)
def test_parse_verdict(text, position, label, issues):
    assert parse_verdict(text, position=position) == (label, issues)


def test_parse_verdict_prefers_the_longer_of_overlapping_labels():
    assert parse_verdict("INCORRECT", "CORRECT", "INCORRECT") == ("INCORRECT", [])
    assert parse_verdict("it is CORRECT", "CORRECT", "INCORRECT") == ("CORRECT", [])


def test_exact_form_strips_only_wrapping():
    assert exact_form(" \\boxed{Charles  DARWIN}. ") == "charles darwin"
    assert exact_form("$x+1$") == "x+1"
    assert exact_form("\\boxed{a} and \\boxed{b}") == "\\boxed{a} and \\boxed{b}"
    assert exact_form("C++") != exact_form("C")


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("0.5", "1/2", True),
        ("The Mitochondrion.", "mitochondrion", True),
        ("\\boxed{6}", "6", True),
        ("C++", "C", False),
        ("Paris", "Lyon", False),
        ("1/0", "1", False),
    ],
)
def test_reference_judgement(a, b, equal):
    assert reference_judgement(a, b) is equal


def test_the_oracle_plays_a_registered_judge():
    def parse(prompt: str):
        if not prompt.startswith("CMP "):
            return None
        a, _, b = prompt[4:].partition(" vs ")
        return a, b

    register_oracle_judge(parse)
    register_oracle_judge(parse)  # idempotent
    assert sum(getattr(f, "judge_parser", None) is parse for f in oracle.fallbacks) == 1
    with ModelServer() as server:
        config = fast(server.base_url)
        assert asyncio.run(ask(config, "CMP 0.5 vs 1/2")).endswith("[[A=B]]")
        assert asyncio.run(ask(config, "CMP Paris vs Lyon")).endswith("[[A!=B]]")
        with pytest.raises(JudgeError, match="404"):
            asyncio.run(ask(config, "something else"))
