"""SupportDesk: an online shop's support agent serves a simulated customer (tau-bench's retail pattern).

The model is the agent: it must find the customer by email, look up their orders and carry out
their request with the shop's tools, following the policy in the system prompt. The customer is a
:class:`~gym_llm.user_sim.UserSimulator`: by default :class:`~gym_llm.user_sim.ScriptedUser` with
the row's ``user_script`` (offline); ``user=LLMUser(...)`` lets a model play the customer from the
row's ``user_instructions``. The episode ends when the customer is done.

The reward is 1.0 iff the shop ends in the state the row's ``expected_actions`` produce: the
recorded calls are replayed on a fresh copy of the shop, so a rollout re-verifies from its data.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from gym_llm import items as it
from gym_llm.env import Observation
from gym_llm.tasks import TaskRow
from gym_llm.tools import ToolError, tool
from gym_llm.user_sim import UserSimEnv
from gym_llm.verdict import Verdict

from . import store


class Action(BaseModel):
    """One expected tool call: its name and arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class SupportTask(TaskRow):
    """A customer's request: what the simulated customer knows and wants, and the calls that serve it."""

    user_instructions: str
    user_script: list[str] = Field(default_factory=list)
    expected_actions: list[Action]


class SupportDeskEnv(UserSimEnv):
    """A shop's support desk: six tools over orders; a simulated customer answers each reply."""

    task_model = SupportTask
    max_turns = 12
    reward_components = ("state_match", "write_calls")

    def setup(self, task: dict[str, Any]) -> None:
        self.shop = store.load_shop()

    # ------------------------------------------------------------------ tools
    @tool
    def find_user_id_by_email(self, email: str) -> dict[str, str]:
        """Find a customer's user id by their email address.

        Args:
            email: The customer's email address.
        """
        return {"user_id": _shop_call(store.find_user, self.shop, email)}

    @tool
    def list_user_orders(self, user_id: str) -> dict[str, Any]:
        """List a customer's orders with their status.

        Args:
            user_id: The customer's user id.
        """
        if user_id not in self.shop["users"]:
            raise ToolError(f"no user {user_id!r}")
        orders = {oid: o["status"] for oid, o in self.shop["orders"].items() if o["user_id"] == user_id}
        return {"user_id": user_id, "orders": orders}

    @tool
    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """Get an order's status, items and prices.

        Args:
            order_id: The order id, e.g. W1001.
        """
        return {"order_id": order_id, **copy.deepcopy(_shop_call(store.order, self.shop, order_id))}

    @tool
    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order and refund it to the original payment method.

        Args:
            order_id: The order id.
            reason: "no longer needed" or "ordered by mistake".
        """
        refund = _shop_call(store.cancel, self.shop, order_id, reason)
        return {"order_id": order_id, "status": "cancelled", "refund": refund}

    @tool
    def return_delivered_order_items(self, order_id: str, item_ids: list[str]) -> dict[str, Any]:
        """Request the return of items of a delivered order; the refund follows the return.

        Args:
            order_id: The order id.
            item_ids: The ids of the items to return.
        """
        refund = _shop_call(store.return_items, self.shop, order_id, item_ids)
        return {"order_id": order_id, "status": "return requested", "refund": refund}

    @tool
    def transfer_to_human_agent(self, summary: str) -> str:
        """Hand the customer over to a human agent when the request is outside the policy.

        Args:
            summary: What the customer wants and why it cannot be done here.
        """
        return "Transferred. A human agent will take over."

    # ------------------------------------------------------------------ grading
    def verify(self, task: dict[str, Any], response: dict[str, Any]) -> Verdict:
        reached = self._replay(call for call, _ in it.answered_calls(response["output"]))
        expected = self._replay(
            it.function_call(a["name"], a["arguments"], "x") for a in task["expected_actions"]
        )
        writes = sum(
            1 for call, _ in it.answered_calls(response["output"]) if call.get("name") in WRITE_TOOLS
        )
        match = reached["orders"] == expected["orders"]
        return Verdict(
            float(match),
            {"state_match": float(match), "write_calls": float(writes)},
            details={"final_orders": {oid: o["status"] for oid, o in reached["orders"].items()}},
        )

    def _replay(self, calls: Any) -> store.Shop:
        """A fresh shop with ``calls`` (calls that ran: a recorded, never-run call changes nothing)
        applied through the same tools and argument checks as live."""
        replay = type(self).__new__(type(self))
        replay.shop = store.load_shop()
        for call in calls:
            if call.get("type") != "function_call":
                continue
            spec = self.tools.get(call.get("name"))
            args = it.parse_arguments(call)
            if spec is None or args is None:
                continue
            try:
                spec.method(replay, **spec.validate(args))
            except (ToolError, ValidationError):
                continue  # a refused call changes nothing, live or replayed
        return replay.shop

    # ------------------------------------------------------------------ reference
    def reference_action(self, task: dict[str, Any], observation: Observation) -> Any:
        """The expected calls one per turn, then a summary; a goodbye to any later message."""
        done = len(it.function_calls(observation["input"]))
        actions = task["expected_actions"]
        if done < len(actions):
            return [it.function_call(actions[done]["name"], actions[done]["arguments"], f"call_{done}")]
        last = observation["input"][-1]
        if last.get("type") == "function_call_output":
            return "All done: I have taken care of your request."
        return "You're welcome. Goodbye!"


WRITE_TOOLS = frozenset({"cancel_pending_order", "return_delivered_order_items"})


def _shop_call(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except store.ShopError as exc:
        raise ToolError(str(exc)) from None
