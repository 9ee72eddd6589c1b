"""Tests of ``llm/GoogleSearch-v0`` (port of NeMo Gym's google_search).

The Google backend is tested over real HTTP against a stand-in for the Custom Search JSON API
(aiohttp.web on 127.0.0.1, in a background thread), which also serves pages for ``browse``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import gymnasium as gym
import pytest
from aiohttp import web
from gymnasium.utils.env_checker import check_env

import gym_llm
from gym_llm import items as it
from gym_llm.envs.google_search.backends import (
    GoogleSearchBackend,
    OfflineSearchBackend,
    SearchError,
    html_to_text,
    truncate_words,
)
from gym_llm.envs.google_search.env import (
    NO_BOXED_ANSWER,
    NO_FINAL_MESSAGE,
    NO_OUTPUT,
    GoogleSearchEnv,
    box_parser,
)
from gym_llm.tasks import TaskError
from gym_llm.testing.episodes import play, play_reference

ENV_ID = "llm/GoogleSearch-v0"
KEY = "test-key-123"
WIKI = "https://offline-wiki.example/"

PAGE = """<!doctype html><html><head><title>Tides</title><style>p {color: red}</style>
<script>var secret = "do not show";</script></head>
<body><nav>Home | About | Contact</nav>
<article><h1>Tides</h1><p>Tides are caused mainly by the Moon&#39;s gravity &amp; the Sun's.</p>
<p>Most coasts see two high tides a day.</p></article>
<footer>Copyright 2024</footer></body></html>"""


# ---------------------------------------------------------------------------- the stand-in server
@dataclass
class StandIn:
    url: str
    queries: list[dict[str, str]] = field(default_factory=list)

    @property
    def api(self) -> str:
        return f"{self.url}/customsearch/v1"


def _build_app(server: StandIn) -> web.Application:
    async def customsearch(request: web.Request) -> web.Response:
        query = dict(request.query)
        server.queries.append(query)
        if query.get("key") != KEY:
            error = {
                "code": 400,
                "message": f"API key not valid: {query.get('key')}",
                "status": "INVALID_ARGUMENT",
            }
            return web.json_response({"error": error}, status=400)
        if query["q"] == "quota":
            error = {
                "code": 429,
                "message": "Quota exceeded for quota metric 'Queries'",
                "status": "RESOURCE_EXHAUSTED",
            }
            return web.json_response({"error": error}, status=429)
        if query["q"] == "nothing":
            return web.json_response(
                {"kind": "customsearch#search", "searchInformation": {"totalResults": "0"}}
            )
        items = [
            {
                "kind": "customsearch#result",
                "title": f"Result {n} for {query['q']}",
                "htmlTitle": f"<b>Result</b> {n}",
                "link": f"{server.url}/page{n}.html",
                "displayLink": "127.0.0.1",
                "snippet": f"Snippet {n}.",
                "pagemap": {"metatags": [{"og:type": "article"}]},
            }
            for n in range(12)  # more than a page: the backend keeps 10
        ]
        return web.json_response({"kind": "customsearch#search", "items": items})

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def big(request: web.Request) -> web.Response:
        words = " ".join(f"w{i}" for i in range(12_000))
        return web.Response(text=f"<html><body><p>{words}</p></body></html>", content_type="text/html")

    async def plain(request: web.Request) -> web.Response:
        return web.Response(text="Just text.\n", content_type="text/plain")

    async def binary(request: web.Request) -> web.Response:
        return web.Response(body=b"\x00\x01\x02", content_type="application/octet-stream")

    async def empty(request: web.Request) -> web.Response:
        return web.Response(body=b"", content_type="text/html")

    app = web.Application()
    app.router.add_get("/customsearch/v1", customsearch)
    app.router.add_get("/big.html", big)
    app.router.add_get("/plain.txt", plain)
    app.router.add_get("/file.bin", binary)
    app.router.add_get("/empty.html", empty)
    app.router.add_get("/{name:page[0-9]*\\.html}", page)
    return app


@pytest.fixture(scope="module")
def server() -> Iterator[StandIn]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="google-stand-in", daemon=True)
    thread.start()
    stand_in = StandIn(url="")
    runner = web.AppRunner(_build_app(stand_in))

    async def start() -> int:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        return runner.addresses[0][1]

    port = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    stand_in.url = f"http://127.0.0.1:{port}"
    try:
        yield stand_in
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def google_env(server: StandIn) -> GoogleSearchEnv:
    return GoogleSearchEnv(backend="google", google_api_key=KEY, google_cx="cx-1", google_base_url=server.api)


@pytest.fixture(scope="module")
def env() -> GoogleSearchEnv:
    return GoogleSearchEnv()


def _search(query: str, call_id: str = "c1") -> list[dict]:
    return [it.function_call("search", {"query": query}, call_id)]


def _browse(url: str, call_id: str = "c2") -> list[dict]:
    return [it.function_call("browse", {"url": url}, call_id)]


def _last_output(obs: dict) -> dict:
    return json.loads(obs["input"][-1]["output"])


def _results(obs: dict) -> list[dict]:
    return json.loads(_last_output(obs)["search_results"])["items"]


# ---------------------------------------------------------------------------- Google backend over HTTP
def test_google_search_returns_trimmed_items(google_env, server) -> None:
    google_env.reset(options={"task_index": 0})
    obs, reward, terminated, _, _ = google_env.step(_search("tides moon"))
    assert not terminated and reward == 0.0
    results = _results(obs)
    assert len(results) == 10
    assert results[0] == {
        "title": "Result 0 for tides moon",
        "link": f"{server.url}/page0.html",
        "snippet": "Snippet 0.",
    }
    assert server.queries[-1] == {"key": KEY, "cx": "cx-1", "q": "tides moon"}


def test_google_search_with_no_items(google_env) -> None:
    google_env.reset(options={"task_index": 0})
    obs, *_ = google_env.step(_search("nothing"))
    assert _results(obs) == []


def test_google_api_error_is_a_tool_error_without_the_key(server) -> None:
    env = GoogleSearchEnv(
        backend="google", google_api_key="bad-key-999", google_cx="cx", google_base_url=server.api
    )
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("tides"))
    error = _last_output(obs)["error"]
    assert "HTTP 400" in error and "API key not valid" in error
    assert "bad-key-999" not in error  # the key never reaches the model

    good = GoogleSearchEnv(backend="google", google_api_key=KEY, google_cx="cx", google_base_url=server.api)
    good.reset(options={"task_index": 0})
    obs, *_ = good.step(_search("quota"))
    assert "HTTP 429" in _last_output(obs)["error"] and "Quota exceeded" in _last_output(obs)["error"]


def test_unreachable_api_is_a_tool_error() -> None:
    env = GoogleSearchEnv(
        backend="google", google_api_key=KEY, google_cx="cx", google_base_url="http://127.0.0.1:9/x"
    )
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("tides"))
    error = _last_output(obs)["error"]
    assert "Google search request failed" in error and KEY not in error


def test_missing_key_or_cx_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_CX", raising=False)
    with pytest.raises(ValueError, match="GOOGLE_API_KEY"):
        GoogleSearchEnv(backend="google", google_cx="cx")
    with pytest.raises(ValueError, match="GOOGLE_CX"):
        GoogleSearchEnv(backend="google", google_api_key=KEY)
    with pytest.raises(ValueError, match="GOOGLE_API_KEY"):
        gym.make(ENV_ID, backend="google")


def test_key_and_cx_from_the_environment(monkeypatch, server) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_CX", "cx-from-env")
    env = gym.make(ENV_ID, backend="google", google_base_url=server.api)
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("tides"))
    assert len(_results(obs)) == 10 and server.queries[-1]["cx"] == "cx-from-env"
    assert KEY not in repr(env.unwrapped.backend)


def test_browse_extracts_the_visible_text(google_env, server) -> None:
    google_env.reset(options={"task_index": 0})
    obs, *_ = google_env.step(_browse(f"{server.url}/page3.html"))
    text = _last_output(obs)["page_content"]
    assert text.splitlines() == [
        "Tides",
        "Tides are caused mainly by the Moon's gravity & the Sun's.",
        "Most coasts see two high tides a day.",
    ]


def test_browse_truncates_long_pages(google_env, server) -> None:
    google_env.reset(options={"task_index": 0})
    obs, *_ = google_env.step(_browse(f"{server.url}/big.html"))
    text = _last_output(obs)["page_content"]
    words = text.split()
    assert (
        len(words) == 10_001 and words[:2] == ["w0", "w1"] and words[5000] == "..." and words[-1] == "w11999"
    )


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/plain.txt", {"page_content": "Just text."}), ("/empty.html", {"page_content": "No HTML found"})],
)
def test_browse_other_content(google_env, server, path: str, expected: dict) -> None:
    google_env.reset(options={"task_index": 0})
    obs, *_ = google_env.step(_browse(server.url + path))
    assert _last_output(obs) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/missing.html", "HTTP 404"),
        ("/file.bin", "not a text page"),
        ("file:///etc/passwd", "only http and https"),
    ],
)
def test_browse_failures_are_tool_errors(google_env, server, url: str, message: str) -> None:
    google_env.reset(options={"task_index": 0})
    obs, *_ = google_env.step(_browse(url if "://" in url else server.url + url))
    assert message in _last_output(obs)["error"]


def test_reference_episode_over_http(server) -> None:
    row = {
        "responses_create_params": {"input": "Why are there tides?\nA: Wind\nB: The Moon's gravity"},
        "expected_answer": "B",
        "reference_query": "tides moon",
    }
    env = GoogleSearchEnv(
        tasks=[row], backend="google", google_api_key=KEY, google_cx="cx", google_base_url=server.api
    )
    result = play_reference(env)
    assert result.reward == 1.0 and result.steps == 3 and result.info["tool_errors"] == 0
    browse = it.function_calls(env.response["output"], "browse")[0]
    assert it.parse_arguments(browse) == {"url": f"{server.url}/page0.html"}


def test_backend_can_be_used_directly(server) -> None:
    backend = GoogleSearchBackend(KEY, "cx", base_url=server.api)
    results = asyncio.run(backend.search("direct"))
    assert results[1]["link"] == f"{server.url}/page1.html"
    with pytest.raises(SearchError, match="HTTP 404"):
        asyncio.run(backend.browse(f"{server.url}/nope"))


# ---------------------------------------------------------------------------- offline backend
def test_offline_search_ranks_the_relevant_document_first(env) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("half-life of carbon-14"))
    results = _results(obs)
    assert results[0]["link"] == WIKI + "radiocarbon-dating"
    assert "5,730 years" in results[0]["snippet"]
    assert 1 <= len(results) <= 10
    assert all(set(r) == {"title", "link", "snippet"} and len(r["snippet"]) <= 200 for r in results)


def test_offline_plurals_match(env) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("tardigrade"))
    assert _results(obs)[0]["link"] == WIKI + "tardigrades"


def test_offline_search_without_matches(env) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("zzzqx qwxv"))
    assert _results(obs) == []
    obs, *_ = env.step(_search("", "c9"))
    assert _results(obs) == []


def test_offline_browse(env) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_browse(WIKI + "insulin"))
    assert _last_output(obs)["page_content"].startswith("Insulin\n\nInsulin is a peptide hormone")
    obs, *_ = env.step(_browse(WIKI + "insulin/", "c3"))  # a trailing slash is forgiven
    assert "Banting" in _last_output(obs)["page_content"]
    obs, *_ = env.step(_browse(WIKI + "unicorns", "c4"))
    assert "no such page" in _last_output(obs)["error"]


def test_offline_collection_is_complete() -> None:
    docs = OfflineSearchBackend().documents
    assert 30 <= len(docs) <= 60
    assert len({doc["url"] for doc in docs}) == len(docs)


def test_custom_document_collection() -> None:
    docs = [{"url": "https://a.example/x", "title": "Axolotl", "text": "Axolotls regrow limbs."}]
    backend = OfflineSearchBackend(docs, max_words=2)
    assert asyncio.run(backend.search("axolotl limbs"))[0]["link"] == "https://a.example/x"
    assert asyncio.run(backend.browse("https://a.example/x")) == "Axolotl ... limbs."
    with pytest.raises(ValueError, match="duplicate url"):
        OfflineSearchBackend(docs * 2)
    with pytest.raises(ValueError, match="'text'"):
        OfflineSearchBackend([{"url": "u", "title": "t"}])


def test_custom_backend_object() -> None:
    class Fixed:
        async def search(self, query: str) -> list[dict]:
            return [{"title": "T", "link": "L", "snippet": query}]

        async def browse(self, url: str) -> str:
            return url.upper()

    env = GoogleSearchEnv(backend=Fixed())
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(_search("q") + _browse("abc"))
    assert json.loads(json.loads(obs["input"][-2]["output"])["search_results"])["items"][0]["snippet"] == "q"
    assert _last_output(obs) == {"page_content": "ABC"}
    with pytest.raises(ValueError, match="unknown backend"):
        GoogleSearchEnv(backend="bing")
    with pytest.raises(TypeError, match="backend"):
        GoogleSearchEnv(backend=42)


def test_text_helpers() -> None:
    assert truncate_words("a b c", 3) == "a b c"
    assert truncate_words("a  b\nc d e f", 4) == "a  b ... e f"
    assert html_to_text("<p>x&lt;y</p><script>no</script><li>one</li><li>two</li>") == "x<y\none\ntwo"


# ---------------------------------------------------------------------------- verify
def _response(*texts_or_items: object) -> dict:
    output = [
        it.message(x) if isinstance(x, str) else x
        for x in [*_search("q"), it.function_call_output("c1", "{}"), *texts_or_items]
    ]
    return {"output": output}


ROW = {"responses_create_params": {"input": "Q?\nA: x\nB: y\nC: z"}, "expected_answer": "C"}


def test_verify_right_and_wrong(env) -> None:
    right = env.verify(ROW, _response("Thinking... the answer is \\boxed{C}."))
    assert right.reward == 1.0 and right.details == {"parsed_option": "C"} and right.failure_kind is None
    wrong = env.verify(ROW, _response("\\boxed{A}"))
    assert wrong.reward == 0.0 and wrong.details == {"parsed_option": "A"} and wrong.failure_kind is None


def test_verify_takes_the_first_box_exactly(env) -> None:
    # NeMo uses re.search: the first \boxed{} counts, and its content must equal the letter exactly.
    assert env.verify(ROW, _response("\\boxed{A} no wait, \\boxed{C}")).details["parsed_option"] == "A"
    assert env.verify(ROW, _response("\\boxed{ C }")).reward == 0.0
    assert env.verify(ROW, _response("\\boxed{\\text{C}}")).details["parsed_option"] == "\\text{C"


def test_verify_reads_only_the_last_item(env) -> None:
    # A boxed answer followed by a tool call or a reasoning item does not count.
    assert env.verify(ROW, _response("\\boxed{C}", *_search("more"))).failure_kind == NO_FINAL_MESSAGE
    assert env.verify(ROW, _response("\\boxed{C}", it.reasoning("hmm"))).failure_kind == NO_FINAL_MESSAGE
    user = {"type": "message", "role": "user", "content": "\\boxed{C}"}
    assert env.verify(ROW, _response(user)).failure_kind == NO_FINAL_MESSAGE


def test_verify_message_shapes(env) -> None:
    parts = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "The answer"},
            {"type": "output_text", "text": " is \\boxed{C}"},
        ],
    }
    assert env.verify(ROW, _response(parts)).reward == 1.0
    plain = {"role": "assistant", "content": "\\boxed{C}"}  # an easy-input message: no type, string content
    assert env.verify(ROW, _response(plain)).reward == 1.0


def test_verify_malformed(env) -> None:
    assert env.verify(ROW, _response("The answer is C.")).failure_kind == NO_BOXED_ANSWER
    assert env.verify(ROW, {"output": []}).failure_kind == NO_OUTPUT
    assert env.verify(ROW, {"output": None}).failure_kind == NO_OUTPUT
    assert env.verify(ROW, {"output": ["junk"]}).failure_kind == NO_FINAL_MESSAGE
    assert env.verify(ROW, {"output": [{"type": "message", "role": "assistant", "content": 5}]}).reward == 0.0


def test_box_parser() -> None:
    assert box_parser("The answer is \\boxed{42}") == "42"
    assert box_parser("After calculation: \\boxed{x + y = 10}") == "x + y = 10"
    assert box_parser("No boxed content here") is None
    assert box_parser("") is None and box_parser(None) is None


# ---------------------------------------------------------------------------- episodes and rows
def test_reference_solves_every_example_row() -> None:
    env = gym.make(ENV_ID)
    assert len(env.unwrapped.tasks) >= 5
    for index in range(len(env.unwrapped.tasks)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert result.info["tool_errors"] == 0
        calls = [call["name"] for call in it.function_calls(env.unwrapped.response["output"])]
        assert calls == ["search", "browse"]


def test_example_answers_are_in_the_documents() -> None:
    # Each row's reference page is the top search hit for its reference query.
    env = GoogleSearchEnv()
    backend = env.backend
    for row in env.tasks:
        if row.get("reference_query") and row.get("reference_url"):
            top = asyncio.run(backend.search(row["reference_query"]))[0]["link"]
            assert top == row["reference_url"], row["reference_query"]


def test_text_episode(env) -> None:
    result = play(
        env,
        [
            '<tool_call>{"name": "search", "arguments": {"query": "noble gas atmosphere argon"}}</tool_call>',
            "<think>Argon, about 0.93 percent.</think>The answer is \\boxed{C}.",
        ],
        task_index=3,
    )
    assert result.reward == 1.0 and result.terminated and result.info["details"]["parsed_option"] == "C"


def test_row_shape_is_nemos(env) -> None:
    obs, info = env.reset(options={"task_index": 0})
    row = env.tasks[0]
    assert isinstance(row["responses_create_params"]["input"], str)
    assert obs["input"] == ({"role": "user", "content": row["responses_create_params"]["input"]},)
    assert [tool["name"] for tool in obs["tools"]] == ["search", "browse"]
    assert list(obs["tools"]) == [spec.schema for spec in GoogleSearchEnv.tools.values()]
    assert obs["tools"][1]["description"].endswith("it will be truncated to 10,000 words.")
    assert info["params"]["instructions"].endswith("inside \\boxed{}.")


def test_check_env() -> None:
    check_env(gym.make(ENV_ID).unwrapped)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"expected_answer": None}, "expected_answer"),
        ({"task_difficulty_qwen3_32b_avg_8": "hard"}, "task_difficulty_qwen3_32b_avg_8"),
        ({"reference_query": 3}, "reference_query"),
    ],
)
def test_bad_rows_name_the_field(change: dict, field: str) -> None:
    with pytest.raises(TaskError, match=f"field '{field}'"):
        GoogleSearchEnv(tasks=[{**ROW, **change}])


def test_nemo_row_reverifies() -> None:
    row = {**ROW, "task_difficulty_qwen3_32b_avg_8": 0.5, "response": _response("\\boxed{C}")}
    assert gym_llm.verify(ENV_ID, row).reward == 1.0
