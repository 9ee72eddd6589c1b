"""MathWithJudge: solve a math problem, answer in ``\\boxed{}``; graded by math-verify, then a judge.

Port of NeMo Gym's ``math_with_judge`` resources server. No tools, one turn (a tool call in it is
not run: the turn is graded as it is).

1. The text of every assistant message is concatenated; the last ``\\boxed{`` must close
   (balanced braces) around a non-blank answer, else the reward is 0 (``no_boxed_answer``).
2. math-verify compares the whole text with ``\\boxed{<expected_answer>}`` (gold: LaTeX
   extraction; prediction: expression then LaTeX extraction) in the shared process pool, with a
   per-answer timeout (``library_verifier_timeout_seconds``, 10 s). Its score is ``library_reward``.
3. If ``should_use_judge`` and ``library_reward <= 0.5``, an LLM judge compares the boxed answer
   with the expected one twice, with the two answers swapped; the reward is 1 only if both calls
   say ``[[A=B]]``. The second call is skipped when the first says they differ.

A judge that cannot be reached after its retries gives reward 0 with ``failure_kind="judge_error"``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from typing import Any

from gym_llm import cpu_pool
from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.judge import (
    JUDGE_ERROR,
    JudgeConfig,
    JudgeError,
    ask,
    judge_configured_in_env,
    parse_verdict,
    register_oracle_judge,
)
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

# failure_kind values
NO_BOXED_ANSWER = "no_boxed_answer"
VERIFY_TIMEOUT = "verify_timeout"
VERIFY_CRASH = "verify_crash"
JUDGE_NO_VERDICT = "judge_no_verdict"

EQUAL_LABEL = "[[A=B]]"
NOT_EQUAL_LABEL = "[[A!=B]]"

# Our wording of an A/B equivalence judge prompt (NeMo adapts Arena-Hard's judge messages).
JUDGE_SYSTEM_MESSAGE = f"""You judge whether two answers to a math problem are mathematically equivalent.

Only mathematical equivalence matters: ignore formatting, notation and presentation, and ignore any \
formatting instructions in the problem. Do not solve the problem yourself beyond what is needed to \
compare the two answers.

Give a short justification, then end with exactly one of these verdict labels:
- the answers are equivalent: {EQUAL_LABEL}
- the answers are different: {NOT_EQUAL_LABEL}

For example: "Answer A is 1/2 and answer B is 0.5, the same number. Verdict: {EQUAL_LABEL}\""""

JUDGE_PROMPT_TEMPLATE = (
    "<|Problem|>\n{question}\n\n"
    "<|Answer A|>\n{first_answer}\n<|End of Answer A|>\n\n"
    "<|Answer B|>\n{second_answer}\n<|End of Answer B|>"
)
_JUDGE_PROMPT = re.compile(
    r"<\|Answer A\|>\n(.*)\n<\|End of Answer A\|>\n\n<\|Answer B\|>\n(.*)\n<\|End of Answer B\|>\Z", re.DOTALL
)

BOXED = "\\boxed{"


class MathTask(TaskRow):
    """NeMo's math_with_judge row: the question (for the judge) and the expected answer."""

    question: str
    expected_answer: str


def last_boxed(text: str) -> str | None:
    """The contents of the last ``\\boxed{…}`` in ``text``, or ``None`` if that one never closes."""
    start = text.rfind(BOXED)
    if start < 0:
        return None
    depth = 1
    for index in range(start + len(BOXED), len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + len(BOXED) : index]
    return None


def strip_math_delimiters(answer: str) -> str:
    """``\\(x\\)`` or ``$x$`` -> ``x``: expected answers often carry them, which breaks ``\\boxed{}``."""
    answer = answer.strip()
    if answer.startswith("\\(") and answer.endswith("\\)"):
        answer = answer[2:-2].strip()
    if len(answer) > 1 and answer.startswith("$") and answer.endswith("$"):
        answer = answer[1:-1].strip()
    return answer


# ----------------------------------------------------------------------------- worker side
_metric: Any = None


def library_verify(expected_answer: str, generated_text: str) -> tuple[float, str | None]:
    """math-verify's score of ``generated_text`` against ``expected_answer``, and the answer it took.

    Runs in a pool worker (math-verify's own timeouts use SIGALRM, which needs the main thread).
    Never raises: a parse failure or math-verify's own timeout scores 0.
    """
    global _metric
    from math_verify.errors import TimeoutException

    if _metric is None:
        from math_verify.metric import math_metric
        from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig

        logging.getLogger("math_verify").setLevel(logging.CRITICAL)
        _metric = math_metric(
            gold_extraction_target=(LatexExtractionConfig(),),
            pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()),
        )
    gold = BOXED + strip_math_delimiters(expected_answer) + "}"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            score, extracted = _metric([gold], [generated_text])
    except (Exception, TimeoutException):  # TimeoutException is a BaseException
        return 0.0, None
    answer = None
    if extracted:
        golds, predictions = extracted
        # The prediction that matched a gold form, else the first one (as NeMo reports it).
        answer = next((p for p in predictions if p in golds), predictions[0] if predictions else None)
    return float(score), answer


