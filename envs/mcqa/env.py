"""MCQA: answer a multiple-choice question; the reward is 1.0 iff the extracted letter is right.

Port of NeMo Gym's ``mcqa`` resources server. No tools, one turn (a tool call in it is not run:
the turn is graded as it is). The answer is pulled out of the
concatenated assistant text by the row's ``grading_mode`` (or the env's ``grading_mode``, which
overrides every row, as NeMo's server config does):

- ``strict_single_letter_boxed``: the *last* ``\\boxed{...}`` holds one upper-case option letter,
  possibly decorated (``\\boxed{ [C] }``, ``\\boxed{\\text{E}}``) or followed by a label
  (``\\boxed{E: ...}``, ``\\boxed{C) ...}``).
- ``lenient_boxed``: as strict, else the text inside the last ``\\boxed{}`` contains exactly one
  option's text (case and spacing ignored).
- ``lenient_answer_colon``: the first ``Answer: X`` (case-insensitive), X a letter or an option's
  exact text.
- ``lenient_answer_colon_md``: the last markdown-tolerant ``Answer:`` payload (``**Answer:** B``,
  ``Answer: **B**``, ``__Answer__: A``) or ``template_metadata.answer_prefix`` payload that yields a
  single unambiguous letter.

``template_metadata.output_regex`` (one regex or a list, tried in order) comes first in every mode:
its first group of the last match, case-insensitive; a single letter is trusted as is. Boxes and
``\\text{}`` wrappers are read by :mod:`gym_llm.answers`.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Any, Literal

from pydantic import field_validator

from gym_llm import items as it
from gym_llm.answers import last_boxed, unwrap_text
from gym_llm.env import Observation
from gym_llm.single_turn import SingleTurnEnv
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

GradingMode = Literal[
    "strict_single_letter_boxed", "lenient_boxed", "lenient_answer_colon", "lenient_answer_colon_md"
]
GRADING_MODES: tuple[str, ...] = GradingMode.__args__  # type: ignore[attr-defined]
DEFAULT_GRADING_MODE: GradingMode = "strict_single_letter_boxed"

# failure_kind values
EMPTY_RESPONSE = "empty_response"
NO_ANSWER = "no_answer"


class MCQATask(TaskRow):
    """NeMo's mcqa row fields (``metadata`` and any other extra field pass through untouched)."""

    options: list[dict[str, str | None]] | None = None
    expected_answer: str
    grading_mode: GradingMode = DEFAULT_GRADING_MODE
    template_metadata: dict[str, Any] | None = None
    uuid: str | None = None

    @field_validator("expected_answer")
    @classmethod
    def _one_letter(cls, value: str) -> str:
        if len(value.strip()) != 1 or not value.strip().isalpha():
            raise ValueError(f"expected a single option letter, got {value!r}")
        return value

    @field_validator("template_metadata")
    @classmethod
    def _valid_regexes(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None or "output_regex" not in value:
            return value
        patterns = value["output_regex"]
        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ValueError("output_regex must be a regex string or a list of them")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"output_regex {pattern!r} is not a valid regex: {exc}") from None
        return value


# ----------------------------------------------------------------------------- text helpers
# A box that holds just a letter among non-letters: "E", "[C]", "(B)".
_BOX_LETTER_ONLY = re.compile(r"[^A-Za-z]*([A-Z])[^A-Za-z]*")
# A box that starts with a letter and a label delimiter: "E: ...", "C) ...", "B. ...", "A - ...".
_BOX_LETTER_LABEL = re.compile(r"\s*([A-Z])\s*[:).\-]")
_ANSWER_COLON = re.compile(r"answer\s*:\s*(.+)", re.I)
_ANSWER_COLON_MD = re.compile(r"[*_]{0,2}Answer[*_]{0,2}\s*:[*_\s]{0,2}(.+)", re.I | re.M)
_SINGLE_LETTER = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")
_LEADING_LETTER = re.compile(r"([a-zA-Z])(?![a-zA-Z0-9])")
_STANDALONE_CAPITAL = re.compile(r"\b[A-Z]\b")
_LIST_SEPARATOR = re.compile(r"\s*[/|&,;]\s*|\s+(?:or|and)\s+|\s+", re.I)
# Localised answer letters (Arabic, Bengali, full-width) seen in MMMLU-style outputs.
_LOCAL_LETTERS = str.maketrans(
    {
        **dict.fromkeys("أ", " A"),
        **dict.fromkeys("ب", " B"),
        **dict.fromkeys("ج", " C"),
        **dict.fromkeys("د", " D"),
        **dict.fromkeys("অ", " A"),
        **dict.fromkeys("ব", " B"),
        **dict.fromkeys("ড", " C"),
        **dict.fromkeys("ঢ", " D"),
        **dict.fromkeys("Ａ", " A"),
        **dict.fromkeys("Ｂ", " B"),
        **dict.fromkeys("Ｃ", " C"),
        **dict.fromkeys("Ｄ", " D"),
    }
)
_PAYLOAD_PUNCTUATION = "*_` \t\n\r.,;:"


