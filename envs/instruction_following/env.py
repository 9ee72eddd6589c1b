"""InstructionFollowing: answer a prompt while following verifiable instructions.

Port of NeMo Gym's ``instruction_following`` resources server. No tools: the model answers in one
turn and the text of its last assistant message is checked against every instruction of the row.
``grading_mode`` ``"binary"`` (the default) rewards 1.0 only if all are followed, ``"fraction"``
rewards the fraction followed. The 112 checkers (IFEval, open-instruct's IFEvalG additions and
IFBench, with the reference semantics) are registered by :mod:`.instructions`; they run offline
(NLTK's Punkt model comes from a wheel, nothing is downloaded).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from gym_llm import cpu_pool
from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.failures import VERIFY_ERROR
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

from .instructions import (
    INSTRUCTIONS,
    InvalidPattern,
    check_instruction,
    describe_kwargs_error,
    needed_resources,
    parse_kwargs,
    warm_up,
)

GradingMode = Literal["binary", "fraction"]
GRADING_MODES: tuple[str, ...] = ("binary", "fraction")

# Workers of the CPU pool, which check long answers, start with the checkers imported.
cpu_pool.add_preload(__name__)

# failure_kind values
EMPTY_RESPONSE = "empty_response"
INSTRUCTION_ERROR = "instruction_error"


def check_instruction_ids(ids: list[str], row_id: Any = None) -> list[str]:
    """Refuse an empty list or an id that no checker knows, naming the id and close matches."""
    if not ids:
        raise ValueError("the list is empty: a row needs at least one instruction")
    for index, instruction_id in enumerate(ids):
        if instruction_id not in INSTRUCTIONS:
            row = f" (row id {row_id!r})" if row_id is not None else ""
            close = difflib.get_close_matches(str(instruction_id), list(INSTRUCTIONS), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise ValueError(
                f"unknown instruction id {instruction_id!r} at index {index}{row}{hint} "
                f"({len(INSTRUCTIONS)} ids are supported: IFEval, IFEvalG and IFBench; see the env README)"
            )
    return ids


def check_kwargs_list(kwargs: list[dict[str, Any] | None] | None, ids: list[str] | None) -> None:
    """Refuse a kwargs list whose length or arguments do not fit ``ids`` (no list: no arguments)."""
    if ids is None:
        return
    if kwargs is None:
        kwargs = [None] * len(ids)
    if len(kwargs) != len(ids):
        raise ValueError(f"has {len(kwargs)} entries but instruction_id_list has {len(ids)}")
    for index, (instruction_id, args) in enumerate(zip(ids, kwargs, strict=True)):
        try:
            parse_kwargs(instruction_id, args)
        except ValidationError as exc:
            raise ValueError(describe_kwargs_error(index, instruction_id, exc)) from None


class InstructionSpec(BaseModel):
    """``verifier_metadata`` of newer NeMo rows: the instruction fields, nested."""

    model_config = ConfigDict(extra="allow")

    instruction_id_list: list[str] | None = None
    kwargs: list[dict[str, Any] | None] | None = Field(default=None, validate_default=True)
    grading_mode: GradingMode | None = None

    @field_validator("instruction_id_list")
    @classmethod
    def _ids(cls, ids: list[str] | None) -> list[str] | None:
        return None if ids is None else check_instruction_ids(ids)

    @field_validator("kwargs")
    @classmethod
    def _kwargs(cls, kwargs: list | None, info: ValidationInfo) -> list | None:
        check_kwargs_list(kwargs, info.data.get("instruction_id_list"))
        return kwargs


class InstructionFollowingTask(TaskRow):
    """A NeMo Gym instruction_following row.

    ``instruction_id_list``/``kwargs``/``grading_mode`` sit at the top level (older rows) or under
    ``verifier_metadata`` (newer rows); the top level wins. ``reference_response`` is ours: a
    response that follows every instruction, played by the reference policy.
    """

    id: int | str | None = None
    prompt: str | None = None
    # Declared before instruction_id_list so that its validator can look here.
    verifier_metadata: InstructionSpec | None = None
    instruction_id_list: list[str] | None = Field(default=None, validate_default=True)
    kwargs: list[dict[str, Any] | None] | None = Field(default=None, validate_default=True)
    grading_mode: GradingMode | None = None
    reference_response: str | None = None

    @field_validator("instruction_id_list")
    @classmethod
    def _ids(cls, ids: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if ids is not None:
            return check_instruction_ids(ids, info.data.get("id"))
        nested = info.data.get("verifier_metadata")
        if nested is None or nested.instruction_id_list is None:
            raise ValueError("missing: give instruction_id_list at the top level or under verifier_metadata")
        return None

    @field_validator("kwargs")
    @classmethod
    def _kwargs(cls, kwargs: list | None, info: ValidationInfo) -> list | None:
        check_kwargs_list(kwargs, info.data.get("instruction_id_list"))
        return kwargs


def instruction_spec(task: Mapping[str, Any], default_mode: str = "binary") -> tuple[list, list, str]:
    """``(instruction_id_list, kwargs, grading_mode)`` of a plain row, top level first."""
    nested = task.get("verifier_metadata")
    nested = nested if isinstance(nested, Mapping) else {}
    source = task if task.get("instruction_id_list") is not None else nested
    ids = list(source.get("instruction_id_list") or [])
    kwargs = source.get("kwargs")
    kwargs = list(kwargs) if isinstance(kwargs, list) else []
    kwargs += [None] * (len(ids) - len(kwargs))
    mode = task.get("grading_mode") or nested.get("grading_mode") or default_mode
    return ids, kwargs, mode


def follow_instructions(
    ids: list[str], kwargs: list[Any], response: str
) -> tuple[list[bool], dict[str, str]]:
    """Check each instruction; a bad id, argument or pattern of the row counts as not followed, reported.

    Returns:
        One bool per instruction, and ``{index: message}`` for those that could not be checked.

    Raises:
        Exception: A checker failed in some other way (a fault of the checker, not of the row).
    """
    followed: list[bool] = []
    errors: dict[str, str] = {}
    for index, (instruction_id, args) in enumerate(zip(ids, kwargs, strict=False)):
        if args is not None and not isinstance(args, Mapping):
            followed.append(False)
            got = type(args).__name__
            errors[str(index)] = f"kwargs[{index}] for {instruction_id!r}: expected an object, got {got}"
            continue
        try:
            followed.append(bool(check_instruction(instruction_id, args, response)))
        except KeyError:
            followed.append(False)
            errors[str(index)] = f"unknown instruction id {instruction_id!r}"
        except ValidationError as exc:
            followed.append(False)
            errors[str(index)] = describe_kwargs_error(index, instruction_id, exc)
        except InvalidPattern as exc:  # the reference fails such an instruction too
            followed.append(False)
            errors[str(index)] = f"{instruction_id}: {exc}"
    return followed, errors


class InstructionFollowingEnv(LLMEnv):
    """Follow every verifiable instruction of the prompt; no tools, one turn."""

    task_model = InstructionFollowingTask
    max_turns = 2  # a stray tool call gets an error output and one more turn
    reward_components = ("follow_all_instructions", "instruction_accuracy")

    def __init__(
        self,
        tasks: Any = None,
        *,
        grading_mode: GradingMode = "binary",
        offload_chars: int | None = 2_000,
        verify_timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            grading_mode: The mode of rows that name none: ``"binary"`` or ``"fraction"``.
            offload_chars: Answers longer than this are checked in the shared CPU process pool
                (:mod:`gym_llm.cpu_pool`): some checkers (NLTK's tokenizers, title case) take up to
                ~20 ms per 1,000 characters, too long to run on the event loop. ``None`` checks
                everything inline.
            verify_timeout: Seconds a pooled check may take before it scores 0 (``verify_error``).
            **kwargs: Passed on to :class:`~gym_llm.env.LLMEnv`.
        """
        if grading_mode not in GRADING_MODES:
            raise ValueError(f"grading_mode must be one of {GRADING_MODES}, got {grading_mode!r}")
        self.grading_mode = grading_mode
        self.offload_chars = offload_chars
        self.verify_timeout = verify_timeout
        super().__init__(tasks, **kwargs)
        # Load the models the rows need (Punkt, langdetect's profiles, the tagger) now, not in a verify.
        warm_up(needed_resources(i for task in self.tasks for i in instruction_spec(task)[0]))

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        text = it.last_assistant_text(response["output"])
        ids, kwargs, mode = instruction_spec(task, self.grading_mode)
        if text.strip():
            followed, errors = follow_instructions(ids, kwargs, text)
        else:
            followed, errors = [False] * len(ids), {}
        return grade(followed, errors, mode, empty=not text.strip())

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """As :meth:`LLMEnv.averify`; long answers are checked in the shared CPU process pool."""
        output = response.get("output") if isinstance(response, Mapping) else None
        # Anything but a plain list of item dicts takes the base class's way, which checks it.
        if self.offload_chars is None or not _plain_items(output):
            return await super().averify(task, response)
        text = it.last_assistant_text(output)
        if len(text) <= self.offload_chars:
            return await super().averify(task, response)
        ids, kwargs, mode = instruction_spec(task, self.grading_mode)
        try:
            followed, errors = await cpu_pool.run_in_process(
                follow_instructions, ids, kwargs, text, timeout=self.verify_timeout
            )
            verdict = grade(followed, errors, mode, empty=False)
        except Exception as exc:  # a timed-out or crashed worker must not crash the episode
            error = f"{type(exc).__name__}: {exc}"
            verdict = Verdict(0.0, failure_kind=VERIFY_ERROR, details={"error": error})
        return self._completed(verdict)

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        reference = task.get("reference_response")
        if not reference:
            raise NotImplementedError("this row has no reference_response")
        return [it.message(reference)]


