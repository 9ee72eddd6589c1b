"""The synthetic company: its tables, a cheap per-episode copy, and the state comparison.

Tables are plain lists of dicts (one dict per row, string values as in WorkBench's CSVs), loaded
once per process from ``data/company_<table>.jsonl`` and copied at every reset. The directory and
the analytics visits are never written by any tool, so copies share them.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .common import Row

DATA_DIR = Path(__file__).parent / "data"

# table -> id column, for the tables whose final state is graded (None: rows have no id)
GRADED_TABLES: dict[str, str | None] = {
    "calendar_events": "event_id",
    "emails": "email_id",
    "plots": None,
    "project_tasks": "task_id",
    "customers": "customer_id",
}
# Columns compared case-sensitively, as in NeMo Gym (their values come from fixed vocabularies).
CASE_SENSITIVE = frozenset({"status", "list_name", "board"})
TABLES = ("employees", "emails", "calendar_events", "analytics", "plots", "project_tasks", "customers")


@dataclass(slots=True)
class Company:
    """All tables of one workplace. ``copy()`` gives an independent episode state."""

    employees: list[Row] = field(default_factory=list)
    emails: list[Row] = field(default_factory=list)
    calendar_events: list[Row] = field(default_factory=list)
    analytics: list[Row] = field(default_factory=list)
    plots: list[Row] = field(default_factory=list)
    project_tasks: list[Row] = field(default_factory=list)
    customers: list[Row] = field(default_factory=list)

    def copy(self) -> Company:
        """A copy whose writable tables (and their rows) are new objects; read-only tables are shared."""
        return Company(
            employees=self.employees,
            emails=[dict(row) for row in self.emails],
            calendar_events=[dict(row) for row in self.calendar_events],
            analytics=self.analytics,
            plots=[dict(row) for row in self.plots],
            project_tasks=[dict(row) for row in self.project_tasks],
            customers=[dict(row) for row in self.customers],
        )

    def ids(self, table: str) -> set[Any]:
        column = GRADED_TABLES[table]
        return {row.get(column) for row in getattr(self, table)} if column else set()


@lru_cache(maxsize=8)
def load_company(data_dir: Path = DATA_DIR) -> Company:
    """The seed company from ``data_dir`` (cached: never mutate it, ``copy()`` it).

    Each table is ``company_<table>.jsonl`` with one row per line; a missing file is an empty table.
    """
    tables: dict[str, list[Row]] = {}
    for table in TABLES:
        path = data_dir / f"company_{table}.jsonl"
        if not path.is_file():
            tables[table] = []
            continue
        with open(path, encoding="utf-8") as handle:
            tables[table] = [json.loads(line) for line in handle if line.strip()]
    return Company(**tables)


def seed_company(data_dir: Path = DATA_DIR) -> Company:
    """A fresh, independent copy of the company in ``data_dir`` (default: the bundled one)."""
    return load_company(Path(data_dir)).copy()


class StateTracker:
    """Follows which seeded ids keep their identity while calls are replayed.

    NeMo Gym's rule: a seeded record is matched by id; once it is deleted, an id reused later
    (created records get max+1) names a *new* record. New records are matched by content only,
    because their ids depend on creation order.
    """

    def __init__(self, company: Company) -> None:
        self.company = company
        self.stable = {table: company.ids(table) for table in GRADED_TABLES}
        self._sizes = {table: len(getattr(company, table)) for table in GRADED_TABLES}
        self._canonical: dict[str, Counter | None] = {}  # filled once the replay is over

    def after_call(self) -> None:
        for table, size in self._sizes.items():
            new_size = len(getattr(self.company, table))
            if new_size < size and GRADED_TABLES[table] is not None:  # ids vanish only when rows do
                self.stable[table].intersection_update(self.company.ids(table))
            self._sizes[table] = new_size

    def canonical(self, table: str) -> Counter | None:
        """A graded table as a multiset of normalised rows (``None``: duplicate ids)."""
        if table not in self._canonical:
            rows = getattr(self.company, table)
            self._canonical[table] = _canonical_rows(rows, GRADED_TABLES[table], self.stable[table])
        return self._canonical[table]

    def same_table(self, other: StateTracker, table: str) -> bool:
        """Whether ``table`` ends in the same state here and in ``other`` (NeMo Gym's comparison)."""
        if (
            getattr(self.company, table) == getattr(other.company, table)
            and self.stable[table] == other.stable[table]
        ):
            return True  # identical rows and ids: no need to normalise
        mine = self.canonical(table)
        return mine is not None and mine == other.canonical(table)

    def mismatched_tables(self, other: StateTracker) -> list[str]:
        return [table for table in GRADED_TABLES if not self.same_table(other, table)]


def _canonical_rows(rows: list[Row], id_column: str | None, stable_ids: set[Any]) -> Counter | None:
    if id_column is not None:
        ids = [row.get(id_column) for row in rows]
        if len(ids) != len(set(ids)):
            return None
    canonical: Counter = Counter()
    for row in rows:
        items = []
        for column in sorted(row):
            value = row[column]
            if isinstance(value, str) and column not in CASE_SENSITIVE:
                value = value.lower()
            if column == id_column and row[column] not in stable_ids:
                value = ("generated id",)
            items.append((column, value))
        canonical[tuple(items)] += 1
    return canonical
