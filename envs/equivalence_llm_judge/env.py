"""EquivalenceLLMJudge: answer a question; an LLM judge decides if the answer matches the expected one.

Port of NeMo Gym's ``equivalence_llm_judge`` resources server. No tools, one turn (a tool call in
it is not run: the turn is graded as it is).

1. The answer is the text of the *last* assistant message (its text parts joined by newlines).
   Empty: reward 0, ``empty_final_answer``, no judge call. Longer than ``max_answer_chars`` (when
   set): reward 0, ``final_answer_too_long``, no judge call.
2. A regex may pull the answer out of it: the row's ``template_metadata.output_regex`` (when
   ``use_per_record_regex``), else the env's ``response_extract_regex``. The last match is used,
   its first non-empty group if it has groups; no match keeps the whole text. A per-record regex
   is skipped when the expected answer is longer than ``extraction_length_threshold``.
3. The judge prompt gets the question (the last user message of the row, optionally cut by
   ``question_extract_regex``), the expected answer and the extracted answer. The first verdict
   label in the judge's reply wins (``[[A=B]]`` / ``[[A!=B]]``); no label means "different".
4. Different, with a per-record regex: the judge is asked again with the whole answer text; if it
   says equal the reward is ``reward_if_full_generation_succeeds`` (0.5), else 0.
   Equal: the reward is 1, unless ``check_twice_swap``, which asks again with the two answers
   swapped and gives ``reward_if_swap_fails`` when that call disagrees.

Ours: answers with the same :func:`~gym_llm.answers.exact_form` (equal up to case, spacing, a final
period, an outer ``\\boxed{}``, math delimiters and ``\\text{}``) are equal without a judge call
(``exact_match_shortcut``).

The judge (``judge=``: a :class:`~gym_llm.judge.Judge`, a :class:`~gym_llm.judge.JudgeConfig`, a
dict of its fields, or ``None`` for the ``GYM_LLM_JUDGE_*`` variables) is needed by every answer the
shortcut does not settle; building the env never needs it. A judge that cannot answer (unreachable
after its retries, or never configured: then it fails at once, saying how to configure one) gives
reward 0 with ``failure_kind="judge_error"``, a masked rollout.
:meth:`EquivalenceLLMJudgeEnv.judged_answers` reads the two answers back out of a judge prompt.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.answers import exact_form
from gym_llm.env import Observation
from gym_llm.failures import JUDGE_ERROR
from gym_llm.judge import (
    JudgeArgument,
    JudgeError,
    Prompt,
    ask_for_verdict,
    make_judge,
    prompt_text,
    template_fields,
)
from gym_llm.single_turn import SingleTurnEnv
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

# failure_kind values
EMPTY_FINAL_ANSWER = "empty_final_answer"
FINAL_ANSWER_TOO_LONG = "final_answer_too_long"
JUDGE_NO_VERDICT = "judge_no_verdict"

# Our wording of a reference-vs-candidate grading prompt; {question}, {expected_answer} and
# {generated_answer} are filled in with str.format.
DEFAULT_PROMPT_TEMPLATE = """\
You are grading a candidate answer against the reference answer to the question below. Decide \
whether the candidate gives the same answer as the reference.

Rules:
- The reference answer is authoritative.
- Accept different wording, notation, formatting and equivalent forms (for example "0.5" and \
"1/2", or "Charles Darwin" and "Darwin").
- Every essential part of the reference must be in the candidate. A candidate that contradicts \
the reference, adds a conflicting claim, or hedges between several answers is not equivalent.
- Judge only whether the answers match, not the style or the reasoning.

Explain your decision in one or two sentences, then end your reply with exactly one label:
[[A=B]] if the candidate is equivalent to the reference
[[A!=B]] if it is not

QUESTION:
{question}

REFERENCE ANSWER:
{expected_answer}

