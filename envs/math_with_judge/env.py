"""MathWithJudge: solve a math problem, answer in ``\\boxed{}``; graded by math-verify, then a judge.

Port of NeMo Gym's ``math_with_judge`` resources server. No tools, one turn (a tool call in it is
not run: the turn is graded as it is).

1. The text of every assistant message is concatenated; the last ``\\boxed{`` must close
   (balanced braces) around a non-blank answer, else the reward is 0 (``no_boxed_answer``).
2. math-verify compares the whole text with ``\\boxed{<expected_answer>}`` (gold: LaTeX
   extraction; prediction: expression then LaTeX extraction) in the shared process pool, with a
   per-answer timeout (``library_verifier_timeout_seconds``, 10 s). Its score is ``library_reward``.
   When math-verify itself fails (it times out, its worker dies, or it cannot read the expected
   answer) and no judge decides instead, the reward is 0 with ``failure_kind="checker_error"``:
   a masked rollout, since the answer was never graded.
3. If ``should_use_judge`` and ``library_reward <= 0.5``, an LLM judge compares the boxed answer
   with the expected one twice, with the two answers swapped; the reward is 1 only if both calls
   say ``[[A=B]]``. The second call is skipped when the first says they differ.

The judge (``judge=``: a :class:`~gym_llm.judge.Judge`, a :class:`~gym_llm.judge.JudgeConfig`, a
dict of its fields or ``None``) is only asked in step 3. ``should_use_judge`` defaults to on when a
judge is given or named by ``GYM_LLM_JUDGE_MODEL``/``GYM_LLM_JUDGE_BASE_URL``. A judge that cannot
answer (unreachable after its retries, or never configured: then it fails at once, saying how to
configure one) gives reward 0 with ``failure_kind="judge_error"`` (masked).
:meth:`MathWithJudgeEnv.judged_answers` reads the two answers back out of a judge prompt.
"""

from __future__ import annotations

import contextlib
import io
import logging
from typing import Any

from gym_llm import cpu_pool
from gym_llm import items as it
from gym_llm.answers import last_boxed, strip_math_delimiters
from gym_llm.env import Observation
from gym_llm.failures import CHECKER_ERROR, JUDGE_ERROR
from gym_llm.judge import (
    JudgeArgument,
    Prompt,
    ask_for_verdict,
    judge_configured_in_env,
    make_judge,
    prompt_text,
    template_fields,
)
from gym_llm.single_turn import SingleTurnEnv
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

# failure_kind values of the model's answer (checker_error and judge_error: gym_llm.failures)
NO_BOXED_ANSWER = "no_boxed_answer"
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


class MathTask(TaskRow):
    """NeMo's math_with_judge row: the question (for the judge) and the expected answer."""

    question: str
    expected_answer: str


# ----------------------------------------------------------------------------- worker side
_metric: Any = None


