"""GoogleSearch: answer a multiple-choice question, researching it with ``search`` and ``browse``.

Port of NeMo Gym's ``google_search``. The tools return what NeMo's return to the model:
``search`` gives ``{"search_results": "<JSON string of {"items": [{title, link, snippet}, ...]}>"}``
and ``browse`` gives ``{"page_content": "<text>"}``. They run on a pluggable backend
(:mod:`.backends`): by default an offline BM25 index over a bundled document collection, so the
env needs no network and no key; ``backend="google"`` uses the Google Custom Search JSON API.

The reward is NeMo's: the first ``\\boxed{...}`` in the last output item, if that item is an
assistant message, must equal ``expected_answer`` exactly (an option letter).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import tool
from gym_llm.verdict import Verdict

from .backends import (
    GOOGLE_SEARCH_URL,
    MAX_WORDS,
    GoogleSearchBackend,
    OfflineSearchBackend,
    SearchBackend,
)

# failure_kind values
NO_OUTPUT = "no_output"
NO_FINAL_MESSAGE = "no_final_message"
NO_BOXED_ANSWER = "no_boxed_answer"

_BOXED = re.compile(r"\\boxed\{(.*?)\}")


def box_parser(text: Any) -> str | None:
    """The content of the *first* ``\\boxed{...}`` in ``text`` (NeMo's regex), or ``None``."""
    if text is None:
        return None
    match = _BOXED.search(text if isinstance(text, str) else str(text))
    return match.group(1) if match else None


def final_message_text(output: list[Any]) -> str | None:
    """The text of the last output item if it is an assistant message, else ``None``.

    NeMo ``str()``s the message's content list (pydantic reprs); the text of its parts is what
    that string's ``\\boxed{}`` comes from, so the parts' text is matched here.
    """
    if not output or not isinstance(output[-1], dict):
        return None
    last = output[-1]
    if last.get("type", "message") != "message" or last.get("role") != "assistant":
        return None
    return it.content_text(last.get("content"))


class GoogleSearchTask(TaskRow):
    """NeMo's fields; ``reference_query`` and ``reference_url`` (ours, optional) feed the reference policy."""

    expected_answer: str
    task_difficulty_qwen3_32b_avg_8: float | None = None
    reference_query: str | None = None
    reference_url: str | None = None


class GoogleSearchEnv(LLMEnv):
    """Multiple-choice research questions with ``search`` and ``browse`` tools."""

    task_model = GoogleSearchTask
    max_turns = 10

    def __init__(
        self,
        tasks: Any = None,
        *,
        backend: SearchBackend | str = "offline",
        google_api_key: str | None = None,
        google_cx: str | None = None,
        google_base_url: str = GOOGLE_SEARCH_URL,
        documents: Any = None,
        max_words: int = MAX_WORDS,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            backend: ``"offline"`` (BM25 over ``documents``), ``"google"`` (the Custom Search API),
                or any object with async ``search(query)`` and ``browse(url)``.
            google_api_key: API key for ``"google"``; default: the ``GOOGLE_API_KEY`` variable.
            google_cx: Search engine id for ``"google"``; default: the ``GOOGLE_CX`` variable.
            google_base_url: The Custom Search endpoint (tests use a local stand-in).
            documents: The offline collection: a JSONL path or a list of ``{url, title, text}``.
            max_words: ``browse`` truncates longer pages.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.

        Raises:
            ValueError: An unknown backend name, or ``"google"`` without a key or engine id.
        """
        if backend == "offline":
            self.backend: SearchBackend = OfflineSearchBackend(documents, max_words=max_words)
        elif backend == "google":
            self.backend = GoogleSearchBackend(
                google_api_key, google_cx, base_url=google_base_url, max_words=max_words
            )
        elif isinstance(backend, str):
            raise ValueError(f"unknown backend {backend!r}: expected 'offline', 'google' or a backend object")
        elif isinstance(backend, SearchBackend):
            self.backend = backend
        else:
            raise TypeError(
                f"backend must have async search() and browse() methods, got {type(backend).__name__}"
            )
        super().__init__(tasks, **kwargs)

    # ------------------------------------------------------------------ tools
    @tool
    async def search(self, query: str) -> dict[str, str]:
        """Search Google for a query and return up to 10 search results.

        Args:
            query: The term to search for.
        """
        results = await self.backend.search(query)
        return {"search_results": json.dumps({"items": results})}

    @tool
    async def browse(self, url: str) -> dict[str, str]:
        """Returns the cleaned content of a webpage. If the page is too long, it will be
        truncated to 10,000 words.

        Args:
            url: The url of the page to get the content of.
        """
        return {"page_content": await self.backend.browse(url)}

    # ------------------------------------------------------------------ grading
    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response["output"]
        expected = task.get("expected_answer")
        if not output:
            return Verdict(0.0, details={"parsed_option": None}, failure_kind=NO_OUTPUT)
        text = final_message_text(output)
        if text is None:
            return Verdict(0.0, details={"parsed_option": None}, failure_kind=NO_FINAL_MESSAGE)
        parsed = box_parser(text)
        if parsed is None:
            return Verdict(0.0, details={"parsed_option": None}, failure_kind=NO_BOXED_ANSWER)
        return Verdict(1.0 if parsed == expected else 0.0, details={"parsed_option": parsed})

    # ------------------------------------------------------------------ reference solution
    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """Search (the row's ``reference_query`` or the question's first line), browse the row's
        ``reference_url`` or the top result, then answer ``\\boxed{expected_answer}``."""
        history = observation["input"]
        outputs = {
            item["call_id"]: item["output"] for item in history if item.get("type") == "function_call_output"
        }
        searches = it.function_calls(history, "search")
        if not searches:
            return [it.function_call("search", {"query": _reference_query(task)}, "call_ref_search")]
        if not it.function_calls(history, "browse"):
            url = task.get("reference_url") or _top_link(outputs.get(searches[-1]["call_id"], ""))
            if url:
                return [it.function_call("browse", {"url": url}, "call_ref_browse")]
        answer = task["expected_answer"]
        return [it.message(f"Based on the sources I found, the answer is \\boxed{{{answer}}}.")]


def _reference_query(task: dict[str, Any]) -> str:
    if task.get("reference_query"):
        return task["reference_query"]
    raw = task["responses_create_params"]["input"]
    text = raw if isinstance(raw, str) else it.content_text(raw[-1].get("content")) if raw else ""
    return " ".join(text.splitlines()[0].split()[:30]) if text.strip() else "search"


def _top_link(search_output: str) -> str | None:
    """The first result's link in a ``search`` tool output, if there is one."""
    try:
        items = json.loads(json.loads(search_output)["search_results"])["items"]
        return items[0]["link"] if items else None
    except (KeyError, TypeError, ValueError, IndexError):
        return None
