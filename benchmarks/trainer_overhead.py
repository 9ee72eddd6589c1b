"""gym_llm's CPU time per episode inside each trainer adapter, next to the model's generation time.

Everything gym_llm does for an episode in an adapter is timed: reset, tool calls, parsing,
rendering tool outputs through the chat template, verification and the trainer-side bookkeeping.
The model's generation is left out (a scripted reply stands in for it) and timed on its own: the
tiny offline model generating the same step on CPU, a lower bound for any real model.

Runs the adapters whose trainer is installed (TRL: environment and rollout modes; VeRL; NeMo RL's
environment, which needs only torch and transformers) and says which it skipped::

    python benchmarks/trainer_overhead.py --episodes 200

Target: at most 1 ms of gym_llm CPU per Weather episode.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integrations"))

WEATHER = "llm/Weather-v0"
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "SF"}}\n</tool_call>'
ANSWER = "It is cold in SF."


def per_episode_us(run_batch: Callable[[], Any], episodes_per_batch: int, batches: int) -> float:
    """Median over batches of the wall time per episode, in microseconds (after one warm-up batch)."""
    run_batch()
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        run_batch()
        times.append((time.perf_counter() - start) / episodes_per_batch * 1e6)
    return statistics.median(times)


def trl_environment_mode(batch: int, batches: int) -> float:
    """TRL environment mode: reset, the tool method TRL calls, and the reward function's finish."""
    from gym_llm.integrations.trl import environment_class, gym_llm_reward

    cls = environment_class(WEATHER)
    envs = [cls() for _ in range(batch)]
    completion = [{"role": "assistant", "content": ANSWER}]
    loop = asyncio.new_event_loop()

    async def tools() -> None:
        await asyncio.gather(*(env.get_weather(city="SF") for env in envs))

    def run() -> None:
        for index, env in enumerate(envs):
            env.reset(prompt=[], env_id=WEATHER, task_index=index % 6)
        loop.run_until_complete(tools())
        loop.run_until_complete(
            gym_llm_reward([completion] * batch, environments=envs, env_id=[WEATHER] * batch)
        )

    return per_episode_us(run, batch, batches)


class ScriptedTrainer:
    """What the rollout loop reads off a ``GRPOTrainer``, with generation replaced by a script."""

    def __init__(self, tokenizer: Any) -> None:
        self.processing_class = tokenizer
        self.max_completion_length = 512
        self.eos_token_ids = [tokenizer.eos_token_id]
        self.chat_template = None
        self._turns = [
            tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            for text in (CALL, ANSWER)
        ]

    def _generate_single_turn(self, prompt_ids: list, images: Any, fields: Any, n: int) -> tuple:
        # a second turn's prompt holds a tool response: answer it, else call the tool
        replies = [self._turns[1] if len(ids) > self._first_len else self._turns[0] for ids in prompt_ids]
        return replies, None


def trl_rollout_mode(batch: int, batches: int) -> tuple[float, Any]:
    """TRL rollout mode: gym_llm's own loop, with the trainer's generation scripted."""
    from tiny_model import tiny_tokenizer

    from gym_llm.integrations.trl import grpo_kwargs, gym_llm_reward

    kwargs = grpo_kwargs(WEATHER, mode="rollout")
    loop_fn = kwargs["rollout_func"]
    tokenizer = tiny_tokenizer()
    trainer = ScriptedTrainer(tokenizer)
    prompts = [kwargs["train_dataset"][i % 6]["prompt"] for i in range(batch)]
    trainer._first_len = max(
        len(loop_fn.chat_tokens(trainer).prompt(_obs(i % 6)).token_ids) for i in range(6)
    )
    event_loop = asyncio.new_event_loop()

    def run() -> None:
        out = loop_fn(prompts, trainer)
        event_loop.run_until_complete(
            gym_llm_reward(
                [None] * batch,
                verified_reward=out["verified_reward"],
                verified_info=out["verified_info"],
                env_id=out["env_id"],
            )
        )
        assert all(r == 1.0 for r in out["verified_reward"]), out["verified_reward"]

    return per_episode_us(run, batch, batches), trainer


def _obs(index: int) -> Any:
    from gym_llm.integrations.episodes import make_env

    obs, _ = make_env(WEATHER).reset(options={"task_index": index})
    return obs