def library_verify(expected_answer: str, generated_text: str) -> tuple[float, str | None, str | None]:
    """math-verify's score of ``generated_text`` against ``expected_answer``.

    Runs in a pool worker (math-verify's own timeouts use SIGALRM, which needs the main thread).

    Returns:
        score: math-verify's score (0.0 when it failed).
        extracted_answer: The prediction math-verify took, or ``None``.
        error: Why math-verify could not grade (``None`` when it did): it raised, timed out, or
            found no answer in the expected one.
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
    gold = "\\boxed{" + strip_math_delimiters(expected_answer) + "}"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            score, extracted = _metric([gold], [generated_text])
    except TimeoutException:  # a BaseException
        return 0.0, None, "math-verify timed out"
    except Exception as exc:  # e.g. an expected answer it cannot parse
        return 0.0, None, f"math-verify failed: {type(exc).__name__}: {exc}"[:500]
    answer = None
    if extracted:
        golds, predictions = extracted
        # The prediction that matched a gold form, else the first one (as NeMo reports it).
        answer = next((p for p in predictions if p in golds), predictions[0] if predictions else None)
    return float(score), answer, None


cpu_pool.add_preload("math_verify.metric", __name__)


# ----------------------------------------------------------------------------- env
class MathWithJudgeEnv(SingleTurnEnv):
    """Math answers graded by math-verify with an optional LLM-judge fallback (module docstring)."""

    task_model = MathTask
    reward_components = ("library_reward", "judge_calls")

    def __init__(
        self,
        tasks: Any = None,
        *,
        judge: JudgeArgument = None,
        should_use_judge: bool | None = None,
        library_verifier_timeout_seconds: float = 10.0,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            judge: A :class:`~gym_llm.judge.Judge`, a :class:`~gym_llm.judge.JudgeConfig`, a dict of
                its fields or ``None`` (see :func:`~gym_llm.judge.make_judge`).
            should_use_judge: Ask the judge when math-verify scores ``<= 0.5``. Default: only when a
                judge is given here or named by ``GYM_LLM_JUDGE_MODEL``/``GYM_LLM_JUDGE_BASE_URL``.
            library_verifier_timeout_seconds: Time limit of one math-verify comparison.
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.

        Raises:
            ValueError: A bad ``judge`` (the message names the field) or timeout.
        """
        if library_verifier_timeout_seconds <= 0:
            raise ValueError(
                f"library_verifier_timeout_seconds must be > 0, got {library_verifier_timeout_seconds}"
            )
        self.judge = make_judge(judge)
        self.should_use_judge = (
            should_use_judge
            if should_use_judge is not None
            else judge is not None or judge_configured_in_env()
        )
        self.library_verifier_timeout_seconds = library_verifier_timeout_seconds
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
        if boxed is None:
            return Verdict(0.0, {}, details, failure_kind=NO_BOXED_ANSWER)

        library_reward, extracted, checker_error = await self._library_verify(expected, text)
        details.update(extracted_answer=extracted, library_reward=library_reward)
        if checker_error:
            details["checker_error"] = checker_error
        components = {"library_reward": library_reward}
        if not self.should_use_judge or library_reward > 0.5:
            return Verdict(
                library_reward, components, details, failure_kind=CHECKER_ERROR if checker_error else None
            )

        # The judge's verdict grades the answer even where math-verify could not.
        reward, evaluations, failure = await self._judge(task["question"], expected, boxed)
        details["judge_evaluations"] = evaluations
        components["judge_calls"] = float(len(evaluations))
        return Verdict(reward, components, details, failure_kind=failure)

    async def _library_verify(self, expected: str, text: str) -> tuple[float, str | None, str | None]:
        """:func:`library_verify` in the process pool; a timeout or a dead worker is a checker error."""
        timeout = self.library_verifier_timeout_seconds
        try:
            return await cpu_pool.run_in_process(library_verify, expected, text, timeout=timeout)
        except TimeoutError:
            return 0.0, None, f"math-verify ran for more than {timeout:g} s"
        except cpu_pool.WorkerCrashed as exc:
            return 0.0, None, f"math-verify's worker died: {exc}"

    async def _judge(
        self, question: str, expected: str, generated: str
    ) -> tuple[float, list[dict[str, Any]], str | None]:
        """Ask with the expected answer first, then (if equal) with it second: 1.0 iff both say equal."""
        evaluations: list[dict[str, Any]] = []
        for first, second in ((expected, generated), (generated, expected)):
            evaluation = await ask_for_verdict(
                self.judge, judge_messages(question, first, second), EQUAL_LABEL, NOT_EQUAL_LABEL
            )
            evaluations.append(evaluation)
            if "error" in evaluation:
                return 0.0, evaluations, JUDGE_ERROR
            label = evaluation["verdict_label"]
            if label != EQUAL_LABEL:
                # No label counts as "different", as in NeMo; it is flagged for counting.
                return 0.0, evaluations, JUDGE_NO_VERDICT if label is None else None
        return 1.0, evaluations, None

    def judged_answers(self, prompt: Prompt) -> tuple[str, str] | None:
        """The two answers one of this env's judge prompts compares, in the prompt's order.

        Args:
            prompt: The judge prompt: its messages, or the text of its user message.

        Returns:
            ``(answer A, answer B)``, or ``None`` when ``prompt`` is not one of this env's.

        Example:
            >>> env = MathWithJudgeEnv()
            >>> env.judged_answers(judge_messages("1/2 + 0?", "\\\\frac{1}{2}", "0.5"))
            ('\\\\frac{1}{2}', '0.5')
        """
        fields = template_fields(JUDGE_PROMPT_TEMPLATE, prompt_text(prompt))
        return (fields["first_answer"], fields["second_answer"]) if fields else None

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        return [it.message("\\boxed{" + strip_math_delimiters(task["expected_answer"]) + "}")]


def judge_messages(question: str, first_answer: str, second_answer: str) -> list[dict[str, str]]:
    """The judge's messages comparing answer A (``first_answer``) with answer B to ``question``."""
    user = JUDGE_PROMPT_TEMPLATE.format(
        question=question, first_answer=first_answer, second_answer=second_answer
    )
    return [{"role": "system", "content": JUDGE_SYSTEM_MESSAGE}, {"role": "user", "content": user}]
