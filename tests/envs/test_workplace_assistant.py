"""Tests of llm/WorkplaceAssistant-v0: the 27 tools, state replay verification, isolation, rows."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import gym_llm
from gym_llm import items as it
from gym_llm.envs.workplace_assistant.company import DATA_DIR, load_company, seed_company
from gym_llm.envs.workplace_assistant.env import WorkplaceAssistantEnv
from gym_llm.envs.workplace_assistant.toolkit import TOOL_SCHEMAS, Toolkit, parse_calls, replay
from gym_llm.tasks import TaskError
from gym_llm.testing import play, play_reference

DATA = DATA_DIR
# The data script lives outside the package, in the repository's scripts/ folder.
DATA_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "workplace_assistant_data.py"
ROWS = [json.loads(line) for line in (DATA / "example.jsonl").read_text().splitlines()]
NEMO_TOOL_NAMES = {
    "company_directory_find_email_address",
    "email_get_email_information_by_id",
    "email_search_emails",
    "email_send_email",
    "email_delete_email",
    "email_forward_email",
    "email_reply_email",
    "calendar_get_event_information_by_id",
    "calendar_search_events",
    "calendar_create_event",
    "calendar_delete_event",
    "calendar_update_event",
    "analytics_engaged_users_count",
    "analytics_get_visitor_information_by_id",
    "analytics_create_plot",
    "analytics_traffic_source_count",
    "analytics_total_visits_count",
    "analytics_get_average_session_duration",
    "project_management_get_task_information_by_id",
    "project_management_search_tasks",
    "project_management_create_task",
    "project_management_delete_task",
    "project_management_update_task",
    "customer_relationship_manager_search_customers",
    "customer_relationship_manager_update_customer",
    "customer_relationship_manager_add_customer",
    "customer_relationship_manager_delete_customer",
}
NADIA = "nadia.rahman@lumenworks.com"


def row_index(text: str) -> int:
    """The example row whose user request contains ``text``."""
    (index,) = [
        i for i, row in enumerate(ROWS) if text in row["responses_create_params"]["input"][1]["content"]
    ]
    return index


def gt_calls(index: int) -> list[dict[str, Any]]:
    return parse_calls(ROWS[index]["ground_truth"])


def call(name: str, args: dict[str, Any] | str, call_id: str = "c0") -> dict[str, Any]:
    return it.function_call(name, args, call_id)


def output(result: str) -> Any:
    """What the model reads from a tool: NeMo's ``{"output": ...}`` wire body."""
    return json.loads(result)["output"]


@pytest.fixture
def env() -> WorkplaceAssistantEnv:
    return WorkplaceAssistantEnv()


@pytest.fixture
def kit() -> Toolkit:
    return Toolkit(seed_company())


def verdict(env: WorkplaceAssistantEnv, index: int, items: list[dict[str, Any]]):
    return env.verify(ROWS[index], {"output": items})


# ----------------------------------------------------------------------------- tools and rows
def test_the_27_tools_have_nemo_names_and_schemas(env: WorkplaceAssistantEnv) -> None:
    assert set(env.tools) == NEMO_TOOL_NAMES
    assert [schema["name"] for schema in TOOL_SCHEMAS][:3] == [
        "company_directory_find_email_address",
        "email_get_email_information_by_id",
        "email_search_emails",
    ]
    send = next(schema for schema in TOOL_SCHEMAS if schema["name"] == "email_send_email")
    assert send["strict"] is False
    assert send["parameters"]["required"] == ["recipient", "subject", "body"]
    assert set(send["parameters"]["properties"]) == {"recipient", "subject", "body"}
    for row in ROWS:
        assert row["responses_create_params"]["tools"] == list(TOOL_SCHEMAS)
    obs, _ = env.reset(options={"task": {**ROWS[0], "responses_create_params": {"input": "hi"}}})
    assert list(obs["tools"]) == list(TOOL_SCHEMAS)  # rows without tools get NeMo's schemas


