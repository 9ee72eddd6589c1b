"""Search backends for the GoogleSearch env: the Google Custom Search JSON API, or offline BM25.

A backend answers two awaitables: ``search(query)`` gives a list of ``{title, link, snippet}``
results and ``browse(url)`` gives the page's text. Both raise :class:`SearchError` with a message
for the model when they cannot answer; the env turns that into a tool error.

Example:
    >>> backend = OfflineSearchBackend()
    >>> results = asyncio.run(backend.search("half-life of carbon-14"))
    >>> results[0]["link"]
    'https://offline-wiki.example/radiocarbon-dating'
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Protocol, TypedDict, runtime_checkable

import aiohttp

GOOGLE_SEARCH_URL = "https://www.googleapis.com/customsearch/v1"
DEFAULT_DOCUMENTS = Path(__file__).parent / "data" / "documents.jsonl"
MAX_RESULTS = 10  # the Custom Search API's page size, and what the tool description promises
MAX_WORDS = 10_000  # browse truncates longer pages, as NeMo's tool description says
MAX_PAGE_BYTES = 5_000_000
SNIPPET_CHARS = 200


class SearchResult(TypedDict):
    """One search hit, as the Custom Search API's ``items`` entries (trimmed to three fields)."""

    title: str
    link: str
    snippet: str


class SearchError(Exception):
    """A search or browse that failed; the message is shown to the model."""


@runtime_checkable
class SearchBackend(Protocol):
    """What the env needs from a search provider."""

    async def search(self, query: str) -> list[SearchResult]:
        """Up to ``MAX_RESULTS`` results for ``query``, best first."""
        ...

    async def browse(self, url: str) -> str:
        """The text of the page at ``url`` (truncated to about ``MAX_WORDS`` words)."""
        ...


