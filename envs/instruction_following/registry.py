"""The instruction registry: ids, argument models, checkers, and the calls that run them.

Each instruction is a checker ``check(text, **kwargs) -> bool`` and a pydantic model of its
``kwargs`` (the reference's ``build_description`` arguments, same names). The checker modules under
:mod:`.checkers` fill :data:`INSTRUCTIONS` when imported; :mod:`.instructions` imports them all.
Rows are validated against the models when tasks load, so a bad id or argument is reported then,
not scored as a silent zero.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

Relation = Literal["less than", "at least"]
Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Phrase = Annotated[str, Field(min_length=1)]


def _first_of_list(value: Any) -> Any:
    # open-instruct takes the first entry when a word argument arrives as a list.
    if isinstance(value, list | tuple) and value:
        return value[0]
    return value


#: A word argument given as a string, or as a list whose first entry is used.
WordOrList = Annotated[Phrase, BeforeValidator(_first_of_list)]

#: Where an instruction comes from: Google's IFEval, open-instruct's IFEvalG additions, IFBench.
Source = Literal["ifeval", "ifevalg", "ifbench"]
#: Models a checker needs loaded before its first call (see :func:`.instructions.warm_up`).
Resource = Literal["punkt", "langdetect", "tagger"]


class Args(BaseModel):
    """Arguments of an instruction; unknown names are refused (the reference raises a TypeError)."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    """An instruction without arguments."""


class AnyArgs(BaseModel):
    """An instruction whose reference takes ``**kwargs`` and ignores them all."""

    model_config = ConfigDict(extra="ignore")


@dataclass(frozen=True)
class Instruction:
    """One verifiable instruction: its id, argument model, checker, source and the models it needs."""

    id: str
    args: type[BaseModel]
    check: Callable[..., bool]
    source: Source
    needs: frozenset[str] = frozenset()


INSTRUCTIONS: dict[str, Instruction] = {}


def registrar(source: Source) -> Callable[..., Callable[[Callable[..., bool]], Callable[..., bool]]]:
    """A decorator factory that registers checkers of one source.

    Example:
        >>> register = registrar("ifeval")
        >>> callable(register)
        True
    """

    def register(
        instruction_id: str, args: type[BaseModel] = NoArgs, needs: tuple[Resource, ...] = ()
    ) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
        def add(check: Callable[..., bool]) -> Callable[..., bool]:
            if instruction_id in INSTRUCTIONS:
                raise ValueError(f"instruction id {instruction_id!r} registered twice")
            INSTRUCTIONS[instruction_id] = Instruction(instruction_id, args, check, source, frozenset(needs))
            return check

        return add

    return register


def compare(actual: int, relation: str, threshold: int) -> bool:
    """IFEval's two relations: ``"less than"`` is ``<``, ``"at least"`` is ``>=``.

    Example:
        >>> compare(2, "less than", 3), compare(2, "at least", 3)
        (True, False)
    """
    return actual < threshold if relation == "less than" else actual >= threshold


def count_pattern(pattern: str, text: str) -> int:
    """Case-insensitive matches of ``pattern`` in ``text``: keywords are regular expressions in IFEval.

    Returns:
        The number of non-overlapping matches.

    Raises:
        InvalidPattern: ``pattern`` is not a valid regular expression.
    """
    return len(search_all(pattern, text))


def search_all(pattern: str, text: str, flags: int = re.IGNORECASE) -> list[Any]:
    """``re.findall`` of a pattern taken from a row, with a clear error for a broken one.

    Returns:
        What ``re.findall`` returns: the matches (or their groups).

    Raises:
        InvalidPattern: ``pattern`` is not a valid regular expression.
    """
    try:
        return re.findall(pattern, text, flags=flags)
    except re.error as exc:
        raise InvalidPattern(f"{pattern!r} is not a valid regular expression ({exc})") from None


class InvalidPattern(ValueError):
    """A keyword or marker, used as a regular expression as the reference does, does not compile."""


def parse_kwargs(instruction_id: str, kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated arguments for ``instruction_id``; ``None`` values are dropped, as NeMo Gym does.

    Returns:
        The arguments the checker takes, by name.

    Raises:
        KeyError: The instruction id is unknown.
        pydantic.ValidationError: An argument is missing, unknown or of the wrong type.
    """
    spec = INSTRUCTIONS[instruction_id]
    given = {key: value for key, value in (kwargs or {}).items() if value is not None}
    return spec.args.model_validate(given).model_dump()


def check_instruction(instruction_id: str, kwargs: Mapping[str, Any] | None, response: str) -> bool:
    """Whether ``response`` follows the instruction.

    Returns:
        True if the checker passes ``response``.

    Raises:
        KeyError: The instruction id is unknown.
        pydantic.ValidationError: An argument is missing, unknown or of the wrong type.
        InvalidPattern: A keyword the reference reads as a regular expression does not compile.
    """
    return bool(INSTRUCTIONS[instruction_id].check(response, **parse_kwargs(instruction_id, kwargs)))


def describe_kwargs_error(index: int, instruction_id: str, exc: ValidationError) -> str:
    """A one-line message naming the instruction and the offending argument.

    Returns:
        E.g. ``kwargs[0] for 'keywords:frequency': argument 'relation': Field required``.
    """
    err = exc.errors()[0]
    name = ".".join(str(part) for part in err["loc"])
    where = f"argument {name!r}" if name else "arguments"
    return f"kwargs[{index}] for {instruction_id!r}: {where}: {err['msg']}"
