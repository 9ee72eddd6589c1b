"""InstructionFollowing: answer a prompt while following IFEval's verifiable instructions.

Port of NeMo Gym's ``instruction_following`` resources server. No tools: the model answers in one
turn and the text of its last assistant message is checked against every instruction of the row.
``grading_mode`` ``"binary"`` (the default) rewards 1.0 only if all are followed, ``"fraction"``
rewards the fraction followed. The checkers (all 25 IFEval instructions) are in
:mod:`.instructions`; they run offline (no NLTK or spaCy downloads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.env import LLMEnv, Observation
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

from .instructions import INSTRUCTIONS, check_instruction, describe_kwargs_error, parse_kwargs
from .text import detect_language

GradingMode = Literal["binary", "fraction"]
GRADING_MODES: tuple[str, ...] = ("binary", "fraction")

# failure_kind values
EMPTY_RESPONSE = "empty_response"
MALFORMED_RESPONSE = "malformed_response"
INSTRUCTION_ERROR = "instruction_error"

# Instructions that run langdetect, whose profiles take ~0.5 s to load.
LANGUAGE_IDS = frozenset(
    {"language:response_language", "change_case:english_capital", "change_case:english_lowercase"}
)


def check_instruction_ids(ids: list[str], row_id: Any = None) -> list[str]:
    """Refuse an empty list or an id that is not one of the 25 IFEval instructions."""
    if not ids:
        raise ValueError("the list is empty: a row needs at least one instruction")
    for index, instruction_id in enumerate(ids):
        if instruction_id not in INSTRUCTIONS:
            row = f" (row id {row_id!r})" if row_id is not None else ""
            raise ValueError(
                f"unknown instruction id {instruction_id!r} at index {index}{row}; "
                f"known ids: {', '.join(sorted(INSTRUCTIONS))}"
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
    """Check each instruction; a bad id or argument counts as not followed and is reported."""
    followed: list[bool] = []
    errors: dict[str, str] = {}
    for index, (instruction_id, args) in enumerate(zip(ids, kwargs, strict=False)):
        try:
            followed.append(bool(check_instruction(instruction_id, args, response)))
        except KeyError:
            followed.append(False)
            errors[str(index)] = f"unknown instruction id {instruction_id!r}"
        except ValidationError as exc:
            followed.append(False)
            errors[str(index)] = describe_kwargs_error(index, instruction_id, exc)
        except (TypeError, AttributeError) as exc:
            followed.append(False)
            errors[str(index)] = f"{instruction_id}: {type(exc).__name__}: {exc}"
    return followed, errors


class InstructionFollowingEnv(LLMEnv):
    """Follow every verifiable instruction of the prompt; no tools, one turn."""

    task_model = InstructionFollowingTask
    max_turns = 2  # a stray tool call gets an error output and one more turn

    def __init__(self, tasks: Any = None, *, grading_mode: GradingMode = "binary", **kwargs: Any) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            grading_mode: The mode of rows that name none: ``"binary"`` or ``"fraction"``.
            **kwargs: Passed on to :class:`~gym_llm.env.LLMEnv`.
        """
        if grading_mode not in GRADING_MODES:
            raise ValueError(f"grading_mode must be one of {GRADING_MODES}, got {grading_mode!r}")
        self.grading_mode = grading_mode
        super().__init__(tasks, **kwargs)
        if any(LANGUAGE_IDS.intersection(instruction_spec(task)[0]) for task in self.tasks):
            detect_language("warm up")  # load the profiles now rather than inside the first verify

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        output = response.get("output") if isinstance(response, Mapping) else None
        if not isinstance(output, list):
            return Verdict(
                0.0, failure_kind=MALFORMED_RESPONSE, details={"error": "response.output is not a list"}
            )
        try:
            text = it.last_assistant_text(item for item in output if isinstance(item, Mapping))
        except (TypeError, AttributeError) as exc:
            return Verdict(
                0.0, failure_kind=MALFORMED_RESPONSE, details={"error": f"unreadable message: {exc}"}
            )

        ids, kwargs, mode = instruction_spec(task, self.grading_mode)
        if text.strip():
            followed, errors = follow_instructions(ids, kwargs, text)
        else:
            followed, errors = [False] * len(ids), {}
        accuracy = sum(followed) / len(followed) if followed else 0.0
        follow_all = bool(followed) and all(followed)
        details: dict[str, Any] = {"follow_all_instructions": follow_all, "follow_instruction_list": followed}
        if errors:
            details["instruction_errors"] = errors
        failure_kind = None
        if not text.strip():
            failure_kind = EMPTY_RESPONSE
        elif errors:
            failure_kind = INSTRUCTION_ERROR
        return Verdict(
            accuracy if mode == "fraction" else float(follow_all),
            components={"follow_all_instructions": float(follow_all), "instruction_accuracy": accuracy},
            details=details,
            failure_kind=failure_kind,
        )

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        reference = task.get("reference_response")
        if not reference:
            raise NotImplementedError("this row has no reference_response")
        return [it.message(reference)]