def test_shipped_data_is_what_the_generator_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(DATA_SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for path in DATA.glob("*.jsonl"):
        assert (tmp_path / path.name).read_text() == path.read_text(), path.name


def test_rows_have_nemo_fields_and_cover_every_family() -> None:
    assert len(ROWS) >= 8
    for row in ROWS:
        assert row["environment_name"] == "workplace_assistant"
        assert isinstance(row["ground_truth"], str) and row["ground_truth"].startswith("[{'name': ")
        assert row["responses_create_params"]["input"][0]["content"].startswith(
            "Today's date is Thursday, 2023-11-30"
        )
    used = {call["name"] for row in ROWS for call in parse_calls(row["ground_truth"])}
    for needed in (
        "email_send_email",
        "email_reply_email",
        "email_delete_email",
        "email_forward_email",
        "calendar_create_event",
        "calendar_update_event",
        "calendar_delete_event",
        "project_management_create_task",
        "project_management_update_task",
        "customer_relationship_manager_add_customer",
        "customer_relationship_manager_update_customer",
        "customer_relationship_manager_delete_customer",
        "analytics_create_plot",
        "analytics_get_average_session_duration",
    ):
        assert needed in used


@pytest.mark.parametrize(
    ("ground_truth", "message"),
    [
        ("[{'name': 'email_teleport', 'arguments': '{}'}]", "unknown tool 'email_teleport'"),
        ("{'name': 'email_send_email'}", "expected a list of calls"),
        ("[{'name': 'email_delete_email', 'arguments': '{not json'}]", "not valid JSON"),
        ("[{'name': 'email_delete_email', 'arguments': '[1]'}]", "must be a JSON object"),
        ("this is not a list", "not a Python-literal or JSON list"),
    ],
)
def test_bad_ground_truth_is_a_task_error_naming_the_field(ground_truth: str, message: str) -> None:
    with pytest.raises(TaskError, match="ground_truth") as error:
        WorkplaceAssistantEnv([{**ROWS[0], "ground_truth": ground_truth}])
    assert message in str(error.value)


def test_missing_ground_truth_is_a_task_error() -> None:
    row = {key: value for key, value in ROWS[0].items() if key != "ground_truth"}
    with pytest.raises(TaskError, match="field 'ground_truth'"):
        WorkplaceAssistantEnv([row])


def test_nemo_row_shapes_load_unchanged(env: WorkplaceAssistantEnv) -> None:
    # NeMo's multi-turn rows carry the list itself; JSON text is accepted as well.
    listed = {**ROWS[0], "ground_truth": gt_calls(0), "user_model_system_prompt": "…"}
    listed["ground_truth"] = [
        {"name": c["name"], "arguments": json.dumps(c["arguments"])} for c in gt_calls(0)
    ]
    as_json = {**ROWS[0], "ground_truth": json.dumps(listed["ground_truth"])}
    loaded = WorkplaceAssistantEnv([listed, as_json])
    assert loaded.tasks[0] is listed  # kept as the original dict
    for row in (listed, as_json):
        items = [call(c["name"], c["arguments"]) for c in parse_calls(row["ground_truth"])]
        assert env.verify(row, {"output": items}).reward == 1.0


def test_other_company_data_via_data_dir(tmp_path: Path) -> None:
    # NeMo Gym's own verify example, against a one-email company written as our JSONL tables.
    email = {
        "email_id": "00000057",
        "inbox/outbox": "inbox",
        "sender/recipient": "carlos.rodriguez@atlas.com",
        "subject": "Task Update on Develop prototype for report generation",
        "sent_datetime": "2023-11-29 10:00:00",
        "body": "Just an update.",
    }
    (tmp_path / "company_emails.jsonl").write_text(json.dumps(email) + "\n")
    arguments = '{"email_id": "00000057", "body": "Thanks for the update - I will get back to you tomorrow."}'
    row = {
        "id": "0",
        "responses_create_params": {"input": [{"role": "user", "content": "Reply to carlos's last email …"}]},
        "ground_truth": [{"name": "email_reply_email", "arguments": arguments}],
        "category": "workplace_assistant_email",
        "environment_name": "workplace_assistant",
    }
    env = gym.make("llm/WorkplaceAssistant-v0", tasks=[row], data_dir=tmp_path)
    assert play_reference(env).reward == 1.0
    assert len(env.unwrapped.company.emails) == 2 and env.unwrapped.company.calendar_events == []
    assert (
        env.unwrapped.verify(row, {"output": [call("email_delete_email", {"email_id": "00000057"})]}).reward
        == 0
    )


# ----------------------------------------------------------------------------- tool families
def test_directory_and_email_reads(kit: Toolkit) -> None:
    assert output(kit.company_directory_find_email_address(name="CHEN")) == [
        "leo.chen@lumenworks.com",
        "sofia.chen@lumenworks.com",
    ]
    assert output(kit.company_directory_find_email_address()) == "Name not provided."
    found = output(kit.email_search_emails(query="checkout page diego", page_size=1))
    assert found["pagination"] == {"total_emails": 2, "page": 1, "page_size": 1, "total_pages": 2}
    assert found["emails"][0]["sent_datetime"] == "2023-11-28 16:40:03"  # newest first
    page_two = output(kit.email_search_emails(query="checkout page diego", page_size=1, page=9))
    assert page_two["pagination"]["page"] == 2  # clamped, as WorkBench
    assert output(kit.email_search_emails(query="zebra")) == "No emails found."
    assert output(kit.email_search_emails(date_min="2023-13-01")).startswith("Error searching emails")
    email_id = found["emails"][0]["email_id"]
    assert output(kit.email_get_email_information_by_id(email_id=email_id, field="subject")) == {
        "subject": "Task Update on Build checkout page"
    }
    assert output(kit.email_get_email_information_by_id(email_id=email_id, field="cc")).startswith(
        "Field 'cc' not found. Available fields: email_id, inbox/outbox"
    )
    assert (
        output(kit.email_get_email_information_by_id(email_id="99999999", field="body")) == "Email not found."
    )


def test_email_writes(kit: Toolkit) -> None:
    emails = kit.company.emails
    count = len(emails)
    assert output(kit.email_send_email(recipient="Nadia.Rahman@Lumenworks.com", subject="Hi", body="Yo")) == (
        "Email sent successfully."
    )
    sent = emails[-1]
    assert sent == {
        "email_id": str(count + 1).zfill(8),
        "inbox/outbox": "outbox",
        "sender/recipient": NADIA,
        "subject": "Hi",
        "sent_datetime": "2023-11-30 23:59:00",
        "body": "Yo",
    }
    first = emails[0]
    assert (
        output(kit.email_reply_email(email_id=first["email_id"], body="Thanks"))
        == "Email replied successfully."
    )
    assert emails[-1]["subject"] == "RE: " + first["subject"]
    assert emails[-1]["sender/recipient"] == first["sender/recipient"]
    assert output(kit.email_forward_email(email_id=first["email_id"], recipient=NADIA)) == (
        "Email forwarded successfully."
    )
    assert (emails[-1]["subject"], emails[-1]["body"]) == ("FW: " + first["subject"], first["body"])
    assert output(kit.email_delete_email(email_id=first["email_id"])) == "Email deleted successfully."
    assert output(kit.email_delete_email(email_id=first["email_id"])) == "Email not found."
    assert len(emails) == count + 3 - 1


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        (
            "email_send_email",
            {"recipient": "nadia", "subject": "s", "body": "b"},
            "Invalid recipient email address.",
        ),
        (
            "email_send_email",
            {"recipient": NADIA, "subject": "s"},
            "Recipient, subject, or body not provided.",
        ),
        ("email_reply_email", {"email_id": "00000001"}, "Email ID or body not provided."),
        ("email_forward_email", {"email_id": "00000999", "recipient": NADIA}, "Email not found."),
        (
            "calendar_create_event",
            {"event_name": "x", "participant_email": NADIA, "event_start": "soon", "duration": "30"},
            "Invalid event_start format. Expected YYYY-MM-DD HH:MM:SS.",
        ),
        (
            "calendar_create_event",
            {
                "event_name": "x",
                "participant_email": NADIA,
                "event_start": "2023-12-01 10:00:00",
                "duration": "-5",
            },
            "Duration must be a positive number of minutes.",
        ),
        (
            "calendar_update_event",
            {"event_id": "00000001", "field": "color", "new_value": "red"},
            "Invalid field. Available fields are: event_name, participant_email, event_start, duration",
        ),
        ("calendar_delete_event", {"event_id": "123"}, "Invalid event ID format. Expected 8-digit ID."),
        ("calendar_delete_event", {"event_id": "00000999"}, "Event not found."),
        (
            "analytics_create_plot",
            {
                "time_min": "2023-11-20",
                "time_max": "2023-11-21",
                "value_to_plot": "total_visits",
                "plot_type": "pie",
            },
            "Plot type must be one of 'bar', 'line', 'scatter', or 'histogram'",
        ),
        ("analytics_create_plot", {"time_max": "2023-11-21"}, "Start date not provided."),
        (
            "project_management_create_task",
            {
                "task_name": "t",
                "assigned_to_email": "nobody@lumenworks.com",
                "list_name": "Backlog",
                "due_date": "2023-12-01",
                "board": "Design",
            },
            "Assignee email not valid. Please choose from the list of team members.",
        ),
        (
            "project_management_create_task",
            {
                "task_name": "t",
                "assigned_to_email": "hana.kim@lumenworks.com",
                "list_name": "Backlog",
                "due_date": "2023-12-01",
                "board": "QA",
            },
            "Board not valid. Please choose from: 'Back end', 'Front end', 'Design'.",
        ),
        (
            "project_management_update_task",
            {"task_id": "00000001", "field": "list_name", "new_value": "Done"},
            "List not valid. Please choose from: 'Backlog', 'In Progress', 'In Review', 'Completed'.",
        ),
        (
            "project_management_update_task",
            {"task_id": "00000001", "field": "task_id", "new_value": "00000002"},
            "Field not valid.",
        ),
        (
            "customer_relationship_manager_update_customer",
            {"customer_id": "00000001", "field": "status", "new_value": "won"},
            "Status not valid. Please choose from: 'Qualified', 'Won', 'Lost', 'Lead', 'Proposal'",
        ),
        (
            "customer_relationship_manager_add_customer",
            {"customer_name": "A"},
            "Please provide all required fields: customer_name, assigned_to_email, status.",
        ),
        ("customer_relationship_manager_delete_customer", {"customer_id": "00000999"}, "Customer not found."),
    ],
)
def test_wrong_arguments_give_the_error_text_and_change_nothing(
    env: WorkplaceAssistantEnv, name: str, args: dict[str, Any], message: str
) -> None:
    env.reset(options={"task_index": 0})
    obs, _, terminated, truncated, _ = env.step([call(name, args)])
    assert not (terminated or truncated)
    assert obs["input"][-1] == {
        "type": "function_call_output",
        "call_id": "c0",
        "output": json.dumps({"output": message}, separators=(",", ":")),
    }
    assert replay([(name, args)])[0].mismatched_tables(replay([])[0]) == []


