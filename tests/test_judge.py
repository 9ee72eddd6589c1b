"""The judge: configuration, the HTTP judge over real HTTP to the test server, custom judges,
verdict parsing, and the test server's oracle playing a correct judge for the judge envs."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest
from pydantic import ValidationError

from gym_llm.envs.equivalence_llm_judge.env import EquivalenceLLMJudgeEnv
from gym_llm.envs.math_with_judge.env import MathWithJudgeEnv, judge_messages
from gym_llm.judge import (
    HTTPJudge,
    Judge,
    JudgeConfig,
    JudgeError,
    JudgePromptReader,
    ask,
    make_judge,
    parse_verdict,
    template_fields,
)
from gym_llm.testing import ModelServer
from gym_llm.testing.judge import reference_judgement
from gym_llm.testing.model_server import ServerError

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


def test_a_bad_api_variable_names_the_field(clean_env):
    clean_env.setenv("GYM_LLM_JUDGE_API", "completions")
    with pytest.raises(ValueError, match="judge: field 'api'"):
        JudgeConfig.coerce(None)


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


# ----------------------------------------------------------------------------- no judge configured
def test_an_unconfigured_judge_fails_at_once_saying_how_to_configure_one(clean_env):
    judge = HTTPJudge()
    assert not judge.config.usable
    start = time.perf_counter()
    for _ in range(20):
        with pytest.raises(JudgeError, match="no judge is configured") as error:
            asyncio.run(ask(judge, "q"))
    assert time.perf_counter() - start < 2.0  # no network call, no retries
    message = str(error.value)
    assert "judge=" in message and "GYM_LLM_JUDGE_BASE_URL" in message and "OPENAI_API_KEY" in message


def test_which_configs_are_usable(clean_env):
    assert JudgeConfig(api_key="sk-x").usable  # OpenAI's API with a key
    assert JudgeConfig(base_url="http://127.0.0.1:8000/v1").usable  # a local server needs no key
    assert not JudgeConfig(base_url="https://api.openai.com/v1/").usable
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    assert JudgeConfig.from_env().usable


# ----------------------------------------------------------------------------- Judge objects
class SDKJudge:
    """A judge of the caller's own: the openai SDK's chat client, here against the test server."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    async def __call__(self, prompt) -> str:
        client = openai.AsyncOpenAI(base_url=self.base_url, api_key="x", max_retries=0)
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
        async with client:
            reply = await client.chat.completions.create(model="judge", messages=messages)
        return reply.choices[0].message.content


def test_make_judge_reads_every_form_of_the_judge_argument(clean_env):
    assert make_judge({"model": "m", "base_url": "http://x/v1"}).config == JudgeConfig(
        model="m", base_url="http://x/v1"
    )
    config = JudgeConfig(model="c")
    assert make_judge(config).config is config
    assert make_judge(None).config == JudgeConfig.from_env()
    mine = SDKJudge("http://x/v1")
    assert make_judge(mine) is mine and isinstance(mine, Judge)

    async def plain(prompt):
        return "[[A=B]]"

    assert make_judge(plain) is plain


@pytest.mark.parametrize(
    ("value", "message"),
    [(lambda prompt: "[[A=B]]", "must be async"), ("gpt", "got str"), (SDKJudge, "got type"), (3, "got int")],
)
def test_make_judge_refuses_what_is_no_judge(value, message):
    with pytest.raises(ValueError, match=message):
        make_judge(value)


def test_a_custom_judge_is_asked_over_its_own_client():
    with ModelServer(script=lambda conv, tools, req: f"{conv[-1]['content']} [[A=B]]") as server:
        assert asyncio.run(ask(SDKJudge(server.base_url), "same?")) == "same? [[A=B]]"
    assert server.requests[0]["api"] == "chat"


def test_whatever_a_custom_judge_raises_is_a_judge_error():
    with pytest.raises(JudgeError, match="APIConnectionError"):
        asyncio.run(ask(SDKJudge(DOWN), "q"))

    async def silent(prompt):
        return None

    with pytest.raises(JudgeError, match="returned NoneType"):
        asyncio.run(ask(silent, "q"))


# ----------------------------------------------------------------------------- prompts read back
def test_template_fields_reads_a_filled_template_back():
    template = "Q: {q}\n{{literal}} A: {a} again {a}\nB: {b}"
    filled = template.format(q="1+1?", a="2\n{two}", b="")
    assert template_fields(template, filled) == {"q": "1+1?", "a": "2\n{two}", "b": ""}
    assert template_fields(template, filled.replace("again 2", "again 3")) is None
    assert template_fields(template, "Q: x") is None
    with pytest.raises(ValueError, match="only plain"):
        template_fields("{a!r}", "x")
    with pytest.raises(ValueError, match="only plain"):
        template_fields("{0}", "x")


def test_the_judge_envs_read_their_own_prompts():
    math, equivalence = MathWithJudgeEnv(), EquivalenceLLMJudgeEnv()
    assert isinstance(math, JudgePromptReader) and isinstance(equivalence, JudgePromptReader)
    messages = judge_messages("Which day?", "\\text{Thursday}", "Friday")
    assert math.judged_answers(messages) == ("\\text{Thursday}", "Friday")
    assert math.judged_answers(messages[1]["content"]) == ("\\text{Thursday}", "Friday")
    assert equivalence.judged_answers(messages) is None
    custom = EquivalenceLLMJudgeEnv(judge_prompt_template="E={expected_answer}|G={generated_answer}")
    assert custom.judged_answers("E=1/2|G=0.5") == ("1/2", "0.5")
    assert custom.judged_answers([{"role": "user", "content": "unrelated"}]) is None


def test_the_oracle_server_plays_a_correct_judge_for_the_judge_envs():
    equivalence = EquivalenceLLMJudgeEnv()

    def prompt(expected: str, generated: str) -> str:
        return equivalence.judge_prompt_template.format(
            question="Q?", expected_answer=expected, generated_answer=generated
        )

    with ModelServer() as server:
        for api in ("responses", "chat"):
            judge = HTTPJudge(fast(server.base_url, api=api))
            assert asyncio.run(ask(judge, prompt("the mitochondrion", "Mitochondrion"))).endswith("[[A=B]]")
            assert asyncio.run(ask(judge, prompt("Paris", "Lyon"))).endswith("[[A!=B]]")
            assert asyncio.run(ask(judge, judge_messages("Q?", "0.5", "1/2"))).endswith("[[A=B]]")
        with pytest.raises(JudgeError, match="404"):
            asyncio.run(ask(judge, "something else"))