def _plain_items(output: Any) -> TypeGuard[list[dict[str, Any]]]:
    return isinstance(output, list) and all(isinstance(item, dict) for item in output)


def grade(followed: list[bool], errors: dict[str, str], mode: str, *, empty: bool) -> Verdict:
    """The verdict for per-instruction results: reward by ``mode``, NeMo Gym's details, failure kind.

    Returns:
        A :class:`~gym_llm.verdict.Verdict`: reward (all followed, or the fraction in ``"fraction"``
        mode), both components, ``follow_all_instructions``/``follow_instruction_list`` (and
        ``instruction_errors``) in details, and ``empty_response``/``instruction_error`` or None;
        an ``instruction_error`` (the row's ids or arguments are broken) is ``masked``.

    Example:
        >>> grade([True, False], {}, "fraction", empty=False).reward
        0.5
    """
    accuracy = sum(followed) / len(followed) if followed else 0.0
    follow_all = bool(followed) and all(followed)
    details: dict[str, Any] = {"follow_all_instructions": follow_all, "follow_instruction_list": followed}
    if errors:
        details["instruction_errors"] = errors
    failure_kind = None
    if empty:
        failure_kind = EMPTY_RESPONSE
    elif errors:
        failure_kind = INSTRUCTION_ERROR
    return Verdict(
        accuracy if mode == "fraction" else float(follow_all),
        components={"follow_all_instructions": float(follow_all), "instruction_accuracy": accuracy},
        details=details,
        failure_kind=failure_kind,
        masked=failure_kind == INSTRUCTION_ERROR,
    )