CANDIDATE ANSWER:
{generated_answer}"""


class EquivalenceTask(TaskRow):
    """NeMo's equivalence_llm_judge row. ``expected_answer`` may instead be ``metadata.expected_answer``;
    ``question``, ``uuid`` and ``options`` are carried along (the judge reads the question from the
    prompt, as NeMo does)."""

    metadata: dict[str, Any] | None = None
    template_metadata: dict[str, Any] | None = None
    expected_answer: str | None = Field(default=None, validate_default=True)
    question: str | None = None
    uuid: str | int | None = None
    options: list[dict[str, str]] | None = None

    @field_validator("expected_answer")
    @classmethod
    def _has_expected_answer(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value:
            return value
        metadata = info.data.get("metadata") or {}
        if metadata.get("expected_answer") is None:
            raise ValueError("missing: give expected_answer or metadata.expected_answer")
        return value

    @field_validator("template_metadata")
    @classmethod
    def _valid_output_regex(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        pattern = (value or {}).get("output_regex")
        if pattern is None:
            return value
        if not isinstance(pattern, str):
            raise ValueError("output_regex must be a regex string")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"output_regex {pattern!r} is not a valid regex: {exc}") from None
        return value


def expected_answer(task: dict[str, Any]) -> str:
    if task.get("expected_answer"):
        return str(task["expected_answer"])
    value = (task.get("metadata") or {}).get("expected_answer")
    return "" if value is None else str(value)


def extract(text: str, regex: str | None) -> str:
    """The last match of ``regex`` in ``text`` (its first non-empty group, if it has groups), or
    ``text`` itself when there is no regex or no match."""
    if not regex:
        return text
    try:
        matches = list(re.finditer(regex, text, flags=re.MULTILINE | re.DOTALL))
    except re.error:
        return text
    if not matches:
        return text
    last = matches[-1]
    for group in last.groups():
        if isinstance(group, str) and group.strip():
            return group.strip()
    return last.group(0).strip()


def question_text(task: dict[str, Any], regex: str | None) -> str:
    """The last user message of the row's input (text parts only), optionally cut by ``regex``."""
    users = [
        item
        for item in it.input_items(task["responses_create_params"]["input"])
        if item.get("role") == "user" and item.get("type", "message") == "message"
    ]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, list):
        text = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    else:
        text = content if isinstance(content, str) else ""
    text = text.strip()
    return extract(text, regex) if text and regex else text


def final_answer_text(output: list[dict[str, Any]]) -> str:
    """The text of the last assistant message (text parts joined by newlines), stripped."""
    for item in reversed(output):
        if item.get("type", "message") == "message" and item.get("role") == "assistant":
            content = item.get("content")
            if isinstance(content, list):
                parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
                return "\n".join(parts).strip()
            return content.strip() if isinstance(content, str) else ""
    return ""


def _check_regex(name: str, pattern: str | None) -> None:
    if pattern is None:
        return
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{name} {pattern!r} is not a valid regex: {exc}") from None


