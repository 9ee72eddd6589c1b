"""An OpenAI-compatible model server for tests and benchmarks, on 127.0.0.1.

Serves ``/v1/responses``, ``/v1/chat/completions`` and ``/v1/models`` over real HTTP. What the
"model" answers comes from a *script*: ``script(conversation, tools, request) -> reply`` where the
conversation is a list of Responses items (chat requests are converted), and the reply is a
string (a text answer), a list of Responses output items, or a :class:`ServerError`. Deterministic,
with optional latency and fault injection.

The default script, :func:`oracle`, plays the reference solution of whichever registered env's
task the conversation starts with, so ``gym-llm collect`` gets verified rollouts over HTTP.

Example:
    >>> with ModelServer(script=lambda conv, tools, req: "Hello!") as server:  # doctest: +SKIP
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="x")
    ...     client.responses.create(model="test", input="Hi").output_text
    'Hello!'

Run standalone with ``python -m gym_llm.testing.model_server --port 8000``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from gym_llm import fastjson
from gym_llm import items as it
from gym_llm.chat_format import from_chat_messages, to_chat_message

log = logging.getLogger(__name__)

Reply = Any  # str | list[item] | ServerError
Script = Callable[[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]], Reply]


@dataclass
class ServerError:
    """A reply that makes the server answer with an HTTP error instead of a completion."""

    status: int = 500
    message: str = "injected failure"


class ModelServer:
    """Run an OpenAI-compatible test server in a background thread.

    Args:
        script: Decides each reply (default :func:`oracle`).
        latency: Seconds to wait before answering each request.
        fail_every: Every n-th request gets ``fail_status`` (0: never).
        fail_status: The status of injected failures.
        model: The model name reported back.
        port: 0 picks a free port.
        record: Keep every request body in :attr:`requests` (off for benchmarks).
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        latency: float = 0.0,
        fail_every: int = 0,
        fail_status: int = 500,
        model: str = "gym-llm-test-model",
        host: str = "127.0.0.1",
        port: int = 0,
        record: bool = True,
    ) -> None:
        self.script = script or oracle
        self.latency = latency
        self.fail_every = fail_every
        self.fail_status = fail_status
        self.model = model
        self.host = host
        self.port = port
        self.record = record
        self.requests: list[dict[str, Any]] = []
        self.num_requests = 0
        self._ids = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> ModelServer:
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start_site())
            except BaseException as exc:  # reported to the caller of start()
                errors.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name="gym_llm-model-server", daemon=True)
        self._thread.start()
        ready.wait()
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

    async def _start_site(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]

    # ----------------------------------------------------------------- handlers
    async def _reply(self, request: web.Request, api: str) -> tuple[dict[str, Any], Reply] | web.Response:
        try:
            body = fastjson.loads(await request.read())
        except fastjson.JSONDecodeError:
            return _error(400, "request body is not JSON")
        self.num_requests += 1
        if self.record:
            self.requests.append({"api": api, **body})
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.fail_every and self.num_requests % self.fail_every == 0:
            return _error(self.fail_status, "injected failure")
        if api == "responses":
            conversation = it.input_items(body.get("input", []))
            tools = body.get("tools") or []
        else:
            conversation = from_chat_messages(body.get("messages", []))
            tools = [t.get("function", t) for t in body.get("tools") or []]
        try:
            reply = self.script(conversation, tools, body)
        except Exception as exc:  # a broken script is a server error, as a real server's bug would be
            return _error(500, f"script failed: {type(exc).__name__}: {exc}")
        if isinstance(reply, ServerError):
            return _error(reply.status, reply.message)
        return body, reply

    async def _responses(self, request: web.Request) -> web.Response:
        result = await self._reply(request, "responses")
        if isinstance(result, web.Response):
            return result
        body, reply = result
        n = next(self._ids)
        output = _output_items(reply, n)
        usage_in, usage_out = _count_tokens(body.get("input", "")), _count_tokens(output)
        payload = {
            "id": f"resp_{n}",
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model", self.model),
            "status": "completed",
            "output": output,
            "usage": {
                "input_tokens": usage_in,
                "output_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "parallel_tool_calls": True,
            "temperature": body.get("temperature"),
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "top_p": body.get("top_p"),
        }
        return _json_response(payload)

    async def _chat(self, request: web.Request) -> web.Response:
        result = await self._reply(request, "chat")
        if isinstance(result, web.Response):
            return result
        body, reply = result
        n = next(self._ids)
        message = to_chat_message(_output_items(reply, n))
        usage_in, usage_out = _count_tokens(body.get("messages", [])), _count_tokens(message)
        payload = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": usage_in,
                "completion_tokens": usage_out,
                "total_tokens": usage_in + usage_out,
            },
        }
        return _json_response(payload)

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": self.model, "object": "model", "created": 0, "owned_by": "gym_llm"}
        return web.json_response({"object": "list", "data": [model]})


