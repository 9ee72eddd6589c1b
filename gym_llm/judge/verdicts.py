"""Verdicts: asking a judge for one, and reading its label out of the judge's answer."""

from __future__ import annotations

import re
from typing import Any, Literal

from gym_llm.judge.protocol import Judge, JudgeError, Messages
from gym_llm.judge.resolve import ask


def parse_verdict(
    text: str,
    equal_label: str = "[[A=B]]",
    not_equal_label: str = "[[A!=B]]",
    *,
    position: Literal["first", "last"] = "first",
) -> tuple[str | None, list[str]]:
    """The verdict label in a judge's answer, and any parsing issues.

    Labels are matched literally; where one label contains the other (``OK`` / ``OKAY``), the
    longer match wins at a position. ``position`` picks which match decides when there are several.

    Returns:
        label: The deciding label, or ``None`` when the answer has none.
        issues: Among ``no_verdict``, ``conflicting_verdicts`` (both labels appear) and
            ``repeated_verdict`` (one label appears more than once).

    Example:
        >>> parse_verdict("They differ: [[A!=B]]")
        ('[[A!=B]]', [])
        >>> parse_verdict("[[A!=B]]... no, [[A=B]]", position="last")
        ('[[A=B]]', ['conflicting_verdicts'])
    """
    labels = sorted({label for label in (equal_label, not_equal_label) if label}, key=len, reverse=True)
    if not labels:
        return None, ["no_verdict"]
    pattern = re.compile("|".join(re.escape(label) for label in labels))
    found = [match.group(0) for match in pattern.finditer(text)]
    if not found:
        return None, ["no_verdict"]
    issues = []
    if len(set(found)) > 1:
        issues.append("conflicting_verdicts")
    elif len(found) > 1:
        issues.append("repeated_verdict")
    return (found[0] if position == "first" else found[-1]), issues


async def ask_for_verdict(
    judge: Judge,
    messages: Messages,
    equal_label: str = "[[A=B]]",
    not_equal_label: str = "[[A!=B]]",
    *,
    position: Literal["first", "last"] = "first",
) -> dict[str, Any]:
    """Ask ``judge`` and read the verdict: one entry of NeMo's ``judge_evaluations`` record.

    Never raises: a judge that cannot answer is recorded under ``error``.

    Args:
        judge: The judge.
        messages: The judge prompt, as chat messages.
        equal_label: The label that means "equivalent".
        not_equal_label: The label that means "different".
        position: Which label decides when the answer has several (see :func:`parse_verdict`).

    Returns:
        ``{"responses_create_params": {"input": messages}}`` with either ``output_text``,
        ``verdict_label`` (``None`` without a label) and ``parsing_issues``, or ``error`` (the
        :class:`~gym_llm.judge.JudgeError` message).
    """
    evaluation: dict[str, Any] = {"responses_create_params": {"input": [dict(m) for m in messages]}}
    try:
        text = await ask(judge, messages)
    except JudgeError as exc:
        evaluation["error"] = str(exc)
        return evaluation
    label, issues = parse_verdict(text, equal_label, not_equal_label, position=position)
    evaluation.update(output_text=text, verdict_label=label, parsing_issues=issues)
    return evaluation
