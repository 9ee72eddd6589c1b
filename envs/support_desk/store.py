"""The shop's data and the rules of its write actions, as plain functions over a dict.

The env's tools call these on the episode's copy; ``verify`` replays recorded calls through the
same functions on a fresh copy, so a live episode and its recorded rollout reach the same state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHOP = Path(__file__).parent / "data" / "shop.json"
CANCEL_REASONS = ("no longer needed", "ordered by mistake")

Shop = dict[str, Any]


class ShopError(Exception):
    """A request the shop refuses; the message is what the agent reads."""


def load_shop() -> Shop:
    """A fresh copy of the shop's users and orders."""
    return json.loads(SHOP.read_text())


def find_user(shop: Shop, email: str) -> str:
    """The user id of the customer with this email (case aside)."""
    for user_id, user in shop["users"].items():
        if user["email"].lower() == email.strip().lower():
            return user_id
    raise ShopError(f"no user with email {email!r}")


def order(shop: Shop, order_id: str) -> dict[str, Any]:
    """The order (a leading ``#`` is allowed), the shop's own dict."""
    found = shop["orders"].get(order_id.strip().lstrip("#"))
    if found is None:
        raise ShopError(f"no order {order_id!r}")
    return found


def cancel(shop: Shop, order_id: str, reason: str) -> float:
    """Cancel a pending order; returns the refund."""
    target = order(shop, order_id)
    if target["status"] != "pending":
        raise ShopError(f"order {order_id} is {target['status']}: only pending orders can be cancelled")
    if reason not in CANCEL_REASONS:
        raise ShopError(f"reason must be one of {list(CANCEL_REASONS)}")
    target["status"] = "cancelled"
    target["cancel_reason"] = reason
    return round(sum(item["price"] for item in target["items"]), 2)


def return_items(shop: Shop, order_id: str, item_ids: list[str]) -> float:
    """Request the return of delivered items; returns the refund."""
    target = order(shop, order_id)
    if target["status"] != "delivered":
        raise ShopError(f"order {order_id} is {target['status']}: only delivered orders can be returned")
    prices = {item["item_id"]: item["price"] for item in target["items"]}
    unknown = [item_id for item_id in item_ids if item_id not in prices]
    if not item_ids or unknown:
        raise ShopError(f"order {order_id} has no items {unknown or item_ids}; its items: {sorted(prices)}")
    target["status"] = "return requested"
    target["returned_items"] = sorted(set(item_ids))
    return round(sum(prices[item_id] for item_id in set(item_ids)), 2)