def _output_items(reply: Reply, n: int) -> list[dict[str, Any]]:
    """The reply as Responses output items with the ids the API gives them."""
    output = [it.message(reply)] if isinstance(reply, str) else [dict(item) for item in reply]
    for index, item in enumerate(output):
        kind = item.get("type", "message")
        prefix = {"message": "msg", "function_call": "fc", "reasoning": "rs"}.get(kind, "item")
        item.setdefault("id", f"{prefix}_{n}_{index}")
        if kind == "reasoning":
            item.setdefault("summary", [])
    return output


def _count_tokens(value: Any) -> int:
    """A deterministic stand-in for token counts: whitespace-separated words of the JSON text."""
    return len(fastjson.dumps(value).split())


def _json_response(payload: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=fastjson.dumps(payload), status=status, content_type="application/json")


def _error(status: int, message: str) -> web.Response:
    return _json_response({"error": {"message": message, "type": "server_error", "code": status}}, status)


# --------------------------------------------------------------------- scripts
class _Oracle:
    """Plays the reference solution of the registered env whose task the conversation starts with.

    A conversation that starts no task goes to the scripts in :attr:`fallbacks` in turn (a judge
    env adds one that plays the judge); the first reply that is not ``None`` wins.
    """

    def __init__(self) -> None:
        self.fallbacks: list[Script] = []
        self._index: dict[tuple, tuple[Any, dict[str, Any]]] | None = None
        self._prefix_lengths: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, conversation: list[dict], tools: list[dict], request: dict) -> Reply:
        index = self._build_index()
        for length in self._prefix_lengths:
            found = index.get(_key(conversation[:length]))
            if found is not None:
                env, task = found
                action = env.reference_action(task, {"input": tuple(conversation), "tools": tuple(tools)})
                return action if not isinstance(action, str) else [it.message(action)]
        for fallback in self.fallbacks:
            reply = fallback(conversation, tools, request)
            if reply is not None:
                return reply
        return ServerError(404, "oracle: the conversation matches no task of a registered env")

    def _build_index(self) -> dict[tuple, tuple[Any, dict[str, Any]]]:
        with self._lock:
            if self._index is None:
                import gymnasium

                import gym_llm

                index: dict[tuple, tuple[Any, dict[str, Any]]] = {}
                for env_id in gym_llm.env_ids():
                    try:
                        env = gymnasium.make(env_id, disable_env_checker=True).unwrapped
                    except Exception as exc:  # one broken env must not take the server down
                        log.warning("oracle: skipping %s: %s: %s", env_id, type(exc).__name__, exc)
                        continue
                    for task in env.tasks:
                        prefix = it.input_items(task["responses_create_params"]["input"])
                        index.setdefault(_key(prefix), (env, task))
                self._prefix_lengths = sorted({len(key) for key in index}, reverse=True)
                self._index = index
            return self._index


def _key(conversation: list[dict[str, Any]]) -> tuple:
    return tuple((item.get("role"), it.content_text(item.get("content"))) for item in conversation)


oracle = _Oracle()


def echo(conversation: list[dict], tools: list[dict], request: dict) -> Reply:
    """Answer with the last user message's text."""
    users = [item for item in conversation if item.get("role") == "user"]
    return it.content_text(users[-1].get("content")) if users else ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run gym_llm's OpenAI-compatible test model server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--script", choices=["oracle", "echo"], default="oracle")
    args = parser.parse_args(argv)
    server = ModelServer(
        oracle if args.script == "oracle" else echo,
        host=args.host,
        port=args.port,
        latency=args.latency,
        record=False,
    )
    server.start()
    print(f"serving on {server.base_url} (script: {args.script}); Ctrl-C to stop", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