def option_letters(options: list[dict[str, str | None]] | None) -> set[str]:
    """The upper-case single-letter keys of ``options`` whose text is not null."""
    return {
        key.upper()
        for entry in options or ()
        for key, value in entry.items()
        if isinstance(key, str) and len(key) == 1 and key.isalpha() and value is not None
    }


def _normalize(text: str) -> str:
    """Lower case, whitespace collapsed: for comparing option texts."""
    return " ".join(text.lower().split())


def _localize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_LOCAL_LETTERS).strip()


def _option_by_text(
    candidate: str, options: list[dict[str, str | None]] | None, letters: set[str]
) -> str | None:
    """The first option whose normalised text equals ``candidate``'s."""
    wanted = _normalize(candidate)
    for entry in options or ():
        for key, value in entry.items():
            if value is not None and key.upper() in letters and _normalize(value) == wanted:
                return key.upper()
    return None


def boxed_letter(text: str, letters: set[str]) -> str | None:
    """``strict_single_letter_boxed``: the option letter in the last box."""
    inner = last_boxed(text)
    if inner is None:
        return None
    inner = unwrap_text(inner)
    match = _BOX_LETTER_ONLY.fullmatch(inner) or _BOX_LETTER_LABEL.match(inner)
    letter = match.group(1) if match else None
    return letter if letter in letters else None


def boxed_option_text(
    text: str, options: list[dict[str, str | None]] | None, letters: set[str]
) -> str | None:
    """``lenient_boxed`` fallback: the one option whose text the last box contains."""
    inner = last_boxed(text)
    if inner is None:
        return None
    candidates = {_normalize(inner), _normalize(unwrap_text(inner))}
    found = {
        key.upper()
        for entry in options or ()
        for key, value in entry.items()
        if value is not None
        and len(key) == 1
        and key.upper() in letters
        and _normalize(value)
        and any(_normalize(value) in candidate for candidate in candidates)
    }
    return found.pop() if len(found) == 1 else None


def answer_colon(text: str, options: list[dict[str, str | None]] | None, letters: set[str]) -> str | None:
    """``lenient_answer_colon``: the first ``Answer: X``, X a letter or an option's exact text."""
    match = _ANSWER_COLON.search(text)
    if match is None:
        return None
    candidate = unwrap_text(match.group(1))
    if len(candidate) == 1 and candidate.isalpha() and candidate.upper() in letters:
        return candidate.upper()
    return _option_by_text(candidate, options, letters)


def _ambiguous(payload: str, letters: set[str]) -> bool:
    """Whether two different option letters are listed side by side ("A or B", "A/C")."""
    found = [(m.group(1).upper(), m.span(1)) for m in _SINGLE_LETTER.finditer(payload)]
    found = [(letter, span) for letter, span in found if letter in letters]
    return any(
        left != right and _LIST_SEPARATOR.fullmatch(payload[left_span[1] : right_span[0]]) is not None
        for (left, left_span), (right, right_span) in itertools.pairwise(found)
    )


def _payload_letter(payload: str, letters: set[str]) -> str | None:
    candidate = _localize(payload).strip(_PAYLOAD_PUNCTUATION)
    if _ambiguous(candidate, letters):
        return None
    if len(candidate) == 1:
        letter: str | None = candidate
    elif (match := _LEADING_LETTER.match(candidate)) is not None:  # "B because ..."
        letter = match.group(1)
    else:
        capitals = _STANDALONE_CAPITAL.findall(candidate)
        letter = capitals[-1] if capitals else None
    if letter and letter.upper() in letters:
        return letter.upper()
    return None


