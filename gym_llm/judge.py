"""LLM-as-a-judge: one shared configuration and call path for every env that needs a judge.

A judge is any OpenAI-compatible endpoint (Responses or Chat Completions API). Envs take
``judge: JudgeConfig | dict | None`` as a constructor keyword, so ``gymnasium.make(id, judge={...})``
works; fields that are not given come from environment variables:

==========================  =================================================================
``GYM_LLM_JUDGE_MODEL``     model name (default ``gpt-4.1-mini``)
``GYM_LLM_JUDGE_BASE_URL``  base URL (default ``$OPENAI_BASE_URL``, then ``https://api.openai.com/v1``)
``GYM_LLM_JUDGE_API_KEY``   API key (default ``$OPENAI_API_KEY``)
``GYM_LLM_JUDGE_API``       ``responses`` (default) or ``chat``
==========================  =================================================================

Example:
    >>> config = JudgeConfig(model="judge", base_url="http://127.0.0.1:8000/v1")
    >>> text = await ask(config, "Is 0.5 equal to 1/2? Answer [[A=B]] or [[A!=B]].")  # doctest: +SKIP
    >>> parse_verdict(text, "[[A=B]]", "[[A!=B]]")  # doctest: +SKIP
    ('[[A=B]]', [])
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import sys
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gym_llm.items import content_text

if TYPE_CHECKING:
    from gym_llm.policies.http import JSONClient

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# failure_kind of a verdict whose judge could not be reached (after retries) or answered nonsense
JUDGE_ERROR = "judge_error"

Messages = Sequence[Mapping[str, Any]]


def _env(name: str, *fallbacks: str, default: str | None = None) -> str | None:
    for key in (name, *fallbacks):
        value = os.environ.get(key)
        if value:
            return value
    return default


class JudgeError(RuntimeError):
    """The judge could not be asked: the endpoint failed after retries, or its reply had no text."""


class JudgeConfig(BaseModel):
    """Where and how to ask the judge. Immutable and hashable (clients are cached per config).

    Attributes:
        model: The judge model name.
        base_url: OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: Sent as a bearer token when given (never shown in ``repr``).
        api: ``"responses"`` (``POST /responses``) or ``"chat"`` (``POST /chat/completions``).
        timeout: Seconds for one HTTP attempt.
        max_retries: Attempts after the first on 429/5xx, timeouts and connection errors.
        backoff: Base delay of the retry backoff, in seconds.
        temperature: Sampling temperature (``None``: the server's default).
        max_output_tokens: Output token cap (``max_tokens`` for the chat API; ``None``: no cap).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(default_factory=lambda: _env("GYM_LLM_JUDGE_MODEL", default=DEFAULT_MODEL))
    base_url: str = Field(
        default_factory=lambda: _env("GYM_LLM_JUDGE_BASE_URL", "OPENAI_BASE_URL", default=DEFAULT_BASE_URL)
    )
    api_key: str | None = Field(
        default_factory=lambda: _env("GYM_LLM_JUDGE_API_KEY", "OPENAI_API_KEY"), repr=False
    )
    api: Literal["responses", "chat"] = Field(
        default_factory=lambda: _env("GYM_LLM_JUDGE_API", default="responses")
    )
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    backoff: float = Field(default=0.5, ge=0)
    temperature: float | None = 0.0
    max_output_tokens: int | None = Field(default=None, gt=0)

    @classmethod
    def from_env(cls, **overrides: Any) -> JudgeConfig:
        """A config from the ``GYM_LLM_JUDGE_*`` variables, with ``overrides`` taking precedence."""
        return cls(**overrides)

    @classmethod
    def coerce(cls, value: JudgeConfig | Mapping[str, Any] | None) -> JudgeConfig:
        """A config from an env's ``judge`` argument: a config, a dict of fields, or ``None`` (env vars).

        Raises:
            ValueError: The dict has an unknown field or a bad value (the message names it).
        """
        if isinstance(value, JudgeConfig):
            return value
        if value is None:
            return cls.from_env()
        if not isinstance(value, Mapping):
            raise ValueError(f"judge must be a JudgeConfig, a dict or None, got {type(value).__name__}")
        try:
            return cls.from_env(**value)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "judge"
            raise ValueError(f"judge: field '{field}': {err['msg']}") from None


def judge_configured_in_env() -> bool:
    """Whether the environment names a judge (``GYM_LLM_JUDGE_MODEL`` or ``GYM_LLM_JUDGE_BASE_URL``)."""
    return bool(os.environ.get("GYM_LLM_JUDGE_MODEL") or os.environ.get("GYM_LLM_JUDGE_BASE_URL"))


# ----------------------------------------------------------------------------- asking
# One JSONClient per (event loop, config): its aiohttp session belongs to one loop, and reusing it
# keeps connections alive across the many judge calls of a collection run.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[JudgeConfig, JSONClient]] = (
    weakref.WeakKeyDictionary()
)
_closers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()


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


