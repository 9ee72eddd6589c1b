"""IFEval's ``detectable_content:*`` and ``detectable_format:*`` instructions."""

from __future__ import annotations

import json
import re

from ..registry import Args, Count, Phrase, registrar, search_all

register = registrar("ifeval")


class PlaceholdersArgs(Args):
    num_placeholders: Count


@register("detectable_content:number_placeholders", PlaceholdersArgs)
def number_placeholders(text: str, *, num_placeholders: int) -> bool:
    """At least ``num_placeholders`` square-bracket placeholders such as ``[address]``."""
    return len(re.findall(r"\[.*?\]", text)) >= num_placeholders


class PostscriptArgs(Args):
    postscript_marker: Phrase


@register("detectable_content:postscript", PostscriptArgs)
def postscript(text: str, *, postscript_marker: str) -> bool:
    """The marker occurs (``P.S.``/``P.P.S`` with optional inner spaces; others as a regex), any case."""
    marker = postscript_marker.strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(search_all(pattern, text.lower(), flags=re.MULTILINE))


class BulletsArgs(Args):
    num_bullets: Count


_STAR_BULLET = re.compile(r"^\s*\*[^\*].*$", re.MULTILINE)
_DASH_BULLET = re.compile(r"^\s*-.*$", re.MULTILINE)


@register("detectable_format:number_bullet_lists", BulletsArgs)
def number_bullet_lists(text: str, *, num_bullets: int) -> bool:
    """Exactly ``num_bullets`` lines starting with ``*`` or ``-`` (a ``---`` rule counts, as in IFEval)."""
    return len(_STAR_BULLET.findall(text)) + len(_DASH_BULLET.findall(text)) == num_bullets


CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@register("detectable_format:constrained_response")
def constrained_response(text: str) -> bool:
    """The response contains one of IFEval's three fixed answers."""
    return any(option in text.strip() for option in CONSTRAINED_RESPONSES)


class HighlightsArgs(Args):
    num_highlights: Count


@register("detectable_format:number_highlighted_sections", HighlightsArgs)
def number_highlighted_sections(text: str, *, num_highlights: int) -> bool:
    """At least ``num_highlights`` non-empty ``*highlighted*`` spans (``**bold**`` counts too)."""
    single = [span for span in re.findall(r"\*[^\n\*]*\*", text) if span.strip("*").strip()]
    double = [span for span in re.findall(r"\*\*[^\n\*]*\*\*", text) if span[2:-2].strip()]
    return len(single) + len(double) >= num_highlights


class SectionsArgs(Args):
    section_spliter: Phrase
    num_sections: Count


@register("detectable_format:multiple_sections", SectionsArgs)
def multiple_sections(text: str, *, section_spliter: str, num_sections: int) -> bool:
    """At least ``num_sections`` sections, each opened by ``<section_spliter> <number>`` (a regex)."""
    pattern = r"\s?" + section_spliter.strip() + r"\s?\d+\s?"
    search_all(pattern, "")  # reports a splitter that is not a valid regular expression
    return len(re.split(pattern, text)) - 1 >= num_sections


_FENCES = ("```json", "```Json", "```JSON", "```")


@register("detectable_format:json_format")
def json_format(text: str) -> bool:
    """The whole response parses as JSON, optionally inside a markdown code fence."""
    body = text.strip()
    for fence in _FENCES:  # each removed in turn, as the reference chains removeprefix
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


@register("detectable_format:title")
def title(text: str) -> bool:
    """A ``<<title>>`` with something left once its outer ``<`` and ``>`` runs are stripped."""
    return any(found.lstrip("<").rstrip(">").strip() for found in re.findall(r"<<[^\n]+>>", text))
