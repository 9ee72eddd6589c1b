"""Parse and compare semantic versions."""

from semverlite.compare import compare, max_version, sort_versions
from semverlite.version import Version, parse

__all__ = ["Version", "compare", "max_version", "parse", "sort_versions"]
