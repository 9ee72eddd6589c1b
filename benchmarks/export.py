"""Rows/s and peak memory of ``gym_llm.export`` on 10k and 100k rollouts, beside an in-memory baseline.

The input is made with the collector (the reference policy, offline) on Weather, MultiStep and
WorkplaceAssistant (whose rows carry 27 tool schemas), then replicated to the wanted size as new
tasks (``task_index`` shifted) with rewards 1, 0, 1, 0 over each task's repeats, so that every
format has work: DPO pairs, one prompt per task.

Each export runs in its own process, which reports its wall time and its peak RSS (``ru_maxrss``)
next to its RSS once everything is imported, so memory that grows with the input shows.
Baseline: what one writes without the library (``json.loads`` every line, build the SFT records
in a list, ``datasets.Dataset.from_list`` and ``to_parquet``).

Run: ``python benchmarks/export.py [--sizes 10000 100000] [--formats raw sft dpo prompts verl]
[--baseline-max 10000]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENVS = ("llm/Weather-v0", "llm/MultiStep-v0", "llm/WorkplaceAssistant-v0")
REPEATS = 4


def make_input(path: Path, size: int, work: Path) -> None:
    """``size`` rollout rows: collected ones, replicated as new tasks."""
    from gym_llm.rollouts import collect

    seeds: list[dict] = []
    for env_id in ENVS:
        part = work / f"{env_id.split('/')[1]}.jsonl"
        if not part.exists():
            collect(env_id, part, num_repeats=REPEATS, limit=5)
        seeds.extend(json.loads(line) for line in part.read_text().splitlines())
    seeds.sort(key=lambda r: (r["env_id"], r["task_index"], r["repeat_index"]))
    with open(path, "w") as out:
        for n in range(size):
            row = dict(seeds[n % len(seeds)])
            row["task_index"] += 1000 * (n // len(seeds))
            row["reward"] = float(row["repeat_index"] % 2 == 0)
            out.write(json.dumps(row) + "\n")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(kind: str, fmt: str, source: str, output: str) -> None:
    """Run one export in this process and print its figures as JSON."""
    import datasets  # noqa: F401 - imported before the baseline RSS is read

    import gym_llm.export
    from gym_llm.export.formats import plan  # noqa: F401 - the same

    before = rss_mb()
    start = time.perf_counter()
    if kind == "gym_llm":
        result = gym_llm.export.export(source, output, fmt)
        rows, rollouts = result.rows, result.rollouts
    else:
        rows, rollouts = baseline_sft(source, output)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {"rows": rows, "rollouts": rollouts, "seconds": seconds, "before": before, "peak": peak}
    print(json.dumps(figures))


def baseline_sft(source: str, output: str) -> tuple[int, int]:
    """SFT records the plain way: everything in memory, then one ``Dataset``."""
    import datasets

    from gym_llm.export.messages import chat_tools_json, hf_messages, output_items, prompt_items

    with open(source) as handle:
        rows = [json.loads(line) for line in handle]
    records = [
        {"messages": hf_messages(prompt_items(r) + output_items(r)), "tools": chat_tools_json(r)}
        for r in rows
        if not r.get("mask_sample")
    ]
    datasets.Dataset.from_list(records).to_parquet(output)
    return len(records), len(rows)


def run_child(kind: str, fmt: str, source: Path, output: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, fmt, str(source), str(output)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--formats", nargs="+", default=["raw", "sft", "dpo", "prompts", "verl"])
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=10_000,
        help="run the in-memory baseline up to this many rollouts (it holds them all: ~90 KB each)",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="gym_llm_export_bench_") as tmp:
        work = Path(tmp)
        columns = ["rollouts", "input MB", "format", "rows out", "rollouts/s", "RSS after imports MB"]
        print("| " + " | ".join([*columns, "peak RSS MB", "growth MB"]) + " |")
        print("|---|---|---|---|---|---|---|---|")
        for size in args.sizes:
            source = work / f"rollouts_{size}.jsonl"
            make_input(source, size, work)
            megabytes = source.stat().st_size / 1e6
            runs = [("gym_llm", fmt) for fmt in args.formats]
            if size <= args.baseline_max:
                runs.append(("baseline", "sft"))
            for kind, fmt in runs:
                out = work / f"{kind}_{fmt}_{size}.parquet"
                got = run_child(kind, fmt, source, out)
                label = fmt if kind == "gym_llm" else "sft, in-memory baseline"
                print(
                    f"| {size:,} | {megabytes:,.0f} | {label} | {got['rows']:,} | "
                    f"{got['rollouts'] / got['seconds']:,.0f} | {got['before']:,.0f} | {got['peak']:,.0f} | "
                    f"{got['peak'] - got['before']:,.0f} |",
                    flush=True,
                )
                out.unlink(missing_ok=True)
            source.unlink()


if __name__ == "__main__":
    main()
