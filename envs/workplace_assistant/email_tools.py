"""Company directory and email tools (WorkBench's ``company_directory`` and ``email`` toolkits)."""

from __future__ import annotations

from typing import Any

from gym_llm.tools import tool

from .common import (
    CURRENT_TIME_TEXT,
    Row,
    find,
    next_id,
    paginate,
    parse_datetime,
    wire,
)
from .company import Company

EMAIL_FIELDS = ("email_id", "inbox/outbox", "sender/recipient", "subject", "sent_datetime", "body")


class EmailTools:
    """Mixin: the directory lookup and the six email tools over ``self.company``."""

    company: Company

    @tool
    def company_directory_find_email_address(self, name: str | None = None) -> str:
        """Finds all email addresses containing the given name (case-insensitive search).

        Args:
            name: Name or partial name to search for in email addresses
        """
        if not name:
            return wire("Name not provided.")
        needle = name.lower()
        return wire(
            [row["email_address"] for row in self.company.employees if needle in row["email_address"]]
        )

    @tool
    def email_get_email_information_by_id(self, email_id: str | None = None, field: str | None = None) -> str:
        """Retrieves specific details of an email by its ID.

        Args:
            email_id: Unique ID of the email
            field: Specific field to return. Available fields: 'email_id', 'inbox/outbox',
                'sender/recipient', 'subject', 'sent_datetime', 'body'
        """
        if not email_id:
            return wire("Email ID not provided.")
        if not field:
            return wire("Field not provided.")
        email = find(self.company.emails, "email_id", email_id)
        if email is None:
            return wire("Email not found.")
        if field not in email:
            return wire(f"Field '{field}' not found. Available fields: {', '.join(email)}")
        return wire({field: email[field]})

    @tool
    def email_search_emails(
        self,
        query: str | None = None,
        date_min: str | None = None,
        date_max: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> str:
        """Searches for emails matching the given query across subject, body, or sender fields.
        The function matches an email if all words in the query appear in any of these fields.

        Args:
            query: Search query, matching terms in subject, body, or sender/recipient fields
            date_min: Lower date limit for the email's sent date (inclusive). Format: YYYY-MM-DD
            date_max: Upper date limit for the email's sent date (inclusive). Format: YYYY-MM-DD
            page: Page number of results to return
            page_size: Number of emails per page
        """
        words = (query or "").lower().split()
        low = parse_datetime(date_min) if date_min else None
        high = parse_datetime(date_max) if date_max else None
        for given, parsed in ((date_min, low), (date_max, high)):
            if given and parsed is None:
                return wire(f"Error searching emails: could not parse date '{given}'. Expected YYYY-MM-DD.")
        found = []
        for email in self.company.emails:
            text = f"{email['subject']} {email['body']} {email['sender/recipient']}".lower()
            if not all(word in text for word in words):
                continue
            day = email["sent_datetime"][:10]
            if (low and day < low.date().isoformat()) or (high and day > high.date().isoformat()):
                continue
            found.append(email)
        if not found:
            return wire("No emails found.")
        found.sort(key=lambda email: email["sent_datetime"], reverse=True)  # newest first
        try:
            return wire(paginate(found, page, page_size, "emails", "total_emails"))
        except ValueError as exc:
            return wire(f"Error searching emails: {exc}")

    @tool
    def email_send_email(
        self, recipient: str | None = None, subject: str | None = None, body: str | None = None
    ) -> str:
        """Sends an email to the specified recipient.

        Args:
            recipient: Email address of the recipient
            subject: Subject line of the email
            body: Body content of the email
        """
        return wire(self._send_email(recipient, subject, body) or "Email sent successfully.")

    @tool
    def email_delete_email(self, email_id: str | None = None) -> str:
        """Deletes an email by its ID.

        Args:
            email_id: Unique ID of the email to be deleted
        """
        if not email_id:
            return wire("Email ID not provided.")
        emails = self.company.emails
        kept = [email for email in emails if email["email_id"] != email_id]
        if len(kept) == len(emails):
            return wire("Email not found.")
        emails[:] = kept
        return wire("Email deleted successfully.")

    @tool
    def email_forward_email(self, email_id: str | None = None, recipient: str | None = None) -> str:
        """Forwards an email to the specified recipient.

        Args:
            email_id: Unique ID of the email to be forwarded
            recipient: Email address of the recipient
        """
        if not email_id or not recipient:
            return wire("Email ID or recipient not provided.")
        if not _looks_like_address(recipient):
            return wire("Invalid recipient email address.")
        email = find(self.company.emails, "email_id", email_id)
        if email is None:
            return wire("Email not found.")
        error = self._send_email(recipient, f"FW: {email['subject']}", email["body"])
        return wire(error or "Email forwarded successfully.")

    @tool
    def email_reply_email(self, email_id: str | None = None, body: str | None = None) -> str:
        """Replies to an email by its ID.

        Args:
            email_id: Unique ID of the email to be replied
            body: Body content of the email
        """
        if not email_id or not body:
            return wire("Email ID or body not provided.")
        email = find(self.company.emails, "email_id", email_id)
        if email is None:
            return wire("Email not found.")
        # Inbox mail goes back to its sender, outbox mail to its original recipient: the same column.
        error = self._send_email(email["sender/recipient"], f"RE: {email['subject']}", body)
        return wire(error or "Email replied successfully.")

    def _send_email(self, recipient: Any, subject: Any, body: Any) -> str | None:
        """Add an outbox email; the error message, or ``None`` on success."""
        if not recipient or not subject or not body:
            return "Recipient, subject, or body not provided."
        if not _looks_like_address(recipient):
            return "Invalid recipient email address."
        emails = self.company.emails
        email: Row = {
            "email_id": next_id(emails, "email_id"),
            "inbox/outbox": "outbox",
            "sender/recipient": recipient.lower(),
            "subject": subject,
            "sent_datetime": CURRENT_TIME_TEXT,
            "body": body,
        }
        emails.append(email)
        return None


def _looks_like_address(text: str) -> bool:
    return "@" in text and "." in text
