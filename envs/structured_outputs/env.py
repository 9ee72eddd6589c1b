"""StructuredOutputs: answer with a document that validates against the row's schema.

Port of NeMo Gym's ``structured_outputs`` resources server. One turn, reward 1.0 or 0.0:

- ``response_mode="text"`` (default): the concatenated assistant text is parsed as ``schema_type``
  (``json``, ``yaml``, ``xml``, ``toml`` or ``csv``); XML and CSV leaves, which parse as strings,
  are coerced to the schema's types; the result must validate against ``schema_str`` made strict.
- ``response_mode="tool_call"``: the turn must hold exactly one ``function_call`` (named
  ``tool_name`` when the row sets it); its JSON arguments, unwrapped from ``tool_payload_key`` when
  the row sets it, must validate against the strict schema. The call is the answer: it is never run.

"Strict" means every object schema with ``properties`` gets all of them ``required`` and
``additionalProperties: false``, recursively (into ``oneOf``/``anyOf`` branches and ``$defs``, not
into ``allOf``/``if``/``then``/``else``/``not``, where that would change the meaning).

Modules: this one (row, env), :mod:`~gym_llm.envs.structured_outputs.grading` (one response
against the schema), :mod:`~gym_llm.envs.structured_outputs.schemas` (strict schemas, validators,
example documents), :mod:`~gym_llm.envs.structured_outputs.formats` (parsing, coercing and
writing the five formats).

Failures are reported as NeMo's ``error_type`` (``details["error_type"]`` and ``failure_kind``):
``empty_response``, ``parse_error``, ``schema_error``, ``validation_error``, ``api_error``,
``missing_tool_call``, ``multiple_tool_calls``, ``wrong_tool_name``, ``tool_arguments_parse_error``,
``missing_tool_payload_key``. ``schema_error`` (the row's schema is broken) and ``api_error`` (the
model call failed) are not the model's: those rollouts are masked (``mask_sample``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationInfo, field_validator

from gym_llm import items as it
from gym_llm.cpu_pool import add_preload, run_in_process
from gym_llm.env import Observation
from gym_llm.failures import VERIFY_ERROR
from gym_llm.single_turn import SingleTurnEnv
from gym_llm.tasks import TaskRow
from gym_llm.verdict import Verdict

from .formats import (
    SchemaType,
    coerce_csv,
    coerce_xml,
    parse_document,
    render_document,
)
from .grading import (
    API_ERROR,
    EMPTY_RESPONSE,
    MASKED_ERROR_TYPES,
    MISSING_TOOL_CALL,
    MISSING_TOOL_PAYLOAD_KEY,
    MULTIPLE_TOOL_CALLS,
    PARSE_ERROR,
    SCHEMA_ERROR,
    TOOL_ARGUMENTS_PARSE_ERROR,
    VALIDATION_ERROR,
    WRONG_TOOL_NAME,
    Grade,
    grade,
    response_chars,
    tool_payload,
)
from .schemas import (
    SchemaProblem,
    example_document,
    strict_validator,
    strictify,
)

__all__ = [
    "API_ERROR",
    "EMPTY_RESPONSE",
    "MASKED_ERROR_TYPES",
    "MISSING_TOOL_CALL",
    "MISSING_TOOL_PAYLOAD_KEY",
    "MULTIPLE_TOOL_CALLS",
    "PARSE_ERROR",
    "SCHEMA_ERROR",
    "TOOL_ARGUMENTS_PARSE_ERROR",
    "VALIDATION_ERROR",
    "WRONG_TOOL_NAME",
    "Grade",
    "ResponseMode",
    "SchemaProblem",
    "SchemaType",
    "StructuredOutputsEnv",
    "StructuredOutputsTask",
    "coerce_csv",
    "coerce_xml",
    "example_document",
    "grade",
    "parse_document",
    "render_document",
    "strict_validator",
    "strictify",
    "tool_payload",
]

# Workers of the shared CPU pool start with the parsers and the validator already imported.
add_preload("gym_llm.envs.structured_outputs.grading")

ResponseMode = Literal["text", "tool_call"]


class StructuredOutputsTask(TaskRow):
    """NeMo's structured_outputs row fields; its many breakdown fields pass through as extras.

    ``reference_document`` is ours (optional): a document valid against the schema, played by
    :meth:`StructuredOutputsEnv.reference_action`. Without it one is generated from the schema.
    """

    schema_str: str
    schema_type: SchemaType = "json"
    response_mode: ResponseMode | None = "text"
    tool_name: str | None = None
    tool_payload_key: str | None = None
    reference_document: Any = None

    @field_validator("schema_str")
    @classmethod
    def _json_object(cls, value: str) -> str:
        try:
            schema = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
        if not isinstance(schema, dict):
            raise ValueError(f"expected a JSON Schema object, got {type(schema).__name__}")
        return value

    @field_validator("tool_name")
    @classmethod
    def _offered_tool(cls, value: str | None, info: ValidationInfo) -> str | None:
        params = info.data.get("responses_create_params")
        tools = getattr(params, "tools", None)
        if value is not None and tools and value not in {tool.get("name") for tool in tools}:
            raise ValueError(f"{value!r} is not among responses_create_params.tools")
        return value


class StructuredOutputsEnv(SingleTurnEnv):
    """Schema-following output, as text in five formats or as a tool call; see the module docstring."""

    task_model = StructuredOutputsTask

    def __init__(
        self,
        tasks: Any = None,
        *,
        xml_coerce_types: bool = True,
        strip_code_fences: bool = False,
        offload_chars: int | None = 100_000,
        verify_timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        """Create the env.

        Args:
            tasks: Task rows (see :class:`~gym_llm.env.LLMEnv`).
            xml_coerce_types: Coerce XML string leaves to the schema's types (NeMo's config field).
            strip_code_fences: Read the inside of a text answer wrapped in one ```lang fenced block.
                NeMo does not (a fenced answer is a ``parse_error``), hence off by default.
            offload_chars: Responses longer than this are graded in the shared CPU process pool
                (:mod:`gym_llm.cpu_pool`), so that big documents do not block the event loop;
                ``None`` grades everything inline.
            verify_timeout: Seconds a pooled grading may take before it scores 0 (``verify_error``).
            **kwargs: Passed to :class:`~gym_llm.env.LLMEnv`.
        """
        self.xml_coerce_types = xml_coerce_types
        self.strip_code_fences = strip_code_fences
        self.offload_chars = offload_chars
        self.verify_timeout = verify_timeout
        super().__init__(tasks, **kwargs)

    def _verdict(self, task: dict[str, Any], result: Grade) -> Verdict:
        reward, error_type, message = result
        details: dict[str, Any] = {
            "error_type": error_type,
            "error_message": message,
            "schema_type": task.get("schema_type") or "json",
            "response_mode": task.get("response_mode") or "text",
        }
        masked = error_type in MASKED_ERROR_TYPES
        return Verdict(reward, details=details, failure_kind=error_type, masked=masked)

    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        return self._verdict(task, grade(task, response, self.xml_coerce_types, self.strip_code_fences))

    async def averify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        """As :meth:`LLMEnv.averify`; long answers are graded in the shared CPU process pool."""
        if not self._offloads(response):
            return await super().averify(task, response)
        output = response["output"]
        # Only the fields grading reads cross the process boundary (rows can be large).
        keys = ("schema_str", "schema_type", "response_mode", "tool_name", "tool_payload_key")
        fields = {key: task.get(key) for key in keys}
        plain = {"output": output, "error": response.get("error")}
        try:
            result = await run_in_process(
                grade,
                fields,
                plain,
                self.xml_coerce_types,
                self.strip_code_fences,
                timeout=self.verify_timeout,
            )
            verdict = self._verdict(task, result)
        except Exception as exc:  # a timed-out or crashed worker must not crash the episode
            error = f"{type(exc).__name__}: {exc}"
            verdict = Verdict(0.0, failure_kind=VERIFY_ERROR, details={"error": error})
        return self._completed(verdict)

    def _offloads(self, response: Any) -> bool:
        """Whether to grade ``response`` in the pool: a long answer, as a plain list of item dicts.

        Anything else takes the base class's way, which checks the output (``malformed_response``).
        """
        output = response.get("output") if isinstance(response, Mapping) else None
        if self.offload_chars is None or not isinstance(output, list):
            return False
        if not all(isinstance(item, dict) for item in output):
            return False
        try:
            return response_chars(response) > self.offload_chars
        except (TypeError, AttributeError):  # odd content parts: verify reports them inline
            return False

    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        if task.get("reference_document") is not None:
            document = task["reference_document"]
        else:
            schema = json.loads(task["schema_str"])
            strictify(schema)
            document = example_document(schema)
        if task.get("response_mode") == "tool_call":
            name = task.get("tool_name")
            if not name:
                tools = observation["tools"] or ({"name": "submit"},)
                name = tools[0].get("name", "submit")
            key = task.get("tool_payload_key")
            return [it.function_call(name, {key: document} if key else document, "call_reference")]
        return [it.message(render_document(document, task.get("schema_type") or "json"))]