def as_messages(prompt: str | Messages) -> list[dict[str, Any]]:
    """A prompt as chat messages: a string becomes one user message."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(message) for message in prompt]


async def ask(config: JudgeConfig, prompt: str | Messages) -> str:
    """Ask the judge and return its answer text.

    Args:
        config: The judge endpoint and sampling settings.
        prompt: A user prompt, or a list of ``{"role", "content"}`` messages (system first, …).

    Raises:
        JudgeError: The endpoint failed after its retries, or the reply carried no answer text.
    """
    from gym_llm.policies.http import ModelCallError

    messages = as_messages(prompt)

    payload: dict[str, Any] = {"model": config.model}
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


def _responses_text(body: Any) -> str | None:
    """The text of the last assistant message of a Responses object (reasoning items are skipped)."""
    output = body.get("output") if isinstance(body, dict) else None
    if not isinstance(output, list):
        return None
    for item in reversed(output):
        if isinstance(item, dict) and item.get("type", "message") == "message":
            content = item.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(
                    part.get("text", "") for part in content if isinstance(part, dict) and "text" in part
                )
            return None
    return None


def _chat_text(body: Any) -> str | None:
    try:
        content = body["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return content if isinstance(content, str) else ("" if content is None else None)


# ----------------------------------------------------------------------------- verdicts
def parse_verdict(
    text: str,
    equal_label: str = "[[A=B]]",
    not_equal_label: str = "[[A!=B]]",
    *,
    position: Literal["first", "last"] = "first",
) -> tuple[str | None, list[str]]:
    """The verdict label in a judge's answer, and any parsing issues.

    Labels are matched literally; where one label contains the other (``OK`` / ``OKAY``), the
    longer match wins at a position. ``position`` picks which match decides when there are several.

    Returns:
        ``(label or None, issues)`` where issues are among ``no_verdict``, ``conflicting_verdicts``
        and ``repeated_verdict``.
    """
    labels = sorted({label for label in (equal_label, not_equal_label) if label}, key=len, reverse=True)
    if not labels:
        return None, ["no_verdict"]
    pattern = re.compile("|".join(re.escape(label) for label in labels))
    found = [match.group(0) for match in pattern.finditer(text)]
    if not found:
        return None, ["no_verdict"]
    issues = []
    if len(set(found)) > 1:
        issues.append("conflicting_verdicts")
    elif len(found) > 1:
        issues.append("repeated_verdict")
    return (found[0] if position == "first" else found[-1]), issues


# ----------------------------------------------------------------------------- answer forms
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s.+\-/]")


def exact_form(text: str) -> str:
    """An answer with only its wrapping removed: outer ``$…$`` and ``\\boxed{…}``, case, runs of
    whitespace and a final period. Two answers with the same exact form are the same answer, so an
    env may skip the judge for them."""
    text = text.strip().rstrip(".").rstrip()
    if len(text) > 1 and text.startswith("$") and text.endswith("$"):
        text = text.strip("$").strip()
    if text.startswith("\\boxed{") and _closing_brace(text, len("\\boxed{")) == len(text) - 1:
        text = text[len("\\boxed{") : -1].strip()
    return " ".join(text.casefold().split()).rstrip(".").rstrip()


def _closing_brace(text: str, start: int) -> int:
    """The index of the ``}`` that closes the ``{`` just before ``start`` (-1 if it is not closed)."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def reference_judgement(first: str, second: str) -> bool:
    """What a correct judge says about two short answers in the example data: equal once wrapping,
    punctuation and articles are dropped, or equal as numbers. For test servers playing the judge."""
    a, b = _loose_form(first), _loose_form(second)
    if a == b:
        return True
    try:
        x, y = _number(a), _number(b)
    except (ValueError, ZeroDivisionError):
        return False
    return abs(x - y) <= 1e-9 * max(1.0, abs(x))


def _loose_form(text: str) -> str:
    text = exact_form(text).replace("\\text{", "").replace("\\,", " ")
    text = _ARTICLES.sub(" ", _PUNCT.sub(" ", text))
    return " ".join(text.split()).strip(" .")


def _number(text: str) -> float:
    text = text.replace(" ", "").replace(",", "")
    if "/" in text:
        numerator, _, denominator = text.partition("/")
        return float(numerator) / float(denominator)
    return float(text)


# ----------------------------------------------------------------------------- test server judge
def register_oracle_judge(parse: Callable[[str], tuple[str, str] | None]) -> None:
    """Let the test model server's oracle play a correct judge for the prompts ``parse`` recognises.

    ``parse(prompt)`` returns the two answers a judge prompt compares, or ``None`` for other
    prompts; the oracle then answers with ``[[A=B]]`` or ``[[A!=B]]`` by
    :func:`reference_judgement`. Does nothing unless :mod:`gym_llm.testing.model_server` is loaded
    (a judge env calls this at import and when constructed, which the oracle does for every env).
    """
    module = sys.modules.get("gym_llm.testing.model_server")
    if module is None:
        return
    fallbacks = module.oracle.fallbacks
    if any(getattr(fallback, "judge_parser", None) is parse for fallback in fallbacks):
        return

    def play_judge(conversation: list[dict[str, Any]], tools: list[dict], request: dict) -> str | None:
        users = [item for item in conversation if item.get("role") == "user"]
        if not users:
            return None
        pair = parse(content_text(users[-1].get("content")))
        if pair is None:
            return None
        if reference_judgement(*pair):
            return "The two answers state the same result. Verdict: [[A=B]]"
        return "The two answers differ. Verdict: [[A!=B]]"

    play_judge.judge_parser = parse  # type: ignore[attr-defined]
    fallbacks.append(play_judge)
