"""Website analytics tools (WorkBench's ``analytics`` toolkit).

Only ``analytics_create_plot`` writes anything (a row in the plots table); the counts are
read-only, grouped by ``date_of_visit`` with dates in ascending order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gym_llm.tools import tool

from .common import Row, wire
from .company import Company

PLOT_VALUES = (
    "total_visits",
    "session_duration_seconds",
    "user_engaged",
    "visits_direct",
    "visits_referral",
    "visits_search_engine",
    "visits_social_media",
)
PLOT_TYPES = ("bar", "line", "scatter", "histogram")


class AnalyticsTools:
    """Mixin: the six analytics tools over ``self.company``."""

    company: Company

    @tool
    def analytics_get_visitor_information_by_id(self, visitor_id: str | None = None) -> str:
        """Returns the analytics data for a given visitor ID.

        Args:
            visitor_id: ID of the visitor
        """
        if not visitor_id:
            return wire("Visitor ID not provided.")
        visits = [dict(row) for row in self.company.analytics if row["visitor_id"] == visitor_id]
        return wire(visits or "Visitor not found.")

    @tool
    def analytics_create_plot(
        self,
        time_min: str | None = None,
        time_max: str | None = None,
        value_to_plot: str | None = None,
        plot_type: str | None = None,
    ) -> str:
        """Plots the analytics data for a given time range and value.

        Args:
            time_min: Start date of the time range. Date format is YYYY-MM-DD
            time_max: End date of the time range. Date format is YYYY-MM-DD
            value_to_plot: Value to plot. Available values are: 'total_visits', 'session_duration_seconds',
                'user_engaged', 'visits_direct', 'visits_referral', 'visits_search_engine',
                'visits_social_media'
            plot_type: Type of plot. Can be 'bar', 'line', 'scatter' or 'histogram'
        """
        if not time_min:
            return wire("Start date not provided.")
        if not time_max:
            return wire("End date not provided.")
        if value_to_plot not in PLOT_VALUES:
            return wire(f"Value to plot must be one of {', '.join(repr(v) for v in PLOT_VALUES)}")
        if plot_type not in PLOT_TYPES:
            return wire("Plot type must be one of 'bar', 'line', 'scatter', or 'histogram'")
        file_path = f"plots/{time_min}_{time_max}_{value_to_plot}_{plot_type}.png"
        self.company.plots.append({"file_path": file_path})
        return wire(file_path)

    @tool
    def analytics_total_visits_count(self, time_min: str | None = None, time_max: str | None = None) -> str:
        """Returns the total number of visits within a specified time range.

        Args:
            time_min: Start date of the time range. Date format is YYYY-MM-DD
            time_max: End date of the time range. Date format is YYYY-MM-DD
        """
        return wire(_per_day(self._visits(time_min, time_max), lambda rows: len(rows)))

    @tool
    def analytics_engaged_users_count(self, time_min: str | None = None, time_max: str | None = None) -> str:
        """Returns the number of engaged users within a specified time range.

        Args:
            time_min: Start date of the time range. Date format is YYYY-MM-DD
            time_max: End date of the time range. Date format is YYYY-MM-DD
        """
        visits = self._visits(time_min, time_max)
        return wire(_per_day(visits, lambda rows: sum(1 for row in rows if row["user_engaged"])))

    @tool
    def analytics_traffic_source_count(
        self, time_min: str | None = None, time_max: str | None = None, traffic_source: str | None = None
    ) -> str:
        """Returns the number of visits from a specific traffic source within a specified time range.

        Args:
            time_min: Start date of the time range. Date format is YYYY-MM-DD
            time_max: End date of the time range. Date format is YYYY-MM-DD
            traffic_source: Traffic source to filter the visits. Available values are: 'direct',
                'referral', 'search engine', 'social media'
        """
        visits = self._visits(time_min, time_max)
        if not traffic_source:
            return wire(_per_day(visits, lambda rows: len(rows)))
        return wire(
            _per_day(visits, lambda rows: sum(1 for r in rows if r["traffic_source"] == traffic_source))
        )

    @tool
    def analytics_get_average_session_duration(
        self, time_min: str | None = None, time_max: str | None = None
    ) -> str:
        """Returns the average session duration within a specified time range.

        Args:
            time_min: Start date of the time range. Date format is YYYY-MM-DD
            time_max: End date of the time range. Date format is YYYY-MM-DD
        """
        visits = self._visits(time_min, time_max)
        return wire(
            _per_day(
                visits,
                lambda rows: sum(float(row["session_duration_seconds"]) for row in rows) / len(rows),
            )
        )

    def _visits(self, time_min: str | None, time_max: str | None) -> list[Row]:
        # Plain string comparison of ISO dates, as WorkBench compares its string column.
        return [
            row
            for row in self.company.analytics
            if (not time_min or row["date_of_visit"] >= time_min)
            and (not time_max or row["date_of_visit"] <= time_max)
        ]


def _per_day(visits: Iterable[Row], measure: Callable[[list[Row]], float]) -> dict[str, float]:
    by_day: dict[str, list[Row]] = {}
    for row in visits:
        by_day.setdefault(row["date_of_visit"], []).append(row)
    return {day: measure(by_day[day]) for day in sorted(by_day)}
