"""The default judge: :class:`HTTPJudge` asks any OpenAI-compatible endpoint (Responses or Chat API)."""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import weakref
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from gym_llm import items as it
from gym_llm.judge.config import HOW_TO_CONFIGURE, JudgeConfig
from gym_llm.judge.protocol import JudgeError, Prompt, as_messages

if TYPE_CHECKING:
    from gym_llm.policies.http import JSONClient

log = logging.getLogger(__name__)

# One JSONClient per (event loop, config): its aiohttp session belongs to one loop, and reusing it
# keeps connections alive across the many judge calls of a collection run.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[JudgeConfig, JSONClient]] = (
    weakref.WeakKeyDictionary()
)
_closers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()
_warned_unusable = False


class HTTPJudge:
    """A :class:`~gym_llm.judge.Judge` that asks an OpenAI-compatible endpoint over HTTP.

    Retries 429/5xx, timeouts and connection errors with backoff (``config.max_retries``). A config
    that cannot work (OpenAI's public API without a key: no judge was configured) fails every call
    at once, with a message that says how to configure one, instead of spending the retries.

    Args:
        config: The endpoint and sampling settings (default: all from ``GYM_LLM_JUDGE_*``).

    Example:
        >>> judge = HTTPJudge(JudgeConfig(model="judge", base_url="http://127.0.0.1:8000/v1"))
        >>> text = await judge("Is 0.5 equal to 1/2? Answer [[A=B]] or [[A!=B]].")  # doctest: +SKIP
    """

    def __init__(self, config: JudgeConfig | None = None) -> None:
        self.config = config if config is not None else JudgeConfig.from_env()

    def __repr__(self) -> str:
        return f"HTTPJudge({self.config!r})"

    async def __call__(self, prompt: Prompt) -> str:
        """Ask the judge and return its answer text.

        Args:
            prompt: A user prompt, or a list of ``{"role", "content"}`` messages (system first, …).

        Returns:
            The text of the judge's reply (its last assistant message; reasoning is skipped).

        Raises:
            JudgeError: No judge is configured, the endpoint failed after its retries, or the reply
                carried no answer text.
        """
        from gym_llm.policies.http import ModelCallError

        config = self.config
        if not config.usable:
            _warn_unusable()
            raise JudgeError(f"no judge is configured (no API key for {config.base_url}): {HOW_TO_CONFIGURE}")
        messages = as_messages(prompt)
        payload: dict[str, Any] = {"model": config.model, "stream": False}  # some servers stream by default
        if config.temperature is not None:
            payload["temperature"] = config.temperature
        if config.api == "responses":
            payload["input"] = messages
            if config.max_output_tokens is not None:
                payload["max_output_tokens"] = config.max_output_tokens
            path = "/responses"
        else:
            payload["messages"] = messages
            if config.max_output_tokens is not None:
                payload["max_tokens"] = config.max_output_tokens
            path = "/chat/completions"
        try:
            body = await (await _client(config)).post(path, payload)
        except ModelCallError as exc:
            raise JudgeError(f"judge {config.model!r}: {exc}") from None
        text = _responses_text(body) if config.api == "responses" else _chat_text(body)
        if text is None:
            raise JudgeError(f"judge {config.model!r} replied without answer text: {str(body)[:200]}")
        return text


def _warn_unusable() -> None:
    global _warned_unusable
    if not _warned_unusable:  # once per process: every judged episode would repeat it
        _warned_unusable = True
        log.warning("an env needs an LLM judge but none is configured: %s", HOW_TO_CONFIGURE)


async def _close_at_shutdown(clients: dict[JudgeConfig, JSONClient]) -> AsyncGenerator[None, None]:
    """Parked in each loop: ``loop.shutdown_asyncgens()`` (which ``asyncio.run`` calls) resumes it
    to close that loop's judge sessions before the loop closes."""
    try:
        yield
    finally:
        for client in list(clients.values()):
            await client.close()


async def _client(config: JudgeConfig) -> JSONClient:
    # Imported here: the policies package pulls in the openai SDK, which env imports should not pay for.
    from gym_llm.policies.http import JSONClient

    loop = asyncio.get_running_loop()
    with _clients_lock:
        per_loop = _clients.get(loop)
        closer = None
        if per_loop is None:
            per_loop = _clients[loop] = {}
            closer = _closers[loop] = _close_at_shutdown(per_loop)
        client = per_loop.get(config)
        if client is None:
            client = per_loop[config] = JSONClient(
                config.base_url,
                config.api_key,
                timeout=config.timeout,
                max_retries=config.max_retries,
                backoff=config.backoff,
            )
    if closer is not None:
        await closer.__anext__()  # started, so the loop's async-generator hooks track it
    return client


def _close_clients() -> None:
    """At exit, close the judge sessions of loops that never shut down (``run_sync``'s loops)."""
    with _clients_lock:
        closers = list(_closers.items())
    for loop, closer in closers:
        if loop.is_closed() or loop.is_running():
            continue
        try:
            loop.run_until_complete(closer.aclose())
        except Exception:  # best effort at interpreter exit
            pass


atexit.register(_close_clients)


def _responses_text(body: Any) -> str | None:
    """The text of the last assistant message of a Responses object (reasoning items are skipped)."""
    output = body.get("output") if isinstance(body, dict) else None
    if not isinstance(output, list):
        return None
    for item in reversed(output):
        if isinstance(item, dict) and item.get("type", "message") == "message":
            content = item.get("content")
            # No content at all is no answer (a JudgeError), unlike an empty text.
            return it.content_text(content) if isinstance(content, (str, list)) else None
    return None


def _chat_text(body: Any) -> str | None:
    try:
        content = body["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return content if isinstance(content, str) else ("" if content is None else None)
