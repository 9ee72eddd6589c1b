"""Descriptive statistics."""

from numbox.stats import mean, median, summary

__all__ = ["mean", "median", "summary"]
