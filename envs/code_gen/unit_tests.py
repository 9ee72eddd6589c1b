"""The unit tests of a CodeGen row: their forms, NeMo's packed encoding, and call-based test values.

Three forms, told apart by ``fn_name`` and the type of the inputs:

- stdin/stdout (``fn_name`` null): ``inputs`` and ``outputs`` are strings, fed to stdin and
  compared with stdout.
- LiveCodeBench call-based (``fn_name`` set, string inputs): each input holds the call's
  arguments as JSON, one per line; each output is the return value as JSON.
- TACO/APPS call-based (``fn_name`` set, list inputs): each input is the list of arguments;
  each output the return value, usually wrapped in a one-item list.

Example:
    >>> call_arguments('[2, 7, 11, 15]\\n9')
    [[2, 7, 11, 15], 9]
    >>> unpack_unit_tests({"packed": pack_unit_tests(["1\\n"], ["2\\n"])})["inputs"]
    ['1\\n']
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class UnitTests(BaseModel):
    """LiveCodeBench-style tests: inputs and expected outputs, ``fn_name`` for call-based ones."""

    model_config = ConfigDict(extra="allow")

    inputs: list[Any]
    outputs: list[Any]
    fn_name: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> UnitTests:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"{len(self.inputs)} inputs but {len(self.outputs)} outputs")
        if not self.inputs:
            raise ValueError("no tests")
        if self.fn_name is None:
            if not all(isinstance(value, str) for value in (*self.inputs, *self.outputs)):
                raise ValueError("stdin tests (fn_name null) need string inputs and outputs")
        elif all(isinstance(value, str) for value in self.inputs):
            if not all(isinstance(value, str) for value in self.outputs):
                raise ValueError("call-based tests with JSON-text inputs need JSON-text outputs")
        elif not all(isinstance(value, list) for value in self.inputs):
            raise ValueError("call-based inputs must all be JSON text or all be argument lists")
        return self


class PackedUnitTests(BaseModel):
    """NeMo's compressed form: ``packed`` = base64(zlib(json({"inputs": [...], "outputs": [...]})))."""

    model_config = ConfigDict(extra="allow")

    packed: str
    fn_name: str | None = None


def pack_unit_tests(inputs: list[Any], outputs: list[Any]) -> str:
    """The ``packed`` string of NeMo's compressed unit tests."""
    return base64.b64encode(
        zlib.compress(json.dumps({"inputs": inputs, "outputs": outputs}).encode())
    ).decode()


def unpack_unit_tests(unit_tests: dict[str, Any]) -> dict[str, Any]:
    """Plain ``{inputs, outputs, fn_name}`` from either form.

    Raises:
        ValueError: The packed form is corrupt, or the tests are inconsistent.
    """
    if "packed" in unit_tests:
        try:
            decoded = json.loads(zlib.decompress(base64.b64decode(unit_tests["packed"])))
        except (binascii.Error, zlib.error, ValueError, TypeError) as exc:
            raise ValueError(f"cannot unpack unit tests: {exc}") from None
        if not isinstance(decoded, dict):
            raise ValueError("packed unit tests are not an object")
        unit_tests = {**decoded, "fn_name": unit_tests.get("fn_name")}
    return UnitTests.model_validate(unit_tests).model_dump()


def is_json_text_form(tests: dict[str, Any]) -> bool:
    """Whether call-based tests are in LiveCodeBench's JSON-text form (else TACO's list form)."""
    return all(isinstance(value, str) for value in tests["inputs"])


def call_arguments(test_input: Any) -> list[Any]:
    """The positional arguments of one call-based test.

    JSON text (LiveCodeBench) holds one argument per line (blank lines are skipped); a list
    (TACO/APPS) is the arguments themselves, where a leading dict's numeric string keys become
    ints again (JSON turned them into strings), as TACO's grader does.

    Raises:
        ValueError: A line is not JSON.
    """
    if isinstance(test_input, str):
        return [json.loads(line) for line in test_input.split("\n") if line.strip()]
    arguments = list(test_input)
    if arguments and isinstance(arguments[0], dict):
        arguments[0] = int_keys(arguments[0])
    return arguments


def expected_return(test_output: Any, json_text: bool) -> Any:
    """The expected return value of one call-based test (parsed when it is JSON text).

    Raises:
        ValueError: JSON text that does not parse.
    """
    return json.loads(test_output) if json_text else test_output


def int_keys(mapping: dict[Any, Any]) -> dict[Any, Any]:
    """``mapping`` with its keys as ints when every key reads as one, else unchanged."""
    try:
        return {int(key): value for key, value in mapping.items()}
    except (TypeError, ValueError):
        return mapping