def answer_colon_md(text: str, letters: set[str], answer_prefix: str | None = None) -> str | None:
    """``lenient_answer_colon_md``: the last ``Answer:`` (or prefix) payload that names one letter."""
    text = unicodedata.normalize("NFKC", text)
    payloads = [(m.start(), m.group(1)) for m in _ANSWER_COLON_MD.finditer(text)]
    if answer_prefix:
        prefix = re.compile(re.escape(unicodedata.normalize("NFKC", answer_prefix)) + r"\s*", re.I)
        for match in prefix.finditer(text):
            end = text.find("\n", match.end())
            payloads.append((match.start(), text[match.end() : end if end >= 0 else len(text)]))
    payloads.sort(key=lambda found: found[0])
    for _, payload in reversed(payloads):
        letter = _payload_letter(payload, letters)
        if letter is not None:
            return letter
    return None


def regex_answer(
    text: str, patterns: str | list[str], options: list[dict[str, str | None]] | None, letters: set[str]
) -> str | None:
    """``template_metadata.output_regex``: the first pattern whose last match names an answer."""
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        try:
            matches = list(re.finditer(pattern, text, re.I))
        except re.error:
            continue
        if not matches:
            continue
        last = matches[-1]
        captured = _localize((last.group(1) if last.re.groups else last.group(0)) or "").upper()
        if len(captured) == 1 and captured.isalpha():
            return captured  # the row's own regex is trusted, even outside the option letters
        letter = _option_by_text(captured, options, letters)
        if letter is not None:
            return letter
    return None


def extract_answer(text: str, task: dict[str, Any], grading_mode: str) -> str | None:
    """The option letter that ``text`` answers under ``grading_mode``, or ``None``."""
    options = task.get("options")
    letters = option_letters(options)
    template = task.get("template_metadata") or {}
    if "output_regex" in template:
        letter = regex_answer(text, template["output_regex"], options, letters)
        if letter is not None:
            return letter
    if grading_mode == "strict_single_letter_boxed":
        return boxed_letter(text, letters)
    if grading_mode == "lenient_boxed":
        return boxed_letter(text, letters) or boxed_option_text(text, options, letters)
    if grading_mode == "lenient_answer_colon":
        return answer_colon(text, options, letters)
    if grading_mode == "lenient_answer_colon_md":
        prefix = template.get("answer_prefix")
        letter = answer_colon_md(text, letters, prefix)
        if letter is None and prefix:
            letter = boxed_letter(text, letters)
        return letter
    return None


_REFERENCE_FORMATS = {
    "strict_single_letter_boxed": "The answer is \\boxed{{{}}}.",
    "lenient_boxed": "The answer is \\boxed{{{}}}.",
    "lenient_answer_colon": "Answer: {}",
    "lenient_answer_colon_md": "**Answer:** {}",
}


class MCQAEnv(SingleTurnEnv):
    """Multiple-choice QA; see the module docstring for the grading modes."""

    task_model = MCQATask
    reward_components = ("accuracy", "no_answer")

    def __init__(self, tasks: Any = None, *, grading_mode: GradingMode | None = None, **kwargs: Any) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            grading_mode: Overrides every row's ``grading_mode`` (NeMo's server-config field).
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if grading_mode is not None and grading_mode not in GRADING_MODES:
            raise ValueError(f"grading_mode must be one of {GRADING_MODES}, got {grading_mode!r}")
        self.grading_mode = grading_mode
        super().__init__(tasks, **kwargs)

    def _mode(self, task: dict[str, Any]) -> str:
        return self.grading_mode or task.get("grading_mode") or DEFAULT_GRADING_MODE

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        mode = self._mode(task)
        gold = task["expected_answer"].strip().upper()
        text = it.output_text(response["output"]).strip()
        pred = extract_answer(text, task, mode) if text else None
        reward = 1.0 if pred is not None and pred == gold else 0.0
        failure = None if pred is not None else (NO_ANSWER if text else EMPTY_RESPONSE)
        return Verdict(
            reward,
            components={"accuracy": reward, "no_answer": float(pred is None)},
            details={"extracted_answer": pred, "expected_answer": gold, "grading_mode": mode},
            failure_kind=failure,
        )

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        gold = task["expected_answer"].strip().upper()
        mode = self._mode(task)
        # The row's own regex comes first: keep the first phrasing that grades right under it.
        candidates = [
            _REFERENCE_FORMATS[mode].format(gold),
            *(f.format(gold) for f in _REFERENCE_FORMATS.values()),
        ]
        for text in candidates:
            if extract_answer(text, task, mode) == gold:
                return [it.message(text)]
        return [it.message(candidates[0])]
