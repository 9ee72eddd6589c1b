"""``transformers serve`` on 127.0.0.1 serving the tiny offline model, steered to chosen replies.

The tiny model (``tests/integrations/tiny_model.py``) is random; ``sequence_bias`` saved in its
``generation_config.json`` makes it write a chosen reply after a chosen context, and the server
uses that generation config as its default. Greedy decoding keeps the replies fixed.

The server parses Hermes ``<tool_call>`` output into tool calls for the model types whose format
it knows (Qwen's among them) and returns it as text for the others (e.g. Llama): the same tiny
model saved as a Llama model stands for a server started without a tool-call parser.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tiny_model import ASSISTANT_HEADER, as_generation_kwarg, steering_bias, tiny_model, tiny_tokenizer

END_OF_TURN = "<|im_end|>\n"
# The end of every prompt whose last message is a tool output, in Qwen's ChatML layout.
AFTER_TOOL_OUTPUT = "</tool_response>" + END_OF_TURN + ASSISTANT_HEADER


def after_user(text: str) -> str:
    """The end of a prompt whose last message is the user's ``text``: the context to steer after."""
    return text + END_OF_TURN + ASSISTANT_HEADER


def save_steered_model(
    directory: Path, replies: Mapping[str, str], *, architecture: str = "qwen2", max_new_tokens: int = 96
) -> str:
    """Save the tiny model and tokenizer to ``directory``, steered to write ``replies[context]``
    after each ``context``.

    Args:
        directory: Where to save them.
        replies: The reply to write after each context.
        architecture: ``"qwen2"`` (the server knows its tool-call format and parses the calls) or
            ``"llama"`` (the same sizes; the server returns the calls as text).
        max_new_tokens: The server's default limit on generated tokens.

    Returns:
        The model's name for requests to ``transformers serve``: the directory's path.
    """
    tokenizer = tiny_tokenizer()
    model = tiny_model(tokenizer)
    if architecture == "llama":
        model = llama_like(model)
    elif architecture != "qwen2":
        raise ValueError(f"architecture must be 'qwen2' or 'llama', got {architecture!r}")
    bias: dict = {}
    for context, reply in replies.items():
        bias.update(steering_bias(tokenizer, context, [reply]))
    config = model.generation_config
    config.sequence_bias = as_generation_kwarg(bias)
    config.max_new_tokens = max_new_tokens
    config.do_sample = False
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def llama_like(model: Any) -> Any:
    """A random Llama model of ``model``'s sizes and special tokens (seeded like it)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    sizes = model.config.to_dict()
    names = [
        "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "max_position_embeddings", "eos_token_id", "pad_token_id", "bos_token_id",
        "tie_word_embeddings",
    ]  # fmt: skip
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    try:
        llama = LlamaForCausalLM(LlamaConfig(**{name: sizes[name] for name in names}))
    finally:
        torch.random.set_rng_state(generator_state)
    llama.generation_config = model.generation_config
    return llama


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command() -> list[str]:
    """The ``transformers`` command of this interpreter's environment."""
    beside = Path(sys.executable).with_name("transformers")
    found = str(beside) if beside.is_file() else shutil.which("transformers")
    if found is None:
        raise RuntimeError("no `transformers` command beside this Python or on PATH")
    return [found, "serve"]


@contextmanager
def transformers_serve(work_dir: Path, startup_timeout: float = 180.0) -> Iterator[str]:
    """Run ``transformers serve`` on a free port of 127.0.0.1 until the block ends.

    No model is pinned: each request names a saved model's directory, loaded on first use.

    Yields:
        The server's base URL, ``http://127.0.0.1:PORT/v1``.
    """
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(work_dir / "hf_home"),  # nothing read from or written to the user's cache
        "TOKENIZERS_PARALLELISM": "false",
        # one thread: a tiny model decodes ~8x faster on a busy machine than with torch's default
        "OMP_NUM_THREADS": "1",
    }
    log_path = work_dir / "transformers_serve.log"
    argv = [*serve_command(), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_until_healthy(process, port, log_path, startup_timeout)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(process: subprocess.Popen, port: int, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"transformers serve exited ({process.returncode}):\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"transformers serve not healthy after {timeout:.0f} s:\n{_tail(log_path)}")


def _tail(path: Path, chars: int = 3000) -> str:
    return path.read_text(errors="replace")[-chars:]


def last_user_text(row: Mapping[str, Any]) -> str:
    """The text of a task row's last user message (what its prompt ends with)."""
    conversation = row["responses_create_params"]["input"]
    if isinstance(conversation, str):
        return conversation
    return [item for item in conversation if item.get("role") == "user"][-1]["content"]
