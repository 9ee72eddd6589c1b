"""An OpenAI-compatible model server for tests and benchmarks, on 127.0.0.1.

Serves ``/v1/responses``, ``/v1/chat/completions`` and ``/v1/models`` over real HTTP. What the
"model" answers comes from a *script*: ``script(conversation, tools, request) -> reply`` where the
conversation is a list of Responses items (chat requests are converted), and the reply is a
string (a text answer), a list of Responses output items, or a :class:`ServerError`. Deterministic,
with optional latency and fault injection.

The default script, :func:`oracle`, plays the reference solution of whichever registered env's
task the conversation starts with, so ``gym-llm collect`` gets verified rollouts over HTTP.

Example:
    >>> import openai
    >>> with ModelServer(script=lambda conv, tools, req: "Hello!") as server:
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
from gym_llm.background import BackgroundServer
from gym_llm.chat_format import from_chat_messages, to_chat_message
from gym_llm.judge import JudgePromptReader
from gym_llm.testing import byte_tokens
from gym_llm.testing.judge import play_judge

log = logging.getLogger(__name__)

Reply = Any  # str | list[item] | ServerError
Script = Callable[[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]], Reply]


@dataclass
class ServerError:
    """A reply that makes the server answer with an HTTP error instead of a completion."""

    status: int = 500
    message: str = "injected failure"


class ModelServer(BackgroundServer):
    """Run an OpenAI-compatible test server in a background thread.

    Args:
        script: Decides each reply (default :func:`oracle`).
        latency: Seconds to wait before answering each request.
        fail_every: Every n-th request gets ``fail_status`` (0: never).
        fail_status: The status of injected failures.
        model: The model name reported back.
        port: 0 picks a free port.
        record: Keep every request body in :attr:`requests` (off for benchmarks).
        token_ids: When to return token ids and log probs (of the server's own byte tokenizer,
            :mod:`gym_llm.testing.byte_tokens`): ``"on_request"`` answers vLLM's chat fields
            (``return_token_ids``, ``logprobs``, ``return_tokens_as_token_ids``); ``"always"``
            also puts them on each Responses turn's last output item, as NeMo Gym's model servers
            do; ``"never"`` ignores the request fields (a server that cannot return them).
    """

    thread_name = "gym_llm-model-server"

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
        token_ids: str = "on_request",
    ) -> None:
        if token_ids not in ("on_request", "always", "never"):
            raise ValueError(f"token_ids must be 'on_request', 'always' or 'never', got {token_ids!r}")
        self.token_ids = token_ids
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

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

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
        if self.token_ids == "always" and output:
            prompt = byte_tokens.encode(byte_tokens.prompt_text(it.input_items(body.get("input", []))))
            generation = byte_tokens.encode(byte_tokens.generation_text(output))
            output[-1].update(
                prompt_token_ids=prompt,
                generation_token_ids=generation,
                generation_log_probs=byte_tokens.log_probs(generation),
            )
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
        output = _output_items(reply, n)
        message = to_chat_message(output)
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
        if self.token_ids != "never":
            _add_vllm_token_fields(payload, body, output)
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


def _add_vllm_token_fields(
    payload: dict[str, Any], body: dict[str, Any], output: list[dict[str, Any]]
) -> None:
    """The token fields vLLM adds to a chat completion when the request asks for them."""
    choice = payload["choices"][0]
    generation = byte_tokens.encode(byte_tokens.generation_text(output))
    if body.get("return_token_ids"):
        conversation = from_chat_messages(body.get("messages", []))
        payload["prompt_token_ids"] = byte_tokens.encode(byte_tokens.prompt_text(conversation))
        choice["token_ids"] = generation
    if body.get("logprobs"):
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        choice["logprobs"] = {
            "content": [
                {
                    "token": f"token_id:{token}" if as_ids else bytes([token]).decode(errors="replace"),
                    "logprob": log_prob,
                    "bytes": [token],
                    "top_logprobs": [],
                }
                for token, log_prob in zip(generation, byte_tokens.log_probs(generation), strict=True)
            ]
        }


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

    A conversation that starts no task may be a judge prompt: the oracle plays a correct judge
    (:func:`gym_llm.testing.judge.play_judge`) for the prompts of every registered env that reads
    its own judge prompts (:class:`~gym_llm.judge.JudgePromptReader`). Anything else goes to the
    scripts in :attr:`fallbacks` in turn; the first reply that is not ``None`` wins.
    """

    def __init__(self) -> None:
        self.fallbacks: list[Script] = []
        self._judge_readers: list[JudgePromptReader] = []
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
        verdict = play_judge(self._judge_readers, conversation)
        if verdict is not None:
            return verdict
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
                from gym_llm.env import LLMEnv

                index: dict[tuple, tuple[Any, dict[str, Any]]] = {}
                for env_id in gym_llm.env_ids():
                    try:
                        env = gymnasium.make(env_id, disable_env_checker=True).unwrapped
                    except Exception as exc:  # one broken env must not take the server down
                        log.warning("oracle: skipping %s: %s: %s", env_id, type(exc).__name__, exc)
                        continue
                    if not isinstance(env, LLMEnv):
                        log.warning("oracle: skipping %s: not an LLMEnv", env_id)
                        continue
                    for task in env.tasks:
                        prefix = it.input_items(task["responses_create_params"]["input"])
                        index.setdefault(_key(prefix), (env, task))
                    if isinstance(env, JudgePromptReader):
                        self._judge_readers.append(env)
                self._prefix_lengths = sorted({len(key) for key in index}, reverse=True)
                self._index = index
            return self._index


def _key(conversation: list[dict[str, Any]]) -> tuple:
    # chat clients send a row's developer message as system (see ChatPolicy): both start the task
    return tuple(
        (
            "system" if item.get("role") == "developer" else item.get("role"),
            it.content_text(item.get("content")),
        )
        for item in conversation
    )


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
