"""Judge prompt templates read backwards: which values a filled-in ``str.format`` template holds."""

from __future__ import annotations

import re
import string
from functools import lru_cache


@lru_cache(maxsize=64)
def _template_pattern(template: str) -> re.Pattern[str]:
    parts = ["\\A"]
    seen: set[str] = set()
    for literal, field, spec, conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise ValueError(f"template field {{{field}}} cannot be read back: only plain {{name}} can")
        # A field used twice must hold the same text both times.
        parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>.*?)")
        seen.add(field)
    parts.append("\\Z")
    return re.compile("".join(parts), re.DOTALL)


def template_fields(template: str, text: str) -> dict[str, str] | None:
    """The values that ``template.format(**values)`` filled in to give ``text``.

    Args:
        template: A ``str.format`` template with plain named fields (``{question}``; doubled
            braces for literal ones).
        text: A prompt that may have been made from ``template``.

    Returns:
        The field values, or ``None`` when ``text`` was not made from ``template``. Where a value
        itself contains the text that follows its field, the split is the earliest one.

    Raises:
        ValueError: The template has a positional field, an attribute, a conversion or a format spec.

    Example:
        >>> template_fields("A={a}\\nB={b}", "A=1/2\\nB=0.5")
        {'a': '1/2', 'b': '0.5'}
        >>> template_fields("A={a}\\nB={b}", "something else") is None
        True
    """
    match = _template_pattern(template).match(text)
    return match.groupdict() if match else None
