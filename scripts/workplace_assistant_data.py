"""Build WorkplaceAssistant's synthetic company and its example rows (the env's ``data/`` files).

A data script of the repository, not part of the installed package. Deterministic: run
``python scripts/workplace_assistant_data.py [DATA_DIR]`` from the repository root (with gym_llm
installed) to rewrite ``envs/workplace_assistant/data/`` (or ``DATA_DIR``) byte for byte.
Hand-written "anchor" records carry the example tasks; a seeded RNG fills in the rest of each
table around them. The tables are JSONL so that they ship with the package.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gym_llm.envs.workplace_assistant.common import Row
from gym_llm.envs.workplace_assistant.company import DATA_DIR, TABLES, Company

DOMAIN = "lumenworks.com"
EMPLOYEES = [  # (first, last, team)
    ("amara", "okafor", "Engineering"),
    ("ben", "carter", "Engineering"),
    ("chloe", "nguyen", "Design"),
    ("diego", "alvarez", "Engineering"),
    ("elena", "petrova", "Sales"),
    ("farah", "haddad", "Sales"),
    ("gabriel", "silva", "Engineering"),
    ("hana", "kim", "Engineering"),
    ("ivan", "novak", "Marketing"),
    ("jonas", "berg", "Sales"),
    ("kavya", "iyer", "Design"),
    ("leo", "chen", "Engineering"),
    ("liam", "oconnor", "Engineering"),
    ("mei", "tanaka", "Engineering"),
    ("nadia", "rahman", "Marketing"),
    ("omar", "farouk", "Sales"),
    ("priya", "shah", "Product"),
    ("sofia", "chen", "Sales"),
]


def email_of(first: str) -> str:
    for given, last, _ in EMPLOYEES:
        if given == first:
            return f"{given}.{last}@{DOMAIN}"
    raise KeyError(first)


ENGINEERS = ["amara", "ben", "diego", "gabriel", "hana", "leo", "liam", "mei"]
DESIGNERS = ["chloe", "kavya"]
SELLERS = ["elena", "farah", "jonas", "omar", "sofia"]


# ----------------------------------------------------------------------------- tables
def build_company(rng: random.Random) -> Company:
    employees = [
        {"name": f"{first.title()} {last.title()}", "email_address": email_of(first), "team": team}
        for first, last, team in EMPLOYEES
    ]
    return Company(
        employees=employees,
        emails=_emails(rng),
        calendar_events=_events(rng),
        analytics=_visits(rng),
        plots=[],
        project_tasks=_tasks(rng),
        customers=_customers(rng),
    )


def _numbered(rows: list[Row], column: str) -> list[Row]:
    rows.sort(key=lambda row: row.pop("_sort"))
    for index, row in enumerate(rows, 1):
        row[column] = str(index).zfill(8)
    return [{column: row.pop(column), **row} for row in rows]


def _emails(rng: random.Random) -> list[Row]:
    anchors = [
        (
            "inbox",
            "diego",
            "Task Update on Build checkout page",
            "2023-11-20 09:12:44",
            "Hi, the cart summary is done and I am starting on the payment form next.",
        ),
        (
            "inbox",
            "diego",
            "Task Update on Build checkout page",
            "2023-11-28 16:40:03",
            "The payment form is in review now. Let me know if you want a demo before Friday.",
        ),
        (
            "inbox",
            "priya",
            "Q4 budget review",
            "2023-11-10 11:05:19",
            "Please add your team's Q4 spending estimates to the shared sheet by next week.",
        ),
        (
            "inbox",
            "amara",
            "Q4 budget review",
            "2023-11-27 14:22:51",
            "Attached is the consolidated Q4 budget. Engineering is 4% under plan.",
        ),
        (
            "inbox",
            "farah",
            "Brightline renewal",
            "2023-11-14 10:31:07",
            "Brightline asked for a quote for two more seats. I will draft it this week.",
        ),
        (
            "inbox",
            "farah",
            "Renewal quote for Brightline",
            "2023-11-29 15:48:36",
            "The renewal quote is ready. Can you confirm the discount before I send it?",
        ),
        (
            "outbox",
            "nadia",
            "Launch newsletter",
            "2023-11-21 13:02:11",
            "Thanks for the newsletter draft, it reads well. Ship it on Monday.",
        ),
    ]
    topics = [
        (
            "Design review notes",
            "Here are my notes from the design review; the onboarding flow needs one more pass.",
        ),
        ("Sprint retro", "Sharing the retro outcomes: fewer meetings, clearer tickets, earlier demos."),
        ("Customer feedback", "A customer reported slow exports on large projects. Can someone take a look?"),
        ("Weekly analytics report", "Visits are up this week, mostly from search engines and referrals."),
        ("Hiring update", "We have two final interviews for the backend role next week."),
        ("Offsite planning", "Please vote on the offsite dates in the poll by Friday."),
        ("Security training", "Reminder: the annual security training is due at the end of the month."),
        ("Roadmap draft", "The first roadmap draft for next quarter is in the planning folder."),
        ("Invoice question", "Finance asked about a duplicate invoice from our hosting provider."),
        ("Demo feedback", "The demo went well; the client wants a follow-up on reporting."),
    ]
    others = [first for first, _, _ in EMPLOYEES if first not in ("diego", "farah")]
    rows: list[Row] = []
    for box, sender, subject, sent, body in anchors:
        rows.append(_email(box, email_of(sender), subject, sent, body))
    for index in range(29):
        subject, body = topics[index % len(topics)]
        day = rng.randint(1, 29)
        sent = f"2023-11-{day:02d} {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        rows.append(
            _email(
                rng.choice(["inbox", "inbox", "outbox"]), email_of(rng.choice(others)), subject, sent, body
            )
        )
    return _numbered(rows, "email_id")


def _email(box: str, address: str, subject: str, sent: str, body: str) -> Row:
    return {
        "_sort": sent,
        "inbox/outbox": box,
        "sender/recipient": address,
        "subject": subject,
        "sent_datetime": sent,
        "body": body,
    }


def _events(rng: random.Random) -> list[Row]:
    anchors = [
        ("Quarterly planning", "priya", "2023-12-05 10:00:00", "60"),
        ("Marketing sync", "ivan", "2023-11-22 14:00:00", "30"),
        ("Marketing sync", "ivan", "2023-12-01 11:00:00", "30"),
        ("Campaign review", "ivan", "2023-12-07 16:00:00", "45"),
        ("Pipeline review", "jonas", "2023-11-27 10:00:00", "60"),
        ("Pipeline review", "jonas", "2023-12-04 09:30:00", "60"),
        ("Deal strategy", "jonas", "2023-12-06 13:00:00", "30"),
        ("Pipeline review", "jonas", "2023-12-12 09:30:00", "60"),
    ]
    names = [
        "1:1",
        "Sprint review",
        "Customer call",
        "Design critique",
        "Architecture review",
        "Standup",
        "Demo prep",
    ]
    others = [first for first, _, _ in EMPLOYEES if first not in ("ivan", "jonas", "priya")]
    rows = [_event(name, email_of(who), start, minutes) for name, who, start, minutes in anchors]
    for _ in range(24):
        month, day = rng.choice(
            [(11, d) for d in range(1, 31) if d not in (4, 5, 11, 12, 18, 19, 25, 26)]
            + [(12, d) for d in (1, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15)]
        )
        start = f"2023-{month:02d}-{day:02d} {rng.randint(9, 16):02d}:{rng.choice(['00', '30'])}:00"
        rows.append(
            _event(
                rng.choice(names), email_of(rng.choice(others)), start, rng.choice(["15", "30", "45", "60"])
            )
        )
    return _numbered(rows, "event_id")


def _event(name: str, participant: str, start: str, minutes: str) -> Row:
    return {
        "_sort": start,
        "event_name": name,
        "participant_email": participant,
        "event_start": start,
        "duration": minutes,
    }


def _visits(rng: random.Random) -> list[Row]:
    sources = ["direct", "referral", "search engine", "social media"]
    rows = []
    for day in range(17, 31):
        for _ in range(rng.randint(3, 7)):
            views = rng.randint(1, 12)
            seconds = rng.randint(5, 600)
            rows.append(
                {
                    "date_of_visit": f"2023-11-{day:02d}",
                    "visitor_id": str(rng.randint(1000, 9999)),
                    "page_views": str(views),
                    "session_duration_seconds": str(seconds),
                    "traffic_source": rng.choice(sources),
                    "user_engaged": views >= 4 or seconds >= 120,
                }
            )
    return rows


def _tasks(rng: random.Random) -> list[Row]:
    anchors = [
        ("Fix login redirect loop", "diego", "In Progress", "2023-12-01", "Front end"),
        ("Write API rate limit docs", "ben", "Backlog", "2023-12-08", "Back end"),
        ("Build checkout page", "diego", "In Review", "2023-12-01", "Front end"),
    ]
    names = {
        "Back end": [
            "Migrate billing service",
            "Add audit logging",
            "Speed up export queries",
            "Rotate API keys",
            "Set up read replica",
            "Cache search results",
            "Upgrade ORM",
            "Remove legacy endpoints",
        ],
        "Front end": [
            "Add animation to carousel",
            "Fix mobile nav overflow",
            "Lazy-load dashboard charts",
            "Improve form validation",
            "Localize settings page",
            "Polish empty states",
        ],
        "Design": [
            "Redesign onboarding",
            "Icon set refresh",
            "Pricing page mockups",
            "Accessibility audit",
            "Dark theme palette",
            "Email template styles",
        ],
    }
    teams = {
        "Back end": ["ben", "gabriel", "leo", "liam", "amara"],
        "Front end": ["diego", "hana", "mei"],
        "Design": DESIGNERS,
    }
    lists = ["Backlog", "In Progress", "In Review", "Completed"]
    rows = [_task(*anchor, sort=index) for index, anchor in enumerate(anchors)]
    for board, board_names in names.items():
        for name in board_names:
            due = f"2023-{rng.choice([11, 12]):02d}-{rng.randint(1, 28):02d}"
            rows.append(_task(name, rng.choice(teams[board]), rng.choice(lists), due, board, sort=len(rows)))
    rng.shuffle(rows)  # the anchors should not get the first ids
    for index, row in enumerate(rows):
        row["_sort"] = index
    return _numbered(rows, "task_id")


def _task(name: str, who: str, list_name: str, due: str, board: str, sort: int) -> Row:
    return {
        "_sort": sort,
        "task_name": name,
        "assigned_to_email": email_of(who),
        "list_name": list_name,
        "due_date": due,
        "board": board,
    }


def _customers(rng: random.Random) -> list[Row]:
    people = [
        ("Marcus Webb", "northpeak.io"),
        ("Tessa Moreno", "brightline.co"),
        ("Aiden Brooks", "cobaltfarms.com"),
        ("Lina Haddad", "meridianhealth.org"),
        ("Noah Fischer", "vantagelogistics.com"),
        ("Ruby Alvarez", "solsticeretail.com"),
        ("Kenji Mori", "harborlabs.jp"),
        ("Zara Patel", "quillmedia.com"),
        ("Owen Gallagher", "ironwoodbank.com"),
        ("Isla Novak", "fernhillschools.org"),
        ("Mateo Rossi", "aurorafoods.it"),
        ("Chloe Dubois", "lumiere-design.fr"),
        ("Samir Khan", "deltagrid.com"),
        ("Grace Lee", "pinecrestclinic.com"),
        ("Felix Wagner", "bergmanntools.de"),
        ("Maya Cohen", "tidewater.io"),
        ("Leon Ortiz", "canyonsolar.com"),
        ("Hannah Schmidt", "kiteworks.net"),
        ("Victor Huang", "jadeport.com"),
        ("Elise Martin", "orchardcapital.com"),
    ]
    statuses = ["Qualified", "Won", "Lost", "Lead", "Proposal"]
    products = ["Software", "Hardware", "Services", "Consulting", "Training"]
    notes = [
        "Had a call about pricing. ",
        "Asked for a product demo. ",
        "Waiting on legal review. ",
        "Interested in an annual plan. ",
        "Requested references. ",
    ]
    rows = []
    for index, (name, domain) in enumerate(people):
        first, last = name.lower().split()
        contact = f"2023-{rng.choice([10, 11]):02d}-{rng.randint(1, 28):02d}"
        rows.append(
            {
                "_sort": index,
                "assigned_to_email": email_of(rng.choice(SELLERS)),
                "customer_name": name,
                "customer_email": f"{first}.{last}@{domain}",
                "customer_phone": f"{rng.randint(201, 989)}-555-{rng.randint(0, 9999):04d}",
                "last_contact_date": contact,
                "product_interest": rng.choice(products),
                "status": "Proposal" if name == "Marcus Webb" else rng.choice(statuses),
                "follow_up_by": f"2023-12-{rng.randint(1, 28):02d}",
                "notes": f"{contact}: {rng.choice(notes)}",
            }
        )
    rng.shuffle(rows)
    for index, row in enumerate(rows):
        row["_sort"] = index
    return _numbered(rows, "customer_id")


# ----------------------------------------------------------------------------- tasks
Call = tuple[str, dict[str, Any]]


def _one(rows: list[Row], **match: str) -> Row:
    found = [row for row in rows if all(row.get(key) == value for key, value in match.items())]
    if len(found) != 1:
        raise ValueError(f"expected one row matching {match}, found {len(found)}")
    return found[0]


def build_tasks(company: Company) -> list[tuple[str, str, list[Call]]]:
    """``(category, user request, ground-truth calls)`` for every example row."""
    emails, events = company.emails, company.calendar_events
    tasks, customers = company.project_tasks, company.customers

    def latest(rows: list[Row], key: str, keep: Callable[[Row], bool]) -> Row:
        return max((row for row in rows if keep(row)), key=lambda row: row[key])

    diego_update = latest(
        emails, "sent_datetime", lambda e: e["subject"] == "Task Update on Build checkout page"
    )
    budget = latest(emails, "sent_datetime", lambda e: e["subject"] == "Q4 budget review")
    farah_last = latest(emails, "sent_datetime", lambda e: e["sender/recipient"] == email_of("farah"))
    planning = _one(events, event_name="Quarterly planning")
    ivan_next = min(
        (
            e
            for e in events
            if e["participant_email"] == email_of("ivan") and e["event_start"] > "2023-11-30 23:59:00"
        ),
        key=lambda e: e["event_start"],
    )
    jonas_next_week = [
        e
        for e in events
        if e["participant_email"] == email_of("jonas")
        and "2023-12-04" <= e["event_start"][:10] <= "2023-12-08"
    ]
    login_task = _one(tasks, task_name="Fix login redirect loop")
    docs_task = _one(tasks, task_name="Write API rate limit docs")
    marcus = _one(customers, customer_name="Marcus Webb")
    tessa = _one(customers, customer_name="Tessa Moreno")
    social = sum(
        1
        for v in company.analytics
        if v["date_of_visit"] == "2023-11-25" and v["traffic_source"] == "social media"
    )
    longest = max(float(v["session_duration_seconds"]) for v in company.analytics)
    if longest >= 900:
        raise ValueError("the conditional analytics task assumes no session lasts 15 minutes")

    reply_body = "Thanks for the update - I will review it tomorrow."
    return [
        (
            "workplace_assistant_email",
            f"Reply to Diego's last email about '{diego_update['subject']}' with '{reply_body}'",
            [("email_reply_email", {"email_id": diego_update["email_id"], "body": reply_body})],
        ),
        (
            "workplace_assistant_email",
            "Send an email to Nadia with the subject 'Campaign assets' saying "
            "'Could you share the final campaign "
            "assets by Friday?'",
            [
                (
                    "email_send_email",
                    {
                        "recipient": email_of("nadia"),
                        "subject": "Campaign assets",
                        "body": "Could you share the final campaign assets by Friday?",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_email",
            "Forward the most recent email about 'Q4 budget review' to Omar.",
            [("email_forward_email", {"email_id": budget["email_id"], "recipient": email_of("omar")})],
        ),
        (
            "workplace_assistant_email",
            "Reply to the latest email from Farah with 'Approved - go ahead and "
            "send it.' and then delete her email.",
            [
                (
                    "email_reply_email",
                    {"email_id": farah_last["email_id"], "body": "Approved - go ahead and send it."},
                ),
                ("email_delete_email", {"email_id": farah_last["email_id"]}),
            ],
        ),
        (
            "workplace_assistant_calendar",
            "Schedule a 30 minute meeting called 'Design sync' with Chloe on 2023-12-04 at 10:00.",
            [
                (
                    "calendar_create_event",
                    {
                        "event_name": "Design sync",
                        "participant_email": email_of("chloe"),
                        "event_start": "2023-12-04 10:00:00",
                        "duration": "30",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_calendar",
            "Move my 'Quarterly planning' meeting with Priya so that it starts at 15:00 on the same day.",
            [
                (
                    "calendar_update_event",
                    {
                        "event_id": planning["event_id"],
                        "field": "event_start",
                        "new_value": planning["event_start"][:10] + " 15:00:00",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_calendar",
            "Cancel my next meeting with Ivan.",
            [("calendar_delete_event", {"event_id": ivan_next["event_id"]})],
        ),
        (
            "workplace_assistant_calendar",
            "Cancel all of my meetings with Jonas next week (Monday 2023-12-04 to Friday 2023-12-08).",
            [("calendar_delete_event", {"event_id": event["event_id"]}) for event in jonas_next_week],
        ),
        (
            "workplace_assistant_project_management",
            "Create a task called 'Add dark mode toggle' for Hana on the Front end "
            "board in the Backlog list, "
            "due 2023-12-08.",
            [
                (
                    "project_management_create_task",
                    {
                        "task_name": "Add dark mode toggle",
                        "assigned_to_email": email_of("hana"),
                        "list_name": "Backlog",
                        "due_date": "2023-12-08",
                        "board": "Front end",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_project_management",
            "Move the 'Fix login redirect loop' task to In Review.",
            [
                (
                    "project_management_update_task",
                    {"task_id": login_task["task_id"], "field": "list_name", "new_value": "In Review"},
                )
            ],
        ),
        (
            "workplace_assistant_project_management",
            "Reassign the 'Write API rate limit docs' task to Liam.",
            [
                (
                    "project_management_update_task",
                    {
                        "task_id": docs_task["task_id"],
                        "field": "assigned_to_email",
                        "new_value": email_of("liam"),
                    },
                )
            ],
        ),
        (
            "workplace_assistant_customer_relationship_manager",
            "Add Harper Quinn as a new customer in the CRM: email "
            "harper.quinn@fieldstone.co, phone 415-555-0134, "
            "interested in Software, status Lead, assigned to Elena. Leave the other fields empty.",
            [
                (
                    "customer_relationship_manager_add_customer",
                    {
                        "customer_name": "Harper Quinn",
                        "assigned_to_email": email_of("elena"),
                        "status": "Lead",
                        "customer_email": "harper.quinn@fieldstone.co",
                        "customer_phone": "415-555-0134",
                        "product_interest": "Software",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_customer_relationship_manager",
            "Marcus Webb signed the contract: set his status in the CRM to Won.",
            [
                (
                    "customer_relationship_manager_update_customer",
                    {"customer_id": marcus["customer_id"], "field": "status", "new_value": "Won"},
                )
            ],
        ),
        (
            "workplace_assistant_customer_relationship_manager",
            "Remove the customer Tessa Moreno from the CRM.",
            [("customer_relationship_manager_delete_customer", {"customer_id": tessa["customer_id"]})],
        ),
        (
            "workplace_assistant_analytics",
            "Make a bar chart of the total visits from 2023-11-20 to 2023-11-26.",
            [
                (
                    "analytics_create_plot",
                    {
                        "time_min": "2023-11-20",
                        "time_max": "2023-11-26",
                        "value_to_plot": "total_visits",
                        "plot_type": "bar",
                    },
                )
            ],
        ),
        (
            "workplace_assistant_analytics",
            "If the average session duration on 2023-11-28 was above 15 minutes, "
            "make a line plot of the session "
            "durations from 2023-11-21 to 2023-11-28. Otherwise, do nothing.",
            [
                (
                    "analytics_get_average_session_duration",
                    {"time_min": "2023-11-28", "time_max": "2023-11-28"},
                )
            ],
        ),
        (
            "workplace_assistant_multi_domain",
            "Find out how many website visits came from social media on "
            "2023-11-25, then email Ivan with the subject "
            "'Social traffic' and the body 'Social media visits on 2023-11-25: N', where N is that number.",
            [
                (
                    "analytics_traffic_source_count",
                    {"time_min": "2023-11-25", "time_max": "2023-11-25", "traffic_source": "social media"},
                ),
                (
                    "email_send_email",
                    {
                        "recipient": email_of("ivan"),
                        "subject": "Social traffic",
                        "body": f"Social media visits on 2023-11-25: {social}",
                    },
                ),
            ],
        ),
    ]


def build_rows(
    company: Company, system_prompt: str, tools: tuple[dict[str, Any], ...]
) -> list[dict[str, Any]]:
    rows = []
    for index, (category, request, calls) in enumerate(build_tasks(company)):
        ground_truth = [{"name": name, "arguments": json.dumps(args)} for name, args in calls]
        rows.append(
            {
                "id": index,
                "responses_create_params": {
                    "input": [
                        {"role": "system", "content": system_prompt},
                        {"role": "user", "content": request},
                    ],
                    "tools": list(tools),
                    "parallel_tool_calls": False,
                    "temperature": 1.0,
                },
                "ground_truth": str(ground_truth),  # NeMo's rows: a Python-literal string
                "category": category,
                "environment_name": "workplace_assistant",
            }
        )
    return rows


def write(data_dir: Path = DATA_DIR) -> None:
    """Rewrite the company tables and the example rows under ``data_dir``."""
    from gym_llm.envs.workplace_assistant.env import SYSTEM_PROMPT
    from gym_llm.envs.workplace_assistant.toolkit import TOOL_SCHEMAS

    company = build_company(random.Random(20231130))
    data_dir.mkdir(parents=True, exist_ok=True)
    for table in TABLES:
        rows = getattr(company, table)
        if rows:  # an absent file loads as an empty table (the plots start empty)
            _write_jsonl(data_dir / f"company_{table}.jsonl", rows)
    _write_jsonl(data_dir / "example.jsonl", build_rows(company, SYSTEM_PROMPT, TOOL_SCHEMAS))


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA_DIR)
