"""Token-exact rollouts over real HTTP: the test server's byte tokens reach the rollout items."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from gym_llm.policies import ChatPolicy, ResponsesPolicy
from gym_llm.policies.token_ids import TOKEN_FIELDS, TokenIdsUnavailable
from gym_llm.rollouts import collect
from gym_llm.rollouts.output import load_finished
from gym_llm.testing import ModelServer
from gym_llm.testing.byte_tokens import generation_text, is_model_item


def assert_contiguous_turns(output: list[dict]) -> int:
    """NeMo RL's check: every turn's prompt extends everything seen so far. Returns the turn count."""
    seen: list[int] = []
    turns = 0
    turn_items: list[dict] = []
    for item in output:
        if is_model_item(item):
            turn_items.append(item)
        if "prompt_token_ids" not in item:
            assert not any(field in item for field in TOKEN_FIELDS)
            continue
        assert item is turn_items[-1] and is_model_item(item), "the ids sit on the turn's last item"
        prompt, generation = item["prompt_token_ids"], item["generation_token_ids"]
        assert prompt[: len(seen)] == seen, "non-contiguous turns"
        assert len(item["generation_log_probs"]) == len(generation)
        assert all(isinstance(lp, float) and lp < 0 for lp in item["generation_log_probs"])
        assert bytes(generation).decode() == generation_text(turn_items)
        seen = prompt + generation
        turns += 1
        turn_items = []
    return turns


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("env_id", ["llm/Weather-v0", "llm/MultiStep-v0"])
def test_policies_keep_token_ids_on_every_turn(tmp_path, api, env_id):
    with ModelServer(token_ids="always") as server:
        policy_cls = ChatPolicy if api == "chat" else ResponsesPolicy
        policy = policy_cls("m", server.base_url, return_token_ids=True)
        out = tmp_path / "r.jsonl"
        result = collect(env_id, out, policy=policy, limit=3, concurrency=2)
        requests = list(server.requests)
    assert result.summary["mean_reward"] == 1.0
    records = load_finished(out)
    for record in records:
        assert assert_contiguous_turns(record["response"]["output"]) == record["num_turns"] >= 1
    if api == "chat":
        assert all(r["return_token_ids"] and r["logprobs"] and r["top_logprobs"] == 0 for r in requests)
        assert all(r["return_tokens_as_token_ids"] for r in requests)
    else:  # earlier turns' ids are not sent back to the model
        assert not any(field in item for r in requests for item in r["input"] for field in TOKEN_FIELDS)


def test_without_the_flag_nothing_is_asked_or_kept(tmp_path):
    with ModelServer(token_ids="always") as server:
        out = tmp_path / "r.jsonl"
        collect("llm/Weather-v0", out, policy=ChatPolicy("m", server.base_url), limit=2)
        assert not any("return_token_ids" in r or "logprobs" in r for r in server.requests)
    for record in load_finished(out):
        assert not any(field in item for item in record["response"]["output"] for field in TOKEN_FIELDS)


@pytest.mark.parametrize(
    "api, server_mode, missing",
    [("chat", "never", "prompt_token_ids"), ("responses", "on_request", "last output item")],
)
def test_a_server_without_token_ids_fails_the_call_saying_so(api, server_mode, missing):
    async def first_call(url):
        policy_cls = ChatPolicy if api == "chat" else ResponsesPolicy
        policy = policy_cls("m", url, return_token_ids=True)
        try:
            await policy({"input": ({"role": "user", "content": "hi"},), "tools": ()})
        finally:
            await policy.aclose()

    with ModelServer(script=lambda conv, tools, req: "hello", token_ids=server_mode) as server:
        with pytest.raises(TokenIdsUnavailable, match=missing):
            asyncio.run(first_call(server.base_url))
        assert server.num_requests == 1


def test_vllm_log_prob_tokens_give_the_ids_when_token_ids_are_absent():
    from gym_llm.policies.token_ids import chat_token_fields

    completion = {
        "prompt_token_ids": [1, 2],
        "choices": [{"logprobs": {"content": [{"token": "token_id:7", "logprob": -0.5}]}}],
    }
    fields = chat_token_fields(completion, "http://x")
    assert fields == {"prompt_token_ids": [1, 2], "generation_token_ids": [7], "generation_log_probs": [-0.5]}
    completion["choices"][0]["logprobs"]["content"][0]["token"] = "hello"
    with pytest.raises(TokenIdsUnavailable, match="return_tokens_as_token_ids"):
        chat_token_fields(completion, "http://x")


def gym_llm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gym_llm.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_collect_return_token_ids_over_http(tmp_path):
    out = tmp_path / "r.jsonl"
    with ModelServer(record=False) as server:
        ok = gym_llm(
            "collect", "llm/Weather-v0", "-o", str(out), "--model", "m", "--base-url", server.base_url,
            "--api", "chat", "--return-token-ids", "--limit", "3",
        )  # fmt: skip
        assert ok.returncode == 0, ok.stderr
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(records) == 3 and all(r["reward"] == 1.0 for r in records)
        assert all(assert_contiguous_turns(r["response"]["output"]) == 2 for r in records)

        # the Responses API of a server that does not return ids: the run stops at its first call
        out.unlink()
        failed = gym_llm(
            "collect", "llm/Weather-v0", "-o", str(out), "--model", "m", "--base-url", server.base_url,
            "--return-token-ids",
        )  # fmt: skip
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "token ids were asked for" in failed.stderr and "last output item" in failed.stderr
    assert not out.exists()


def test_collect_return_token_ids_needs_a_model(tmp_path):
    result = gym_llm("collect", "llm/Weather-v0", "-o", str(tmp_path / "r.jsonl"), "--return-token-ids")
    assert result.returncode == 1 and "--return-token-ids needs --model" in result.stderr
