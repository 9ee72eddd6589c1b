"""The viewer as one self-contained HTML file: the page, its code and the first rollouts inside.

The rollouts travel as JSON in a ``<script type="application/json">`` block with every ``<``, ``>``
and ``&`` escaped (``\\u003c``...), so no text from a rollout can close the block; the page reads
it with ``JSON.parse`` and shows it through ``textContent``. A Content-Security-Policy with the
hashes of the page's own style and script keeps anything else from running.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from gym_llm import fastjson
from gym_llm.export.source import iter_lines
from gym_llm.viewer.index import facets, summarize
from gym_llm.viewer.server import ASSETS, page

DEFAULT_LIMIT = 1000


def write_html(
    rollouts: str | os.PathLike[str], output: str | os.PathLike[str], limit: int = DEFAULT_LIMIT
) -> tuple[int, int]:
    """Write the viewer with the first ``limit`` rollouts of a file into one HTML file.

    Args:
        rollouts: A JSONL rollouts file.
        output: The HTML file to write.
        limit: The most rollouts to put in the page (the list pages through them in the browser).

    Returns:
        How many rollouts the page holds, and how many the file has.

    Raises:
        RolloutFileError: The file is missing or has a line that is not JSON.
    """
    summaries, rows, total = [], [], 0
    for line in iter_lines(rollouts):
        if total < limit:
            summaries.append(summarize(total, line.offset, line.length, line.row))
            rows.append(line.row)
        total += 1
    data = {
        "meta": {"file": Path(rollouts).name, "total_in_file": total, **facets(summaries)},
        "summaries": [s.as_json() for s in summaries],
        "rows": rows,
    }
    style = (ASSETS / "app.css").read_text(encoding="utf-8")
    script = (ASSETS / "app.js").read_text(encoding="utf-8")
    if "</" in script or "</" in style:
        raise ValueError("the viewer's own code must not contain '</' (it is inlined)")
    csp = (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"script-src '{_sha256(script)}'; style-src '{_sha256(style)}'; img-src data:\">"
    )
    html = page(
        f"<style>{style}</style>",
        f'<script type="application/json" id="gym-llm-data">{script_safe_json(data)}</script>\n'
        f"<script>{script}</script>",
        csp,
    )
    Path(output).write_text(html, encoding="utf-8")
    return len(rows), total


def script_safe_json(value: object) -> str:
    """JSON that can sit inside a ``<script>`` element: ``<``, ``>``, ``&`` and line separators escaped.

    Example:
        >>> script_safe_json({"text": "</script><b>&"})
        '{"text":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = fastjson.dumps(value).decode()
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
