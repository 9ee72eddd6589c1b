"""Customer relationship manager tools (WorkBench's ``customer_relationship_manager`` toolkit)."""

from __future__ import annotations

from gym_llm.tools import tool

from .common import contains, find, next_id, paginate, wire
from .company import Company

STATUSES = ("Qualified", "Won", "Lost", "Lead", "Proposal")
PRODUCTS = ("Software", "Hardware", "Services", "Consulting", "Training")
UPDATABLE_CUSTOMER_FIELDS = (
    "customer_name",
    "assigned_to_email",
    "customer_email",
    "customer_phone",
    "last_contact_date",
    "product_interest",
    "status",
    "notes",
    "follow_up_by",
)


def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{value}'" for value in values)


class CrmTools:
    """Mixin: the four CRM tools over ``self.company``."""

    company: Company

    @tool
    def customer_relationship_manager_search_customers(
        self,
        customer_name: str | None = None,
        customer_email: str | None = None,
        product_interest: str | None = None,
        status: str | None = None,
        assigned_to_email: str | None = None,
        last_contact_date_min: str | None = None,
        last_contact_date_max: str | None = None,
        follow_up_by_min: str | None = None,
        follow_up_by_max: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> str:
        """Searches for customers based on the given parameters with pagination support.

        Args:
            customer_name: Name of the customer
            customer_email: Email address of the customer
            product_interest: Product interest of the customer
            status: Current status of the customer
            assigned_to_email: Email address of the person assigned to the customer
            last_contact_date_min: Minimum last contact date. Format: YYYY-MM-DD
            last_contact_date_max: Maximum last contact date. Format: YYYY-MM-DD
            follow_up_by_min: Minimum follow up date. Format: YYYY-MM-DD
            follow_up_by_max: Maximum follow up date. Format: YYYY-MM-DD
            page: Page number of results to return
            page_size: Number of customers per page
        """
        text_filters = {
            "customer_name": customer_name,
            "customer_email": customer_email,
            "product_interest": product_interest,
            "status": status,
            "assigned_to_email": assigned_to_email,
        }
        # (column, bound, is_lower_bound): dates are compared as strings, as WorkBench does.
        date_filters = [
            ("last_contact_date", last_contact_date_min, True),
            ("last_contact_date", last_contact_date_max, False),
            ("follow_up_by", follow_up_by_min, True),
            ("follow_up_by", follow_up_by_max, False),
        ]
        if not any(text_filters.values()) and not any(bound for _, bound, _ in date_filters):
            return wire("No search parameters provided. Please provide at least one parameter.")
        found = []
        for customer in self.company.customers:
            if any(value and not contains(customer.get(col), value) for col, value in text_filters.items()):
                continue
            if any(
                bound and not _within(customer.get(col), bound, lower) for col, bound, lower in date_filters
            ):
                continue
            found.append(customer)
        if not found:
            return wire("No customers found.")
        try:
            return wire(paginate(found, page, page_size, "customers", "total_customers"))
        except ValueError as exc:
            return wire(f"Error searching customers: {exc}")

    @tool
    def customer_relationship_manager_update_customer(
        self, customer_id: str | None = None, field: str | None = None, new_value: str | None = None
    ) -> str:
        """Updates a customer record by ID.

        Args:
            customer_id: ID of the customer
            field: Field to update. Available fields are: 'customer_name', 'assigned_to_email',
                'customer_email', 'customer_phone', 'last_contact_date', 'product_interest', 'status',
                'notes', 'follow_up_by'
            new_value: New value for the field
        """
        if not customer_id or not field or not new_value:
            return wire("Customer ID, field, or new value not provided.")
        if field == "status" and new_value not in STATUSES:
            return wire(f"Status not valid. Please choose from: {_choices(STATUSES)}")
        if field == "product_interest" and new_value not in PRODUCTS:
            return wire(f"Product interest not valid. Please choose from: {_choices(PRODUCTS)}")
        if field in ("customer_email", "assigned_to_email"):
            new_value = new_value.lower()
        customer = find(self.company.customers, "customer_id", customer_id)
        if customer is None:
            return wire("Customer not found.")
        if field not in UPDATABLE_CUSTOMER_FIELDS:
            return wire(f"Field not valid. Please choose from: {_choices(UPDATABLE_CUSTOMER_FIELDS)}")
        customer[field] = new_value
        return wire("Customer updated successfully.")

    @tool
    def customer_relationship_manager_add_customer(
        self,
        customer_name: str | None = None,
        assigned_to_email: str | None = None,
        status: str | None = None,
        customer_email: str | None = None,
        customer_phone: str | None = None,
        last_contact_date: str | None = None,
        product_interest: str | None = None,
        notes: str | None = None,
        follow_up_by: str | None = None,
    ) -> str:
        """Adds a new customer record.

        Args:
            customer_name: Name of the customer
            assigned_to_email: Email address of the person assigned to the customer
            status: Current status of the customer. One of: 'Qualified', 'Won', 'Lost', 'Lead', 'Proposal'
            customer_email: Email address of the customer
            customer_phone: Phone number of the customer
            last_contact_date: The last date the customer was contacted. Format: YYYY-MM-DD
            product_interest: Product interest of the customer. One of: 'Software', 'Hardware',
                'Services', 'Consulting', 'Training'
            notes: Notes about the customer
            follow_up_by: Date for the next follow up. Format: YYYY-MM-DD
        """
        if not (customer_name and assigned_to_email and status):
            return wire("Please provide all required fields: customer_name, assigned_to_email, status.")
        customers = self.company.customers
        customer_id = next_id(customers, "customer_id")
        customers.append(
            {
                "customer_id": customer_id,
                "assigned_to_email": assigned_to_email.lower(),
                "customer_name": customer_name,
                "customer_email": customer_email.lower() if customer_email else customer_email,
                "customer_phone": customer_phone,
                "last_contact_date": last_contact_date,
                "product_interest": product_interest,
                "status": status,
                "follow_up_by": follow_up_by,
                "notes": notes if notes is not None else "",
            }
        )
        return wire(customer_id)

    @tool
    def customer_relationship_manager_delete_customer(self, customer_id: str | None = None) -> str:
        """Deletes a customer record by ID.

        Args:
            customer_id: ID of the customer
        """
        if not customer_id:
            return wire("Customer ID not provided.")
        customers = self.company.customers
        kept = [customer for customer in customers if customer["customer_id"] != customer_id]
        if len(kept) == len(customers):
            return wire("Customer not found.")
        customers[:] = kept
        return wire("Customer deleted successfully.")


def _within(value: object, bound: str, lower: bool) -> bool:
    if not isinstance(value, str):
        return False  # a missing date never satisfies a date filter
    return value >= bound if lower else value <= bound