def test_calendar_tools(kit: Toolkit) -> None:
    events = kit.company.calendar_events
    new_id = output(
        kit.calendar_create_event(
            event_name="Design sync",
            participant_email="Chloe.Nguyen@lumenworks.com",
            event_start="2023-12-04 10:00:00",
            duration="30",
        )
    )
    assert (
        new_id == str(len(events)).zfill(8)
        and events[-1]["participant_email"] == "chloe.nguyen@lumenworks.com"
    )
    assert output(kit.calendar_get_event_information_by_id(event_id=new_id, field="duration")) == {
        "duration": "30"
    }
    assert output(kit.calendar_update_event(event_id=new_id, field="duration", new_value="45")) == (
        "Event updated successfully."
    )
    found = output(kit.calendar_search_events(query="JONAS", time_min="2023-12-01 00:00:00"))
    starts = [event["event_start"] for event in found["events"]]
    assert starts == sorted(starts, reverse=True) and len(starts) == 3
    assert output(kit.calendar_search_events(time_max="yesterday")) == (
        "Invalid time_max format. Expected YYYY-MM-DD HH:MM:SS."
    )
    assert output(kit.calendar_delete_event(event_id=new_id)) == "Event deleted successfully."
    assert (
        output(kit.calendar_get_event_information_by_id(event_id=new_id, field="duration"))
        == "Event not found."
    )