# ---------------------------------------------------------------------------- text helpers
def truncate_words(text: str, max_words: int = MAX_WORDS) -> str:
    """``text`` unchanged if it has at most ``max_words`` words, else its first and last halves
    joined by ``...`` (the whitespace inside each half is kept)."""
    if max_words <= 0:
        return text
    spans = [match.span() for match in re.finditer(r"\S+", text)]
    if len(spans) <= max_words:
        return text
    half = max(max_words // 2, 1)
    return text[: spans[half - 1][1]] + " ... " + text[spans[-half][0] :]


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: drops scripts, styles, navigation and page chrome."""

    SKIP = frozenset(
        {"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "aside", "form"}
    )
    BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header",
         "main", "table", "pre", "blockquote", "dd", "dt", "ul", "ol", "hr", "figcaption", "title"}
    )  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(self.skipping - 1, 0)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The readable text of an HTML document, one block per line (a stdlib stand-in for trafilatura)."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


async def fetch_page_text(
    url: str,
    *,
    timeout: float = 10.0,
    max_words: int = MAX_WORDS,
    max_bytes: int = MAX_PAGE_BYTES,
) -> str:
    """Download ``url`` and return its text (HTML is converted; other text types are kept as they are).

    Raises:
        SearchError: Not an http(s) URL, an HTTP error status, a network error or a binary document.
    """
    if not re.match(r"https?://", url, re.IGNORECASE):
        raise SearchError(f"Cannot browse {url!r}: only http and https URLs are supported.")
    headers = {"User-Agent": "Mozilla/5.0 (compatible; gym-llm browse tool)"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout), headers=headers) as session,
            session.get(url, allow_redirects=True) as response,
        ):
            if response.status >= 400:
                raise SearchError(
                    f"Cannot browse {url}: HTTP {response.status} {response.reason or ''}".rstrip()
                )
            body = bytearray()
            async for chunk in response.content.iter_chunked(65536):
                body += chunk
                if len(body) >= max_bytes:  # a huge page: the start is all the model could read anyway
                    break
            content_type = response.content_type or ""
            charset = response.charset or "utf-8"
    except asyncio.TimeoutError:
        raise SearchError(f"Cannot browse {url}: timed out after {timeout:g} s.") from None
    except aiohttp.ClientError as exc:
        raise SearchError(f"Cannot browse {url}: {type(exc).__name__}: {exc}") from None
    if not body:
        return "No HTML found"
    try:
        raw = bytes(body).decode(charset, errors="replace")
    except LookupError:  # an unknown charset name in the header
        raw = bytes(body).decode("utf-8", errors="replace")
    if "html" in content_type or "xml" in content_type or raw.lstrip()[:1] == "<":
        text = await asyncio.to_thread(html_to_text, raw)  # a big page takes a while to parse
    elif content_type.startswith("text/") or content_type in ("application/json", ""):
        text = raw.strip()
    else:
        raise SearchError(f"Cannot browse {url}: it is not a text page ({content_type}).")
    return truncate_words(text, max_words) if text else "No text found"


# ---------------------------------------------------------------------------- Google
class GoogleSearchBackend:
    """The Google Custom Search JSON API for ``search``; plain HTTP for ``browse``.

    Args:
        api_key: The API key; default: the ``GOOGLE_API_KEY`` environment variable.
        cx: The Programmable Search Engine id; default: the ``GOOGLE_CX`` environment variable.
        base_url: The API endpoint (tests point it at a local stand-in server).
        timeout: Seconds per HTTP request.
        max_words: Pages longer than this are truncated by ``browse``.

    Raises:
        ValueError: No API key or no engine id was given or found in the environment.
    """

    def __init__(
        self,
        api_key: str | None = None,
        cx: str | None = None,
        *,
        base_url: str = GOOGLE_SEARCH_URL,
        timeout: float = 10.0,
        max_words: int = MAX_WORDS,
    ) -> None:
        self.api_key = api_key or os.environ.get("GOOGLE_API_KEY")
        self.cx = cx or os.environ.get("GOOGLE_CX")
        if not self.api_key:
            raise ValueError(
                "the google search backend needs an API key: pass google_api_key=... or set GOOGLE_API_KEY"
            )
        if not self.cx:
            raise ValueError(
                "the google search backend needs a search engine id: pass google_cx=... or set GOOGLE_CX"
            )
        self.base_url = base_url
        self.timeout = timeout
        self.max_words = max_words

    def __repr__(self) -> str:  # never show the key
        return f"GoogleSearchBackend(cx={self.cx!r}, base_url={self.base_url!r})"

    async def search(self, query: str) -> list[SearchResult]:
        params = {"key": self.api_key, "cx": self.cx, "q": query}
        # One session per call: it is bound to the running event loop, and the env may run on several.
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session,
                session.get(self.base_url, params=params) as response,
            ):
                text = await response.text()
                status = response.status
        except asyncio.TimeoutError:
            raise SearchError(f"Google search timed out after {self.timeout:g} s.") from None
        except aiohttp.ClientError as exc:
            raise SearchError(
                self._redact(f"Google search request failed: {type(exc).__name__}: {exc}")
            ) from None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if status != 200:
            message = data.get("error", {}).get("message") if isinstance(data, dict) else None
            raise SearchError(self._redact(f"Google search failed: HTTP {status}: {message or text[:200]}"))
        if not isinstance(data, dict):
            raise SearchError("Google search returned a body that is not a JSON object.")
        items = data.get("items") or []  # no "items" key at all when nothing matched
        return [_result(item) for item in items[:MAX_RESULTS] if isinstance(item, dict)]

    async def browse(self, url: str) -> str:
        return await fetch_page_text(url, timeout=self.timeout, max_words=self.max_words)

    def _redact(self, message: str) -> str:
        return message.replace(self.api_key, "***") if self.api_key else message


def _result(item: Mapping[str, Any]) -> SearchResult:
    return {
        "title": str(item.get("title", "")),
        "link": str(item.get("link", "")),
        "snippet": str(item.get("snippet", "")),
    }


# ---------------------------------------------------------------------------- offline
class Document(TypedDict):
    url: str
    title: str
    text: str


def _light_stem(words: list[str]) -> list[str]:
    """Fold plurals so that "plants" finds "plant" (a stemmer package would be one more dependency)."""
    out = []
    for word in words:
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
        out.append(word)
    return out


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s  # imported here: only the offline backend needs it

    return bm25s.tokenize(texts, stopwords="en", stemmer=_light_stem, return_ids=False, show_progress=False)


class _Index:
    """A BM25 index over a document collection."""

    def __init__(self, documents: Sequence[Document]) -> None:
        import bm25s

        self.documents = tuple(documents)
        self.by_url = {doc["url"]: doc for doc in self.documents}
        self.retriever = bm25s.BM25()
        self.retriever.index(
            _tokenize([f"{doc['title']}\n{doc['text']}" for doc in self.documents]), show_progress=False
        )

    def search(self, query: str, limit: int) -> list[tuple[Document, list[str]]]:
        tokens = _tokenize([query])[0]
        if not tokens:
            return []
        scores = self.retriever.get_scores(tokens)
        ranked = sorted(range(len(self.documents)), key=lambda i: (-scores[i], i))
        return [(self.documents[i], tokens) for i in ranked[:limit] if scores[i] > 0]


def load_documents(source: str | Path | Sequence[Mapping[str, Any]]) -> list[Document]:
    """Documents from a JSONL file or a list of ``{url, title, text}`` dicts, checked.

    Raises:
        ValueError: A document lacks a string field, or two share a URL.
    """
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
    else:
        rows = list(source)
    documents: list[Document] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        for key in ("url", "title", "text"):
            if not isinstance(row, Mapping) or not isinstance(row.get(key), str):
                raise ValueError(f"document {index}: field {key!r} must be a string")
        if row["url"] in seen:
            raise ValueError(f"document {index}: duplicate url {row['url']!r}")
        seen.add(row["url"])
        documents.append({"url": row["url"], "title": row["title"], "text": row["text"]})
    if not documents:
        raise ValueError("the document collection is empty")
    return documents


@lru_cache(maxsize=8)
def _file_index(path: str, _mtime_ns: int) -> _Index:
    # Shared by every env of a process (a vector env makes many): built once per file version.
    return _Index(load_documents(path))


def _snippet(text: str, tokens: list[str]) -> str:
    """The sentence that shares most words with the query, cut to ``SNIPPET_CHARS``."""
    wanted = set(tokens)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()] or [text]
    best = max(sentences, key=lambda s: len(wanted & set(_light_stem(re.findall(r"\w\w+", s.lower())))))
    return best if len(best) <= SNIPPET_CHARS else best[: SNIPPET_CHARS - 3].rstrip() + "..."


class OfflineSearchBackend:
    """BM25 search over a bundled document collection; ``browse`` returns a document's text.

    Args:
        documents: A JSONL file of ``{url, title, text}`` rows or a list of such dicts.
            Default: the collection bundled with the env.
        max_words: Documents longer than this are truncated by ``browse``.
    """

    def __init__(
        self, documents: str | Path | Sequence[Mapping[str, Any]] | None = None, *, max_words: int = MAX_WORDS
    ) -> None:
        source = DEFAULT_DOCUMENTS if documents is None else documents
        if isinstance(source, (str, Path)):
            path = Path(source).resolve()
            self._index = _file_index(str(path), path.stat().st_mtime_ns)
        else:
            self._index = _Index(load_documents(source))
        self.max_words = max_words

    @property
    def documents(self) -> tuple[Document, ...]:
        return self._index.documents

    async def search(self, query: str) -> list[SearchResult]:
        hits = self._index.search(query, MAX_RESULTS)
        return [
            {"title": doc["title"], "link": doc["url"], "snippet": _snippet(doc["text"], tokens)}
            for doc, tokens in hits
        ]

    async def browse(self, url: str) -> str:
        doc = self._index.by_url.get(url.strip()) or self._index.by_url.get(url.strip().rstrip("/"))
        if doc is None:
            raise SearchError(f"Cannot browse {url}: no such page in the offline collection.")
        return truncate_words(f"{doc['title']}\n\n{doc['text']}", self.max_words)
