"""Calendar tools (WorkBench's ``calendar`` toolkit)."""

from __future__ import annotations

from gym_llm.tools import tool

from .common import (
    find,
    is_eight_digit_id,
    next_id,
    paginate,
    parse_datetime,
    wire,
)
from .company import Company

EVENT_FIELDS = ("event_id", "event_name", "participant_email", "event_start", "duration")
UPDATABLE_EVENT_FIELDS = EVENT_FIELDS[1:]
BAD_EVENT_ID = "Invalid event ID format. Expected 8-digit ID."
BAD_START = "Invalid event_start format. Expected YYYY-MM-DD HH:MM:SS."


class CalendarTools:
    """Mixin: the five calendar tools over ``self.company``."""

    company: Company

    @tool
    def calendar_get_event_information_by_id(
        self, event_id: str | None = None, field: str | None = None
    ) -> str:
        """Returns the event for a given ID.

        Args:
            event_id: 8-digit ID of the event
            field: Field to return. Available fields are: 'event_id', 'event_name',
                'participant_email', 'event_start', 'duration'
        """
        if not event_id:
            return wire("Event ID not provided.")
        if not field:
            return wire("Field not provided.")
        if not is_eight_digit_id(event_id):
            return wire(BAD_EVENT_ID)
        if field not in EVENT_FIELDS:
            return wire(f"Invalid field. Available fields are: {', '.join(EVENT_FIELDS)}")
        event = find(self.company.calendar_events, "event_id", event_id)
        if event is None:
            return wire("Event not found.")
        return wire({field: event.get(field)})

    @tool
    def calendar_search_events(
        self,
        query: str | None = None,
        time_min: str | None = None,
        time_max: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> str:
        """Returns the events for a given query with pagination support.

        Args:
            query: Query to search for. Terms will be matched in the event_name and participant_email
                fields
            time_min: Lower bound (inclusive) for an event's end time to filter by. Format:
                YYYY-MM-DD HH:MM:SS
            time_max: Upper bound (inclusive) for an event's start time to filter by. Format:
                YYYY-MM-DD HH:MM:SS
            page: Page number of results to return
            page_size: Number of events per page
        """
        low = parse_datetime(time_min) if time_min else None
        if time_min and low is None:
            return wire("Invalid time_min format. Expected YYYY-MM-DD HH:MM:SS.")
        high = parse_datetime(time_max) if time_max else None
        if time_max and high is None:
            return wire("Invalid time_max format. Expected YYYY-MM-DD HH:MM:SS.")
        needle = (query or "").lower()
        found = []
        for event in self.company.calendar_events:
            if needle not in event["event_name"].lower() and needle not in event["participant_email"].lower():
                continue
            start = parse_datetime(event["event_start"])
            if start is None or (low and start < low) or (high and start > high):
                continue
            found.append((start, event))
        if not found:
            return wire("No events found.")
        found.sort(key=lambda pair: pair[0], reverse=True)  # latest first, as WorkBench
        try:
            return wire(paginate([event for _, event in found], page, page_size, "events", "total_events"))
        except ValueError as exc:
            return wire(f"Error searching events: {exc}")

    @tool
    def calendar_create_event(
        self,
        event_name: str | None = None,
        participant_email: str | None = None,
        event_start: str | None = None,
        duration: str | None = None,
    ) -> str:
        """Creates a new event.

        Args:
            event_name: Name of the event
            participant_email: Email of the participant
            event_start: Start time of the event. Format: YYYY-MM-DD HH:MM:SS
            duration: Duration of the event in minutes
        """
        if not event_name:
            return wire("Event name not provided.")
        if not participant_email:
            return wire("Participant email not provided.")
        if not event_start:
            return wire("Event start not provided.")
        if not duration:
            return wire("Event duration not provided.")
        if parse_datetime(event_start) is None:
            return wire(BAD_START)
        error = _duration_error(duration)
        if error:
            return wire(error)
        events = self.company.calendar_events
        event_id = next_id(events, "event_id")
        events.append(
            {
                "event_id": event_id,
                "event_name": event_name,
                "participant_email": participant_email.lower(),
                "event_start": event_start,
                "duration": duration,
            }
        )
        return wire(event_id)

    @tool
    def calendar_delete_event(self, event_id: str | None = None) -> str:
        """Deletes an event.

        Args:
            event_id: 8-digit ID of the event
        """
        if not event_id:
            return wire("Event ID not provided.")
        if not is_eight_digit_id(event_id):
            return wire(BAD_EVENT_ID)
        events = self.company.calendar_events
        kept = [event for event in events if event["event_id"] != event_id]
        if len(kept) == len(events):
            return wire("Event not found.")
        events[:] = kept
        return wire("Event deleted successfully.")

    @tool
    def calendar_update_event(
        self, event_id: str | None = None, field: str | None = None, new_value: str | None = None
    ) -> str:
        """Updates an event.

        Args:
            event_id: 8-digit ID of the event
            field: Field to update. Available fields are: 'event_name', 'participant_email',
                'event_start', 'duration'
            new_value: New value for the field
        """
        if not event_id or not field or not new_value:
            return wire("Event ID, field, or new value not provided.")
        if not is_eight_digit_id(event_id):
            return wire(BAD_EVENT_ID)
        if field not in UPDATABLE_EVENT_FIELDS:
            return wire(f"Invalid field. Available fields are: {', '.join(UPDATABLE_EVENT_FIELDS)}")
        if field == "event_start" and parse_datetime(new_value) is None:
            return wire(BAD_START)
        if field == "duration":
            error = _duration_error(new_value)
            if error:
                return wire(error)
        event = find(self.company.calendar_events, "event_id", event_id)
        if event is None:
            return wire("Event not found.")
        event[field] = new_value.lower() if field == "participant_email" else new_value
        return wire("Event updated successfully.")


def _duration_error(duration: str) -> str | None:
    try:
        minutes = int(duration)
    except ValueError:
        return "Invalid duration format. Expected a number of minutes."
    if minutes <= 0:
        return "Duration must be a positive number of minutes."
    return None