def test_analytics_reads_match_the_raw_visits_and_write_nothing(kit: Toolkit) -> None:
    visits = [v for v in load_company().analytics if "2023-11-20" <= v["date_of_visit"] <= "2023-11-22"]
    days = sorted({v["date_of_visit"] for v in visits})
    args = {"time_min": "2023-11-20", "time_max": "2023-11-22"}
    assert output(kit.analytics_total_visits_count(**args)) == {
        d: sum(v["date_of_visit"] == d for v in visits) for d in days
    }
    assert output(kit.analytics_engaged_users_count(**args)) == {
        d: sum(v["date_of_visit"] == d and v["user_engaged"] for v in visits) for d in days
    }
    assert output(kit.analytics_traffic_source_count(**args, traffic_source="direct")) == {
        d: sum(v["date_of_visit"] == d and v["traffic_source"] == "direct" for v in visits) for d in days
    }
    durations = output(kit.analytics_get_average_session_duration(**args))
    for d in days:
        values = [float(v["session_duration_seconds"]) for v in visits if v["date_of_visit"] == d]
        assert durations[d] == pytest.approx(sum(values) / len(values))
    visitor = visits[0]["visitor_id"]
    assert visits[0] in output(kit.analytics_get_visitor_information_by_id(visitor_id=visitor))
    assert output(kit.analytics_get_visitor_information_by_id(visitor_id="0")) == "Visitor not found."
    assert kit.company.plots == []
    path = output(kit.analytics_create_plot(**args, value_to_plot="user_engaged", plot_type="line"))
    assert path == "plots/2023-11-20_2023-11-22_user_engaged_line.png"
    assert kit.company.plots == [{"file_path": path}]


