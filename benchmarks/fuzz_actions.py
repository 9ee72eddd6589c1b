"""Fuzz every env's ``step`` with malformed and random actions; print the escapes per env (target 0).

    python benchmarks/fuzz_actions.py               # 10,000 episodes per env
    python benchmarks/fuzz_actions.py --examples 500 --env llm/Weather-v0

Judge envs get a judge played by the test model server on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import time
import warnings

import gymnasium

import gym_llm
from gym_llm.fuzz import fuzz_env
from gym_llm.testing import ModelServer

JUDGED = ("llm/EquivalenceLLMJudge-v0", "llm/MathWithJudge-v0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="episodes per env")
    parser.add_argument("--env", action="append", help="env id (repeatable; default: every env)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'env':34} {'episodes':>8} {'steps':>7} {'escapes':>7} {'unbounded':>9} {'nondet':>6} {'s':>7}")
    total = 0
    with ModelServer(record=False) as server:
        for env_id in args.env or gym_llm.env_ids():
            kwargs = {"judge": {"model": "judge", "base_url": server.base_url}} if env_id in JUDGED else {}
            env = gymnasium.make(env_id, **kwargs).unwrapped
            start = time.perf_counter()
            report = fuzz_env(env, examples=args.examples, seed=args.seed)
            env.close()
            total += report.escapes + report.unbounded + report.nondeterministic
            print(
                f"{env_id:34} {report.episodes:8} {report.steps:7} {report.escapes:7} {report.unbounded:9} "
                f"{report.nondeterministic:6} {time.perf_counter() - start:7.1f}"
            )
            for failure in report.failures[:2]:
                print("    " + failure.replace("\n", "\n    ")[:2000])
    print(f"problems in all: {total}")


if __name__ == "__main__":
    main()