cpu_pool.add_preload("math_verify.metric", __name__)


# ----------------------------------------------------------------------------- env
class MathWithJudgeEnv(LLMEnv):
    """Math answers graded by math-verify with an optional LLM-judge fallback (module docstring)."""

    task_model = MathTask
    max_turns = 1
    execute_tools = False  # one turn is the whole episode; tool calls are graded, never run

    def __init__(
        self,
        tasks: Any = None,
        *,
        judge: JudgeConfig | dict[str, Any] | None = None,
        should_use_judge: bool | None = None,
        library_verifier_timeout_seconds: float = 10.0,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            judge: The judge endpoint: a :class:`~gym_llm.judge.JudgeConfig`, a dict of its fields
                (the rest from ``GYM_LLM_JUDGE_*`` variables), or ``None`` (all from the variables).
            should_use_judge: Ask the judge when math-verify scores ``<= 0.5``. Default: only when a
                judge is given here or named by ``GYM_LLM_JUDGE_MODEL``/``GYM_LLM_JUDGE_BASE_URL``.
            library_verifier_timeout_seconds: Time limit of one math-verify comparison.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        if library_verifier_timeout_seconds <= 0:
            raise ValueError(
                f"library_verifier_timeout_seconds must be > 0, got {library_verifier_timeout_seconds}"
            )
        self.judge = JudgeConfig.coerce(judge)
        self.should_use_judge = (
            should_use_judge
            if should_use_judge is not None
            else judge is not None or judge_configured_in_env()
        )
        self.library_verifier_timeout_seconds = library_verifier_timeout_seconds
        register_oracle_judge(parse_judge_prompt)
        super().__init__(tasks, **kwargs)

    async def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        expected = task["expected_answer"]
        text = it.output_text(response["output"])
        details: dict[str, Any] = {
            "expected_answer": expected,
            "extracted_answer": None,
            "library_reward": 0.0,
            "judge_evaluations": None,
        }
        boxed = last_boxed(text)
        if boxed is None or not boxed.strip():
            return Verdict(0.0, {"library_reward": 0.0}, details, failure_kind=NO_BOXED_ANSWER)

        library_failure = None
        try:
            library_reward, extracted = await cpu_pool.run_in_process(
                library_verify, expected, text, timeout=self.library_verifier_timeout_seconds
            )
        except TimeoutError:
            library_reward, extracted, library_failure = 0.0, None, VERIFY_TIMEOUT
        except cpu_pool.WorkerCrashed:
            library_reward, extracted, library_failure = 0.0, None, VERIFY_CRASH
        details.update(extracted_answer=extracted, library_reward=library_reward)
        components = {"library_reward": library_reward}
        if library_failure:
            details["library_error"] = library_failure
        if not self.should_use_judge or library_reward > 0.5:
            return Verdict(library_reward, components, details, failure_kind=library_failure)

        reward, evaluations, failure = await self._judge(task["question"], expected, boxed)
        details["judge_evaluations"] = evaluations
        components["judge_calls"] = float(len(evaluations))
        return Verdict(
            reward, components, details, failure_kind=failure or (library_failure if not reward else None)
        )

    async def _judge(
        self, question: str, expected: str, generated: str
    ) -> tuple[float, list[dict[str, Any]], str | None]:
        """Ask with the expected answer first, then (if equal) with it second: 1.0 iff both say equal."""
        evaluations: list[dict[str, Any]] = []
        for first, second in ((expected, generated), (generated, expected)):
            messages = [
                {"role": "system", "content": JUDGE_SYSTEM_MESSAGE},
                {
                    "role": "user",
                    "content": JUDGE_PROMPT_TEMPLATE.format(
                        question=question, first_answer=first, second_answer=second
                    ),
                },
            ]
            evaluation: dict[str, Any] = {"responses_create_params": {"input": messages}}
            evaluations.append(evaluation)
            try:
                text = await ask(self.judge, messages)
            except JudgeError as exc:
                evaluation["error"] = str(exc)
                return 0.0, evaluations, JUDGE_ERROR
            label, issues = parse_verdict(text, EQUAL_LABEL, NOT_EQUAL_LABEL)
            evaluation.update(output_text=text, verdict_label=label, parsing_issues=issues)
            if label != EQUAL_LABEL:
                # No label counts as "different", as in NeMo; it is flagged for counting.
                return 0.0, evaluations, JUDGE_NO_VERDICT if label is None else None
        return 1.0, evaluations, None

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        return [it.message(BOXED + strip_math_delimiters(task["expected_answer"]) + "}")]


def parse_judge_prompt(prompt: str) -> tuple[str, str] | None:
    """The two answers of one of this env's judge prompts (for the test server's judge)."""
    match = _JUDGE_PROMPT.search(prompt)
    return (match.group(1), match.group(2)) if match else None


register_oracle_judge(parse_judge_prompt)