def test_project_management_tools(kit: Toolkit) -> None:
    tasks = kit.company.project_tasks
    hana = "hana.kim@lumenworks.com"
    mine = output(kit.project_management_search_tasks(assigned_to_email=hana.upper()))
    assert mine and all(task["assigned_to_email"] == hana for task in mine)
    assert output(kit.project_management_search_tasks()) == "No search parameters provided."
    assert output(kit.project_management_search_tasks(assigned_to_email="hana")) == (
        "Invalid email format for assigned_to_email."
    )
    new_id = output(
        kit.project_management_create_task(
            task_name="Add dark mode toggle",
            assigned_to_email=hana,
            list_name="Backlog",
            due_date="2023-12-08",
            board="Front end",
        )
    )
    assert new_id == str(len(tasks)).zfill(8)
    assert output(kit.project_management_update_task(task_id=new_id, field="board", new_value="Design")) == (
        "Task updated successfully."
    )
    assert output(kit.project_management_get_task_information_by_id(task_id=new_id, field="board")) == {
        "board": "Design"
    }
    assert output(kit.project_management_delete_task(task_id=new_id)) == "Task deleted successfully."
    assert output(kit.project_management_delete_task(task_id=new_id)) == "Task not found."


def test_crm_tools(kit: Toolkit) -> None:
    customers = kit.company.customers
    new_id = output(
        kit.customer_relationship_manager_add_customer(
            customer_name="Harper Quinn",
            assigned_to_email="Elena.Petrova@lumenworks.com",
            status="Lead",
            customer_email="Harper@Fieldstone.co",
        )
    )
    assert new_id == str(len(customers)).zfill(8)
    assert customers[-1]["assigned_to_email"] == "elena.petrova@lumenworks.com"
    assert (
        customers[-1]["customer_email"] == "harper@fieldstone.co" and customers[-1]["customer_phone"] is None
    )
    found = output(kit.customer_relationship_manager_search_customers(customer_name="harper"))
    assert [c["customer_id"] for c in found["customers"]] == [new_id]
    assert found["pagination"]["total_customers"] == 1
    assert output(kit.customer_relationship_manager_search_customers()).startswith("No search parameters")
    assert output(kit.customer_relationship_manager_search_customers(customer_name="nobody")) == (
        "No customers found."
    )
    recent = output(kit.customer_relationship_manager_search_customers(last_contact_date_min="2023-11-01"))
    assert all(c["last_contact_date"] >= "2023-11-01" for c in recent["customers"])
    assert (
        output(
            kit.customer_relationship_manager_update_customer(
                customer_id=new_id, field="status", new_value="Won"
            )
        )
        == "Customer updated successfully."
    )
    assert customers[-1]["status"] == "Won"
    assert output(kit.customer_relationship_manager_delete_customer(customer_id=new_id)) == (
        "Customer deleted successfully."
    )


