"""Token ids and log probs of a model turn, kept on its output items as NeMo Gym keeps them.

A trainer that works on tokens needs exactly what the model saw and sampled. When asked, the
policies put three fields on the **last output item of each model turn** (NeMo Gym's names and
placement, so NeMo RL reads gym_llm rollouts as its own):

- ``prompt_token_ids``: the whole prompt of that turn, as the server tokenized it;
- ``generation_token_ids``: the tokens the model generated;
- ``generation_log_probs``: their log probabilities, one per generated token.

Over Chat Completions they come from vLLM's response fields (``prompt_token_ids`` and the
choice's ``token_ids``, asked for with ``return_token_ids``; per-token ``logprobs`` with
``return_tokens_as_token_ids``), or from a message that already carries the three fields (NeMo
Gym's model servers). Over the Responses API the server must put them on the output items itself.
A server that returns none of this raises :class:`TokenIdsUnavailable` at the first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gym_llm.policies.http import ModelCallError

TOKEN_FIELDS = ("prompt_token_ids", "generation_token_ids", "generation_log_probs")

# What a Chat Completions request adds to get token ids and log probs back from vLLM.
VLLM_CHAT_TOKEN_FIELDS = {
    "logprobs": True,
    "top_logprobs": 0,
    "return_tokens_as_token_ids": True,
    "return_token_ids": True,
}


class TokenIdsUnavailable(ModelCallError):
    """Token ids were asked for and the server did not return them (it cannot, or was not told to)."""


def chat_token_fields(completion: Mapping[str, Any], url: str) -> dict[str, list]:
    """The three token fields of a chat completion's first choice.

    Args:
        completion: The decoded ``/chat/completions`` body.
        url: The server, for error messages.

    Returns:
        ``prompt_token_ids``, ``generation_token_ids`` and ``generation_log_probs``.

    Raises:
        TokenIdsUnavailable: The body lacks them, or its generated ids and log probs disagree.
    """
    choice = completion["choices"][0]
    message = choice.get("message") or {}
    if all(message.get(field) is not None for field in TOKEN_FIELDS):  # a NeMo Gym model server
        return _checked({field: message[field] for field in TOKEN_FIELDS}, url)
    prompt_ids = completion.get("prompt_token_ids")
    generation_ids = choice.get("token_ids")
    content = (choice.get("logprobs") or {}).get("content")
    if prompt_ids is None or not isinstance(content, list):
        missing = [
            name
            for name, value in (
                ("prompt_token_ids", prompt_ids),
                ("choices[0].token_ids", generation_ids),
                ("choices[0].logprobs", content),
            )
            if value is None
        ]
        raise TokenIdsUnavailable(
            f"{url}: token ids were asked for (return_token_ids, logprobs) but the server returned no "
            f"{', '.join(missing)}; use a server that returns them (vLLM's chat API does)"
        )
    log_probs = [float(entry["logprob"]) for entry in content]
    if generation_ids is None:  # older vLLM: the ids only in the log-prob tokens ("token_id:N")
        generation_ids = [_token_id(entry.get("token"), url) for entry in content]
    return _checked(
        {
            "prompt_token_ids": prompt_ids,
            "generation_token_ids": generation_ids,
            "generation_log_probs": log_probs,
        },
        url,
    )


def require_on_output(response: Mapping[str, Any], url: str) -> None:
    """Check that a Responses object carries the token fields on its last output item.

    Raises:
        TokenIdsUnavailable: It does not.
    """
    output = response.get("output") or []
    last = output[-1] if output else {}
    if not all(last.get(field) is not None for field in TOKEN_FIELDS):
        raise TokenIdsUnavailable(
            f"{url}: token ids were asked for but the response carries no {'/'.join(TOKEN_FIELDS)} on "
            "its last output item; this server cannot return them over the Responses API (use "
            "--api chat with vLLM, or a model server configured to return token ids)"
        )
    _checked({field: last[field] for field in TOKEN_FIELDS}, url)


def attach(output: list[dict[str, Any]], fields: Mapping[str, list]) -> None:
    """Put the token fields on the last item of a turn's ``output`` (NeMo Gym's placement)."""
    if output:
        output[-1].update(fields)


def without_token_fields(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """An input item without the token fields (the model reads the conversation, not its ids)."""
    if "prompt_token_ids" not in item:
        return item
    return {key: value for key, value in item.items() if key not in TOKEN_FIELDS}


def _checked(fields: dict[str, Any], url: str) -> dict[str, Any]:
    if len(fields["generation_token_ids"]) != len(fields["generation_log_probs"]):
        raise TokenIdsUnavailable(
            f"{url}: {len(fields['generation_token_ids'])} generated token ids but "
            f"{len(fields['generation_log_probs'])} log probs"
        )
    return {key: list(value) for key, value in fields.items()}


def _token_id(token: Any, url: str) -> int:
    if isinstance(token, str) and token.startswith("token_id:"):
        return int(token[len("token_id:") :])
    raise TokenIdsUnavailable(
        f"{url}: log-prob tokens are text ({token!r}), not token ids: the server ignored "
        "return_tokens_as_token_ids and returned no choices[0].token_ids"
    )
