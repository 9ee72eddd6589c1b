"""Shortening text for previews."""


def truncate(text, width, ellipsis="..."):
    """text cut to at most width characters, ending with ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: max(width - len(ellipsis), 0)] + ellipsis