def verl_agent_loop(batch: int, batches: int) -> float:
    """VeRL: GymLLMAgentLoop.run for each row, with VeRL's server scripted."""
    import json

    from omegaconf import OmegaConf
    from tiny_model import tiny_tokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.workers.rollout.replica import TokenOutput

    from gym_llm.integrations.episodes import make_env, prompt_messages
    from gym_llm.integrations.verl import _agent_loop_class

    tokenizer = tiny_tokenizer()
    turns = [
        tokenizer(t, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id] for t in (CALL, ANSWER)
    ]

    class Server:
        async def generate(
            self, request_id: str, *, prompt_ids: list, sampling_params: dict, **kw: Any
        ) -> Any:
            ids = turns[1] if "<tool_response>" in tokenizer.decode(prompt_ids[-200:]) else turns[0]
            return TokenOutput(token_ids=ids, log_probs=[-0.1] * len(ids), stop_reason="completed")

    config = OmegaConf.create(
        {"actor_rollout_ref": {"rollout": {"prompt_length": 4096, "response_length": 1024}}, "data": {}}
    )
    env = make_env(WEATHER)
    rows = [
        {"extra_info": {"env_id": WEATHER, "task": json.dumps(task)}, "raw_prompt": prompt_messages(task)}
        for task in env.tasks
    ]
    loop_cls = _agent_loop_class()
    event_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(event_loop)

    async def play() -> None:
        loops = [
            loop_cls(
                trainer_config=DictConfigWrap(config),
                server_manager=Server(),
                tokenizer=tokenizer,
                processor=None,
                dataset_cls=RLHFDataset,
                data_config=DictConfigWrap(config.data),
            )
            for _ in range(batch)
        ]
        outs = await asyncio.gather(*(lp.run({}, **rows[i % len(rows)]) for i, lp in enumerate(loops)))
        assert all(out.reward_score == 1.0 for out in outs)

    return per_episode_us(lambda: event_loop.run_until_complete(play()), batch, batches)


def nemo_rl_environment(batch: int, batches: int) -> float:
    """NeMo RL: GymLLMEnvironment.step twice per episode (tool call, then answer)."""
    from tiny_model import tiny_tokenizer

    from gym_llm.integrations.episodes import make_env
    from gym_llm.integrations.nemo_rl import GymLLMEnvironment, datum_spec

    tokenizer = tiny_tokenizer()
    env = GymLLMEnvironment({"tokenizer": tokenizer})
    metas = [
        datum_spec(t, tokenizer, i, WEATHER)["extra_env_info"] for i, t in enumerate(make_env(WEATHER).tasks)
    ]

    def run() -> None:
        metadata = [metas[i % len(metas)] for i in range(batch)]
        first = env.step([[{"role": "assistant", "content": CALL}]] * batch, metadata)
        second = env.step([[{"role": "assistant", "content": ANSWER}]] * batch, first.metadata)
        assert second.rewards.tolist() == [1.0] * batch

    return per_episode_us(run, batch, batches)


def generation_ms(batch: int) -> float:
    """The tiny model generating one Weather turn (64 new tokens) for ``batch`` prompts on CPU."""
    import torch
    from tiny_model import tiny_model, tiny_tokenizer

    from gym_llm.integrations.chat_tokens import ChatTokens

    tokenizer = tiny_tokenizer()
    model = tiny_model(tokenizer)
    chat = ChatTokens(tokenizer)
    prompts = [chat.prompt(_obs(i % 6)).token_ids for i in range(batch)]
    width = max(map(len, prompts))
    ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(p)) + p for p in prompts])
    mask = (ids != tokenizer.pad_token_id).long()
    start = time.perf_counter()
    with torch.no_grad():
        model.generate(
            ids,
            attention_mask=mask,
            max_new_tokens=64,
            min_new_tokens=64,
            do_sample=True,
            pad_token_id=tokenizer.pad_token_id,
        )
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32, help="episodes per batch (one trainer step)")
    parser.add_argument("--batches", type=int, default=5, help="timed batches (median reported)")
    args = parser.parse_args()
    has = {
        name: importlib.util.find_spec(name) is not None for name in ("torch", "trl", "verl", "transformers")
    }
    rows: list[tuple[str, float]] = []
    if has["trl"]:
        rows.append(("TRL environment mode", trl_environment_mode(args.batch, args.batches)))
        rows.append(("TRL rollout mode", trl_rollout_mode(args.batch, args.batches)[0]))
    if has["verl"]:
        rows.append(("VeRL GymLLMAgentLoop", verl_agent_loop(args.batch, args.batches)))
    if has["torch"] and has["transformers"]:
        rows.append(("NeMo RL GymLLMEnvironment", nemo_rl_environment(args.batch, args.batches)))
    if not rows:
        sys.exit("no trainer installed here: pip install torch, then gym-llm[trl] or gym-llm[verl]")
    skipped = [name for name in ("trl", "verl") if not has[name]]
    print(f"gym_llm CPU per Weather episode (batch {args.batch}, median of {args.batches} batches):")
    for name, us in rows:
        print(f"  {name:28s} {us / 1000:7.3f} ms  {'<=' if us <= 1000 else '>'} 1 ms target")
    gen = generation_ms(args.batch)
    print(
        f"  tiny model generating one turn for the batch (64 tokens, CPU): {gen:.0f} ms "
        f"= {gen / args.batch:.2f} ms per episode-turn"
    )
    if skipped:
        print(f"  skipped (not installed here): {', '.join(skipped)}")


if __name__ == "__main__":
    main()
