"""Where and how to reach an HTTP judge: :class:`JudgeConfig`, filled from ``GYM_LLM_JUDGE_*`` variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

# How to name a judge, for the message of a judge that was never configured.
HOW_TO_CONFIGURE = (
    "pass judge={'model': ..., 'base_url': ...} (or a Judge object) to the env, e.g. "
    "gym.make(env_id, judge=...) or --env-kwargs '{\"judge\": {...}}', or set GYM_LLM_JUDGE_BASE_URL "
    "and GYM_LLM_JUDGE_MODEL; a judge on api.openai.com needs GYM_LLM_JUDGE_API_KEY or OPENAI_API_KEY"
)


def _env(name: str, *fallbacks: str) -> str | None:
    """The first of these environment variables that is set and not empty."""
    for key in (name, *fallbacks):
        value = os.environ.get(key)
        if value:
            return value
    return None


def _api_from_env() -> Any:
    # Any: the value is only checked against the Literal by validation (validate_default).
    return _env("GYM_LLM_JUDGE_API") or "responses"


class JudgeConfig(BaseModel):
    """Where and how to ask an HTTP judge. Immutable and hashable (clients are cached per config).

    Fields that are not given come from the environment: ``GYM_LLM_JUDGE_MODEL`` (default
    ``gpt-4.1-mini``), ``GYM_LLM_JUDGE_BASE_URL`` (then ``OPENAI_BASE_URL``, then
    ``https://api.openai.com/v1``), ``GYM_LLM_JUDGE_API_KEY`` (then ``OPENAI_API_KEY``) and
    ``GYM_LLM_JUDGE_API`` (``responses`` by default).

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

    Example:
        >>> JudgeConfig(model="judge", base_url="http://127.0.0.1:8000/v1").usable
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(default_factory=lambda: _env("GYM_LLM_JUDGE_MODEL") or DEFAULT_MODEL)
    base_url: str = Field(
        default_factory=lambda: _env("GYM_LLM_JUDGE_BASE_URL", "OPENAI_BASE_URL") or DEFAULT_BASE_URL
    )
    api_key: str | None = Field(
        default_factory=lambda: _env("GYM_LLM_JUDGE_API_KEY", "OPENAI_API_KEY"), repr=False
    )
    api: Literal["responses", "chat"] = Field(default_factory=_api_from_env, validate_default=True)
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    backoff: float = Field(default=0.5, ge=0)
    temperature: float | None = 0.0
    max_output_tokens: int | None = Field(default=None, gt=0)

    @property
    def usable(self) -> bool:
        """Whether asking can work at all: OpenAI's public API refuses every call without a key,
        so a config that points there without one (no judge was configured) fails at once."""
        return bool(self.api_key) or urlparse(self.base_url).hostname != urlparse(DEFAULT_BASE_URL).hostname

    @classmethod
    def from_env(cls, **overrides: Any) -> JudgeConfig:
        """A config from the ``GYM_LLM_JUDGE_*`` variables, with ``overrides`` taking precedence."""
        return cls(**overrides)

    @classmethod
    def coerce(cls, value: JudgeConfig | Mapping[str, Any] | None) -> JudgeConfig:
        """A config from an env's ``judge`` argument: a config, a dict of fields, or ``None`` (env vars).

        Raises:
            ValueError: The dict, or a ``GYM_LLM_JUDGE_*`` variable, has an unknown field or a bad
                value (the message names the field).
        """
        if isinstance(value, JudgeConfig):
            return value
        if value is not None and not isinstance(value, Mapping):
            raise ValueError(f"judge must be a JudgeConfig, a dict or None, got {type(value).__name__}")
        try:
            return cls.from_env(**(value or {}))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "judge"
            raise ValueError(f"judge: field '{field}': {err['msg']}") from None


def judge_configured_in_env() -> bool:
    """Whether the environment names a judge (``GYM_LLM_JUDGE_MODEL`` or ``GYM_LLM_JUDGE_BASE_URL``)."""
    return bool(os.environ.get("GYM_LLM_JUDGE_MODEL") or os.environ.get("GYM_LLM_JUDGE_BASE_URL"))
