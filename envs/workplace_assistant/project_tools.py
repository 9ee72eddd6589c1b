"""Project management tools (WorkBench's ``project_management`` toolkit)."""

from __future__ import annotations

import re

from gym_llm.tools import tool

from .common import contains, find, next_id, wire
from .company import Company

LISTS = ("Backlog", "In Progress", "In Review", "Completed")
BOARDS = ("Back end", "Front end", "Design")
UPDATABLE_TASK_FIELDS = ("task_name", "assigned_to_email", "list_name", "due_date", "board")
BAD_LIST = "List not valid. Please choose from: 'Backlog', 'In Progress', 'In Review', 'Completed'."
BAD_BOARD = "Board not valid. Please choose from: 'Back end', 'Front end', 'Design'."
BAD_ASSIGNEE = "Assignee email not valid. Please choose from the list of team members."
_EMAIL = re.compile(r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$")


class ProjectTools:
    """Mixin: the five project management tools over ``self.company``."""

    company: Company

    @tool
    def project_management_get_task_information_by_id(
        self, task_id: str | None = None, field: str | None = None
    ) -> str:
        """Returns the task information for a given ID.

        Args:
            task_id: 8-digit ID of the task
            field: Field to return. Available fields are: 'task_id', 'task_name', 'assigned_to_email',
                'list_name', 'due_date', 'board'
        """
        if not task_id:
            return wire("Task ID not provided.")
        if not field:
            return wire("Field not provided.")
        task = find(self.company.project_tasks, "task_id", task_id)
        if task is None:
            return wire("Task not found.")
        if field not in task:
            return wire("Field not found.")
        return wire({field: task[field]})

    @tool
    def project_management_search_tasks(
        self,
        task_name: str | None = None,
        assigned_to_email: str | None = None,
        list_name: str | None = None,
        due_date: str | None = None,
        board: str | None = None,
    ) -> str:
        """Searches for tasks based on the given parameters.

        Args:
            task_name: Name of the task
            assigned_to_email: Email address of the person assigned to the task
            list_name: Name of the list the task belongs to
            due_date: Due date of the task in YYYY-MM-DD format
            board: Name of the board the task belongs to
        """
        if not any((task_name, assigned_to_email, list_name, due_date, board)):
            return wire("No search parameters provided.")
        if assigned_to_email and not _EMAIL.match(assigned_to_email):
            return wire("Invalid email format for assigned_to_email.")
        found = []
        for task in self.company.project_tasks:
            if task_name and not contains(task["task_name"], task_name):
                continue
            if assigned_to_email and task["assigned_to_email"].lower() != assigned_to_email.lower():
                continue  # exact match, unlike the other filters
            if list_name and not contains(task["list_name"], list_name):
                continue
            if due_date and not contains(task["due_date"], due_date):
                continue
            if board and not contains(task["board"], board):
                continue
            found.append(dict(task))
        return wire(found)

    @tool
    def project_management_create_task(
        self,
        task_name: str | None = None,
        assigned_to_email: str | None = None,
        list_name: str | None = None,
        due_date: str | None = None,
        board: str | None = None,
    ) -> str:
        """Creates a new task.

        Args:
            task_name: Name of the task
            assigned_to_email: Email address of the person assigned to the task
            list_name: Name of the list the task belongs to. One of: 'Backlog', 'In Progress',
                'In Review', 'Completed'
            due_date: Due date of the task in YYYY-MM-DD format
            board: Name of the board the task belongs to. One of: 'Back end', 'Front end', 'Design'
        """
        if not (task_name and assigned_to_email and list_name and due_date and board):
            return wire("Missing task details.")
        assigned_to_email = assigned_to_email.lower()
        if not self._is_team_member(assigned_to_email):
            return wire(BAD_ASSIGNEE)
        if list_name not in LISTS:
            return wire(BAD_LIST)
        if board not in BOARDS:
            return wire(BAD_BOARD)
        tasks = self.company.project_tasks
        task_id = next_id(tasks, "task_id")
        tasks.append(
            {
                "task_id": task_id,
                "task_name": task_name,
                "assigned_to_email": assigned_to_email,
                "list_name": list_name,
                "due_date": due_date,
                "board": board,
            }
        )
        return wire(task_id)

    @tool
    def project_management_delete_task(self, task_id: str | None = None) -> str:
        """Deletes a task by ID.

        Args:
            task_id: 8-digit ID of the task
        """
        if not task_id:
            return wire("Task ID not provided.")
        tasks = self.company.project_tasks
        kept = [task for task in tasks if task["task_id"] != task_id]
        if len(kept) == len(tasks):
            return wire("Task not found.")
        tasks[:] = kept
        return wire("Task deleted successfully.")

    @tool
    def project_management_update_task(
        self, task_id: str | None = None, field: str | None = None, new_value: str | None = None
    ) -> str:
        """Updates a task by ID.

        Args:
            task_id: 8-digit ID of the task
            field: Field to update. Available fields are: 'task_name', 'assigned_to_email', 'list_name',
                'due_date', 'board'
            new_value: New value for the field
        """
        if not task_id or not field or not new_value:
            return wire("Task ID, field, or new value not provided.")
        if field == "assigned_to_email":
            new_value = new_value.lower()
            if not self._is_team_member(new_value):
                return wire(BAD_ASSIGNEE)
        if field == "board" and new_value not in BOARDS:
            return wire(BAD_BOARD)
        if field == "list_name" and new_value not in LISTS:
            return wire(BAD_LIST)
        task = find(self.company.project_tasks, "task_id", task_id)
        if task is None:
            return wire("Task not found.")
        if field not in UPDATABLE_TASK_FIELDS:
            return wire("Field not valid.")
        task[field] = new_value
        return wire("Task updated successfully.")

    def _is_team_member(self, email: str) -> bool:
        # WorkBench's rule: the team is whoever already has a task.
        return any(task["assigned_to_email"].lower() == email for task in self.company.project_tasks)