class EquivalenceLLMJudgeEnv(SingleTurnEnv):
    """Short answers graded by an LLM judge (see the module docstring)."""

    task_model = EquivalenceTask
    reward_components = ("judge_calls",)

    def __init__(
        self,
        tasks: Any = None,
        *,
        judge: JudgeArgument = None,
        judge_system_message: str | None = None,
        judge_prompt_template: str | None = None,
        judge_prompt_template_fpath: str | Path | None = None,
        judge_equal_label: str = "[[A=B]]",
        judge_not_equal_label: str = "[[A!=B]]",
        verdict_label_position: Literal["first", "last"] = "first",
        question_extract_regex: str | None = None,
        response_extract_regex: str | None = None,
        check_twice_swap: bool = False,
        reward_if_swap_fails: float = 0.0,
        use_per_record_regex: bool = True,
        extraction_length_threshold: int | None = 120,
        check_full_generation_on_fail: bool = True,
        reward_if_full_generation_succeeds: float = 0.5,
        max_answer_chars: int | None = None,
        exact_match_shortcut: bool = True,
        **kwargs: Any,
    ) -> None:
        """Create the env. The grading options keep NeMo's names and defaults.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            judge: A :class:`~gym_llm.judge.Judge`, a :class:`~gym_llm.judge.JudgeConfig`, a dict of
                its fields or ``None`` (see :func:`~gym_llm.judge.make_judge`).
            judge_system_message: A system message for the judge (none by default).
            judge_prompt_template: The judge's user prompt with ``{question}``,
                ``{expected_answer}`` and ``{generated_answer}`` (default: ours, see the module).
            judge_prompt_template_fpath: A file to read the template from instead.
            judge_equal_label: The label that means "equivalent".
            judge_not_equal_label: The label that means "different".
            verdict_label_position: Which label decides when the reply has several (``first``).
            question_extract_regex: Cuts the question out of the last user message.
            response_extract_regex: Cuts the answer out of the last assistant message.
            check_twice_swap: Confirm an "equal" verdict with the answers swapped.
            reward_if_swap_fails: The reward when the swapped call disagrees.
            use_per_record_regex: Honour the rows' ``template_metadata.output_regex``.
            extraction_length_threshold: Skip a per-record regex for longer expected answers.
            check_full_generation_on_fail: With a per-record regex, ask again with the whole
                answer text when the extracted one is judged different.
            reward_if_full_generation_succeeds: The reward when that second call says equal.
            max_answer_chars: Longer final answers score 0 without a judge call (``None``: no limit).
            exact_match_shortcut: Equal answers (up to case, spacing and wrapping) skip the judge.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.

        Raises:
            ValueError: A bad argument; the message names it.
        """
        if judge_prompt_template is not None and judge_prompt_template_fpath is not None:
            raise ValueError("give judge_prompt_template or judge_prompt_template_fpath, not both")
        if judge_prompt_template_fpath is not None:
            judge_prompt_template = Path(judge_prompt_template_fpath).read_text(encoding="utf-8").strip()
        self.judge_prompt_template = judge_prompt_template or DEFAULT_PROMPT_TEMPLATE
        try:
            self.judge_prompt_template.format(question="", expected_answer="", generated_answer="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                "judge_prompt_template may only use {question}, {expected_answer} and {generated_answer} "
                f"(double other braces): {exc!r}"
            ) from None
        if verdict_label_position not in ("first", "last"):
            raise ValueError(
                f"verdict_label_position must be 'first' or 'last', got {verdict_label_position!r}"
            )
        if not judge_equal_label or not judge_not_equal_label or judge_equal_label == judge_not_equal_label:
            raise ValueError(
                "judge_equal_label and judge_not_equal_label must be two different non-empty labels"
            )
        if max_answer_chars is not None and max_answer_chars < 1:
            raise ValueError(f"max_answer_chars must be at least 1, got {max_answer_chars}")
        _check_regex("question_extract_regex", question_extract_regex)
        _check_regex("response_extract_regex", response_extract_regex)
        self.judge = make_judge(judge)
        self.judge_system_message = judge_system_message
        self.judge_equal_label = judge_equal_label
        self.judge_not_equal_label = judge_not_equal_label
        self.verdict_label_position = verdict_label_position
        self.question_extract_regex = question_extract_regex
        self.response_extract_regex = response_extract_regex
        self.check_twice_swap = check_twice_swap
        self.reward_if_swap_fails = reward_if_swap_fails
        self.use_per_record_regex = use_per_record_regex
        self.extraction_length_threshold = extraction_length_threshold
        self.check_full_generation_on_fail = check_full_generation_on_fail
        self.reward_if_full_generation_succeeds = reward_if_full_generation_succeeds
        self.max_answer_chars = max_answer_chars
        self.exact_match_shortcut = exact_match_shortcut
        super().__init__(tasks, **kwargs)

    def _per_record_regex(self, task: dict[str, Any]) -> str | None:
        if not self.use_per_record_regex:
            return None
        return (task.get("template_metadata") or {}).get("output_regex") or None

    def _too_long_for_regex(self, task: dict[str, Any], expected: str) -> bool:
        """A per-record regex skipped for a long expected answer: no rescue and no swap check then."""
        return (
            self._per_record_regex(task) is not None
            and self.extraction_length_threshold is not None
            and len(expected) > self.extraction_length_threshold
        )

    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        expected = expected_answer(task)
        text = final_answer_text(response["output"])
        details: dict[str, Any] = {
            "expected_answer": expected,
            "extracted_answer": None,
            "judge_evaluations": [],
        }
        if not text:
            details["failure_reason"] = EMPTY_FINAL_ANSWER
            return Verdict(0.0, {"judge_calls": 0.0}, details, failure_kind=EMPTY_FINAL_ANSWER)
        if self.max_answer_chars is not None and len(text) > self.max_answer_chars:
            details["failure_reason"] = (
                f"{FINAL_ANSWER_TOO_LONG}: {len(text)} characters exceeds {self.max_answer_chars}"
            )
            return Verdict(0.0, {"judge_calls": 0.0}, details, failure_kind=FINAL_ANSWER_TOO_LONG)

        long_answer = self._too_long_for_regex(task, expected)
        regex = None if long_answer else (self._per_record_regex(task) or self.response_extract_regex)
        generated = extract(text, regex)
        details["extracted_answer"] = generated
        question = question_text(task, self.question_extract_regex)
        evaluations: list[dict[str, Any]] = details["judge_evaluations"]
        try:
            equal = await self._evaluate(question, expected, generated, evaluations)
            if not equal:
                reward = 0.0
                if (
                    not long_answer
                    and self.check_full_generation_on_fail
                    and self._per_record_regex(task) is not None
                ):
                    # The regex may have cut the wrong part: the whole text earns partial credit.
                    if await self._evaluate(question, expected, text, evaluations):
                        reward = self.reward_if_full_generation_succeeds
            elif self.check_twice_swap and not long_answer:
                swapped = await self._evaluate(question, generated, expected, evaluations)
                reward = 1.0 if swapped else self.reward_if_swap_fails
            else:
                reward = 1.0
        except JudgeError as exc:
            details["judge_error"] = str(exc)
            return Verdict(0.0, self._components(evaluations), details, failure_kind=JUDGE_ERROR)
        failure = JUDGE_NO_VERDICT if reward <= 0 and evaluations[-1].get("verdict_label") is None else None
        return Verdict(reward, self._components(evaluations), details, failure_kind=failure)

    @staticmethod
    def _components(evaluations: list[dict[str, Any]]) -> dict[str, float]:
        return {"judge_calls": float(sum("output_text" in e or "error" in e for e in evaluations))}

    async def _evaluate(
        self, question: str, expected: str, generated: str, evaluations: list[dict[str, Any]]
    ) -> bool:
        """One judge pass (recorded in ``evaluations``): whether the judge says the answers match.

        Raises:
            JudgeError: The judge could not answer.
        """
        if (
            self.exact_match_shortcut
            and exact_form(expected)
            and exact_form(expected) == exact_form(generated)
        ):
            evaluations.append({"verdict_label": self.judge_equal_label, "shortcut": "exact_match"})
            return True
        prompt = self.judge_prompt_template.format(
            question=question, expected_answer=expected, generated_answer=generated
        )
        messages = [{"role": "user", "content": prompt}]
        if self.judge_system_message:
            messages.insert(0, {"role": "system", "content": self.judge_system_message})
        evaluation = await ask_for_verdict(
            self.judge,
            messages,
            self.judge_equal_label,
            self.judge_not_equal_label,
            position=self.verdict_label_position,
        )
        evaluations.append(evaluation)
        if "error" in evaluation:
            raise JudgeError(evaluation["error"])
        return evaluation["verdict_label"] == self.judge_equal_label

    def judged_answers(self, prompt: Prompt) -> tuple[str, str] | None:
        """The two answers one of this env's judge prompts compares, in the prompt's order.

        Args:
            prompt: The judge prompt: its messages, or the text of its user message.

        Returns:
            ``(expected_answer, generated_answer)`` as the prompt holds them (swapped in a
            ``check_twice_swap`` call), or ``None`` when ``prompt`` was not made from this env's
            ``judge_prompt_template``.

        Example:
            >>> env = EquivalenceLLMJudgeEnv()
            >>> prompt = env.judge_prompt_template.format(
            ...     question="Who?", expected_answer="darwin", generated_answer="Charles Darwin")
            >>> env.judged_answers(prompt)
            ('darwin', 'Charles Darwin')
        """
        try:
            fields = template_fields(self.judge_prompt_template, prompt_text(prompt))
        except ValueError:  # a template with format specs cannot be read back
            return None
        if not fields or "expected_answer" not in fields or "generated_answer" not in fields:
            return None
        return fields["expected_answer"], fields["generated_answer"]

    # ----------------------------------------------------------------- reference
    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """The expected answer, written so that the row's extraction regex (if any) finds it."""
        expected = expected_answer(task)
        if self._too_long_for_regex(task, expected):
            return [it.message(expected)]  # graded on the whole text: the bare answer is right
        regex = self._per_record_regex(task) or self.response_extract_regex
        if regex:
            for text in (f"Answer: {expected}", f"\\boxed{{{expected}}}", f"The answer is {expected}."):
                if re.search(regex, text, re.MULTILINE | re.DOTALL) and exact_form(
                    extract(text, regex)
                ) == exact_form(expected):
                    return [it.message(text)]
        if "\\boxed" in question_text(task, None):
            return [it.message(f"\\boxed{{{expected}}}")]
        return [it.message(expected)]
