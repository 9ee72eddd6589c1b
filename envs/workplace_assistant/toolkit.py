"""The 27 workplace tools as one toolkit, their NeMo-format schemas, and call replay.

``Toolkit`` combines the five tool families (mixins over ``self.company``). The env inherits it so
that the tools are the env's ``@tool`` methods; ``replay`` runs calls on a fresh ``Toolkit`` with
the same argument validation, which is how ``verify`` rebuilds the state a trajectory leads to.
"""

from __future__ import annotations

import ast
import json
import types
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from gym_llm.tools import ToolSpec, collect_tools

from .analytics_tools import AnalyticsTools
from .calendar_tools import CalendarTools
from .company import DATA_DIR, Company, StateTracker, seed_company
from .crm_tools import CrmTools
from .email_tools import EmailTools
from .project_tools import ProjectTools


class Toolkit(EmailTools, CalendarTools, AnalyticsTools, ProjectTools, CrmTools):
    """Every workplace tool over one company state."""

    def __init__(self, company: Company) -> None:
        self.company = company


# The arguments NeMo Gym's schemas mark as required. The functions themselves accept any subset
# and answer a missing one with WorkBench's message (e.g. "Email ID not provided.").
REQUIRED: dict[str, tuple[str, ...]] = {
    "company_directory_find_email_address": (),
    "email_get_email_information_by_id": ("email_id", "field"),
    "email_search_emails": (),
    "email_send_email": ("recipient", "subject", "body"),
    "email_delete_email": ("email_id",),
    "email_forward_email": ("email_id", "recipient"),
    "email_reply_email": ("email_id", "body"),
    "calendar_get_event_information_by_id": ("event_id", "field"),
    "calendar_search_events": (),
    "calendar_create_event": ("event_name", "participant_email", "event_start", "duration"),
    "calendar_delete_event": ("event_id",),
    "calendar_update_event": ("event_id", "field", "new_value"),
    "analytics_get_visitor_information_by_id": ("visitor_id",),
    "analytics_create_plot": ("time_min", "time_max", "value_to_plot", "plot_type"),
    "analytics_total_visits_count": (),
    "analytics_engaged_users_count": (),
    "analytics_traffic_source_count": (),
    "analytics_get_average_session_duration": (),
    "project_management_get_task_information_by_id": ("task_id", "field"),
    "project_management_search_tasks": (),
    "project_management_create_task": ("task_name", "assigned_to_email", "list_name", "due_date", "board"),
    "project_management_delete_task": ("task_id",),
    "project_management_update_task": ("task_id", "field", "new_value"),
    "customer_relationship_manager_search_customers": (),
    "customer_relationship_manager_update_customer": ("customer_id", "field", "new_value"),
    "customer_relationship_manager_add_customer": ("customer_name", "assigned_to_email", "status"),
    "customer_relationship_manager_delete_customer": ("customer_id",),
}

# In NeMo Gym's order (the order of the rows' tool lists).
_SPECS = collect_tools(Toolkit)
TOOL_SPECS: dict[str, ToolSpec] = {name: _SPECS[name] for name in REQUIRED if name in _SPECS}
if len(TOOL_SPECS) != len(_SPECS):
    raise RuntimeError("REQUIRED and the Toolkit's tools disagree")

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_type(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    return _JSON_TYPES[annotation]


def _nemo_schema(spec: ToolSpec) -> dict[str, Any]:
    """A tool schema as NeMo Gym's rows carry it: optional arguments, ``strict: false``."""
    properties = {
        name: {"type": _json_type(info.annotation), "description": info.description or ""}
        for name, info in spec.arguments.model_fields.items()
    }
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.schema["description"],
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": list(REQUIRED[spec.name]),
            "additionalProperties": False,
        },
        "strict": False,
    }


TOOL_SCHEMAS: tuple[dict[str, Any], ...] = tuple(_nemo_schema(spec) for spec in TOOL_SPECS.values())


# ----------------------------------------------------------------------------- ground truth
def parse_calls(value: Any) -> list[dict[str, Any]]:
    """Ground-truth calls as ``[{"name": str, "arguments": dict}]``.

    ``value`` is NeMo Gym's ``ground_truth``: a Python-literal (or JSON) string of a list of
    ``{"name", "arguments"}`` dicts whose ``arguments`` is a JSON string, or that list itself.

    Raises:
        ValueError: The value is not such a list, or names an unknown tool.
    """
    if isinstance(value, str):
        return [dict(call, arguments=dict(call["arguments"])) for call in _parse_call_text(value)]
    return _check_calls(value)


@lru_cache(maxsize=4096)
def _parse_call_text(text: str) -> tuple[dict[str, Any], ...]:
    try:
        data = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        try:
            data = json.loads(text)
        except ValueError:
            raise ValueError("not a Python-literal or JSON list of calls") from None
    return tuple(_check_calls(data))


def _check_calls(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, list):
        raise ValueError(f"expected a list of calls, got {type(data).__name__}")
    calls = []
    for index, call in enumerate(data):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"call {index}: expected a dict with a string 'name'")
        if call["name"] not in TOOL_SPECS:
            raise ValueError(f"call {index}: unknown tool {call['name']!r}")
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise ValueError(f"call {index}: 'arguments' is not valid JSON") from None
        if not isinstance(arguments, dict):
            raise ValueError(f"call {index}: 'arguments' must be a JSON object")
        calls.append({"name": call["name"], "arguments": arguments})
    return calls


# ----------------------------------------------------------------------------- replay
def replay(calls: Iterable[tuple[Any, Any]], data_dir: Path = DATA_DIR) -> tuple[StateTracker, int]:
    """Run ``(name, arguments)`` calls in order on a fresh copy of the company in ``data_dir``.

    ``arguments`` is a JSON string or a dict. A call that cannot run (unknown tool, arguments that
    are not a JSON object or fail validation) changes nothing, exactly as it did live.

    Returns:
        The state tracker after the last call, and how many calls could not run.
    """
    sandbox = Toolkit(seed_company(data_dir))
    tracker = StateTracker(sandbox.company)
    invalid = 0
    for name, arguments in calls:
        spec = TOOL_SPECS.get(name) if isinstance(name, str) else None
        if arguments is None or isinstance(arguments, str):
            try:  # as the env parses a live call: missing or empty arguments mean {}
                arguments = json.loads(arguments or "{}")
            except ValueError:
                arguments = None
        if spec is None or not isinstance(arguments, dict):
            invalid += 1
            continue
        try:
            spec.method(sandbox, **spec.validate(arguments))
        except Exception:  # invalid arguments (pydantic's ValidationError) or a tool bug
            invalid += 1
        tracker.after_call()
    return tracker, invalid