def test_env_level_errors_the_model_reads(env: WorkplaceAssistantEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, *_ = env.step(
        [
            call("email_delete_email", {"email_id": "00000001", "useless_argument": 1}, "a"),
            call("email_teleport", {}, "b"),
            call("email_search_emails", {"page": "first"}, "c"),
            call("email_delete_email", "{not json", "d"),
            call("email_delete_email", {"email_id": None}, "e"),  # None means "not given", as NeMo
        ]
    )
    outputs = {
        item["call_id"]: item["output"] for item in obs["input"] if item.get("type") == "function_call_output"
    }
    assert "useless_argument" in json.loads(outputs["a"])["error"]
    assert "Unknown tool 'email_teleport'" in json.loads(outputs["b"])["error"]
    assert "page" in json.loads(outputs["c"])["error"]
    assert "Invalid tool call arguments" in json.loads(outputs["d"])["error"]
    assert output(outputs["e"]) == "Email ID not provided."
    assert len(env.company.emails) == len(load_company().emails)  # nothing was deleted


# ----------------------------------------------------------------------------- verify
def test_reference_scores_one_on_every_row() -> None:
    env = gym.make("llm/WorkplaceAssistant-v0")
    for index in range(len(ROWS)):
        result = play_reference(env, task_index=index)
        assert result.reward == 1.0, (index, result.info)
        assert result.terminated and result.info["failure_kind"] is None
        assert result.steps == len(gt_calls(index)) + 1  # one call per turn, then a message


def test_reference_batches_calls_when_turns_run_short() -> None:
    env = WorkplaceAssistantEnv(max_turns=2)
    index = row_index("Cancel all of my meetings with Jonas")
    result = play_reference(env, task_index=index)
    assert (result.reward, result.steps) == (1.0, 2)


def test_right_trajectory_with_reads_and_recovered_errors_scores_one(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Reply to Diego's last email")
    (truth,) = gt_calls(index)
    actions = [
        [call("company_directory_find_email_address", {"name": "diego"}, "a")],
        [call("email_search_emails", {"query": "Task Update on Build checkout page"}, "b")],
        [
            call("email_reply_email", {"email_id": "00000999", "body": "typo id"}, "c")
        ],  # fails: no state change
        [call("email_reply_email", {**truth["arguments"], "body": truth["arguments"]["body"].upper()}, "d")],
        "I replied to Diego.",
    ]
    result = play(env, actions, task_index=index)
    assert result.reward == 1.0  # string values compare case-insensitively
    assert result.info["reward_components"] == {"num_calls": 4.0, "invalid_calls": 0.0}


def test_wrong_target_or_extra_writes_score_zero(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Reply to Diego's last email")
    (truth,) = gt_calls(index)
    wrong_email = verdict(
        env, index, [call("email_reply_email", {**truth["arguments"], "email_id": "00000001"})]
    )
    assert (wrong_email.reward, wrong_email.failure_kind) == (0.0, "state_mismatch")
    assert wrong_email.details["mismatched_tables"] == ["emails"]
    extra = verdict(
        env,
        index,
        [
            call("email_reply_email", truth["arguments"], "a"),
            call(
                "analytics_create_plot",
                {
                    "time_min": "2023-11-20",
                    "time_max": "2023-11-21",
                    "value_to_plot": "total_visits",
                    "plot_type": "bar",
                },
                "b",
            ),
        ],
    )
    assert extra.reward == 0.0 and extra.details["mismatched_tables"] == ["plots"]
    assert verdict(env, index, [it.message("Done!")]).reward == 0.0  # said it, did not do it


def test_case_sensitive_fields_stay_case_sensitive(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Move the 'Fix login redirect loop' task")
    (truth,) = gt_calls(index)
    assert verdict(env, index, [call(truth["name"], truth["arguments"])]).reward == 1.0
    lower = {**truth["arguments"], "new_value": "in review"}  # rejected by the tool: nothing changes
    assert verdict(env, index, [call(truth["name"], lower)]).reward == 0.0


def test_read_only_task_rewards_doing_nothing(env: WorkplaceAssistantEnv) -> None:
    index = row_index("average session duration on 2023-11-28 was above 15 minutes")
    assert verdict(env, index, [it.message("It was under 15 minutes, so I did nothing.")]).reward == 1.0
    plotted = verdict(
        env,
        index,
        [
            call(
                "analytics_create_plot",
                {
                    "time_min": "2023-11-21",
                    "time_max": "2023-11-28",
                    "value_to_plot": "session_duration_seconds",
                    "plot_type": "line",
                },
            )
        ],
    )
    assert plotted.reward == 0.0


def test_order_of_dependent_calls_matters(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Reply to the latest email from Farah")
    reply, delete = gt_calls(index)
    in_order = [call(reply["name"], reply["arguments"], "a"), call(delete["name"], delete["arguments"], "b")]
    assert verdict(env, index, in_order).reward == 1.0
    reversed_order = [
        call(delete["name"], delete["arguments"], "b"),
        call(reply["name"], reply["arguments"], "a"),
    ]
    assert verdict(env, index, reversed_order).reward == 0.0  # the reply finds no email to answer


def test_created_records_match_by_content_not_id(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Create a task called 'Add dark mode toggle'")
    (truth,) = gt_calls(index)
    args = truth["arguments"]
    new_id = str(len(load_company().project_tasks) + 1).zfill(8)
    corrected = [
        call(truth["name"], {**args, "task_name": "Add dark mood toggle"}, "a"),
        call("project_management_delete_task", {"task_id": new_id}, "b"),
        call(truth["name"], args, "c"),  # reuses the id; matched by content
    ]
    assert verdict(env, index, corrected).reward == 1.0
    # A deleted seeded record does not come back by recreating its content under a new id.
    seeded = load_company().project_tasks[0]
    recreate = [
        call(truth["name"], args, "a"),
        call("project_management_delete_task", {"task_id": seeded["task_id"]}, "b"),
        call("project_management_create_task", {k: v for k, v in seeded.items() if k != "task_id"}, "c"),
    ]
    assert verdict(env, index, recreate).reward == 0.0


@pytest.mark.parametrize(
    "response",
    [{}, {"output": None}, {"output": "text"}, None, []],
)
def test_malformed_response_scores_zero_without_raising(env: WorkplaceAssistantEnv, response: Any) -> None:
    result = asyncio.run(env.averify(ROWS[0], response))
    assert (result.reward, result.failure_kind) == (0.0, "malformed_response")


def test_malformed_items_are_skipped_and_counted(env: WorkplaceAssistantEnv) -> None:
    index = row_index("Reply to Diego's last email")
    (truth,) = gt_calls(index)
    items: list[Any] = [
        "not an item",
        {"type": "function_call", "name": "email_reply_email", "arguments": "{broken", "call_id": "x"},
        {"type": "function_call", "name": 42, "arguments": "{}", "call_id": "y"},
        {
            "type": "function_call",
            "name": "email_delete_email",
            "arguments": '{"email_id": [1]}',
            "call_id": "z",
        },
        {
            "type": "function_call",
            "name": "email_delete_email",
            "call_id": "w",
        },  # no arguments: "not provided"
        call("email_reply_email", truth["arguments"], "v"),
    ]
    result = env.verify(ROWS[index], {"output": items})
    assert result.reward == 1.0
    assert result.components == {"num_calls": 5.0, "invalid_calls": 3.0}


def test_recorded_rollout_reverifies() -> None:
    env = gym.make("llm/WorkplaceAssistant-v0")
    result = play_reference(env, task_index=3)
    row = {**ROWS[3], "response": env.unwrapped.response}
    assert gym_llm.verify("llm/WorkplaceAssistant-v0", row).reward == result.reward == 1.0


# ----------------------------------------------------------------------------- episodes
def test_state_is_isolated_across_resets(env: WorkplaceAssistantEnv) -> None:
    seed_ids = [email["email_id"] for email in load_company().emails]
    env.reset(options={"task_index": 0})
    env.step([call("email_delete_email", {"email_id": seed_ids[0]})])
    env.step([call("email_send_email", {"recipient": NADIA, "subject": "s", "body": "b"}, "c1")])
    assert env.company.emails[0]["email_id"] != seed_ids[0]
    obs, _ = env.reset(options={"task_index": 0})
    obs, *_ = env.step(
        [call("email_get_email_information_by_id", {"email_id": seed_ids[0], "field": "email_id"})]
    )
    assert output(obs["input"][-1]["output"]) == {"email_id": seed_ids[0]}
    assert [e["email_id"] for e in env.company.emails] == seed_ids
    assert [e["email_id"] for e in load_company().emails] == seed_ids  # the cached seed is untouched


def test_thousand_resets_stay_bounded(env: WorkplaceAssistantEnv) -> None:
    def episode(i: int) -> int:
        env.reset(options={"task_index": i % len(ROWS)})
        obs, *_ = env.step([call("email_send_email", {"recipient": NADIA, "subject": f"s{i}", "body": "b"})])
        return len(json.dumps(obs["input"]))

    sizes = [episode(i) for i in range(50)]
    gc.collect()
    objects = len(gc.get_objects())
    sizes += [episode(i) for i in range(50, 1000)]
    gc.collect()
    assert len(gc.get_objects()) - objects < 1000
    assert max(sizes) - min(sizes) < 1000  # the conversation does not grow across episodes
    assert len(env.company.emails) == len(load_company().emails) + 1


def test_max_turns_is_six_and_truncation_still_verifies() -> None:
    env = WorkplaceAssistantEnv()
    assert env.max_turns == 6
    index = row_index("Reply to Diego's last email")
    (truth,) = gt_calls(index)
    reads = [[call("email_search_emails", {"query": "diego"}, f"r{i}")] for i in range(5)]
    result = play(env, [*reads, [call(truth["name"], truth["arguments"], "w")]], task_index=index)
    assert (result.truncated, result.reward) == (True, 1.0)


def test_check_env_passes() -> None:
    check_env(gym.make("llm/WorkplaceAssistant-v0").unwrapped)
