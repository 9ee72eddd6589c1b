"""IFBench's ``format:*`` instructions."""

from __future__ import annotations

import itertools
import re
import string

from .. import text as tx
from ..registry import Args, Phrase, registrar

register = registrar("ifbench")
_STRIP = string.punctuation + " "
_PAIRS = {")": "(", "]": "[", "}": "{"}


@register("format:parentheses")
def parentheses(text: str) -> bool:
    """Brackets ``( [ {`` nested at least 5 deep and closed again.

    As in IFBench: a group closing after depth 5 was reached passes; a closing bracket that does
    not match the innermost open one forgets everything seen so far.
    """
    stack: list[str] = []
    deepest = 0
    for char in text:
        if char in "([{":
            stack.append(char)
            deepest = max(deepest, len(stack))
        elif char in _PAIRS:
            if stack and stack[-1] == _PAIRS[char]:
                stack.pop()
                if deepest >= 5 and len(stack) < deepest:
                    return True
            else:
                stack, deepest = [], 0
    return False


@register("format:quotes")
def quotes(text: str) -> bool:
    """Quotes within quotes at least 3 levels deep (a quote mark closes the innermost open one if the
    same, else opens a new level)."""
    stack: list[str] = []
    deepest = 0
    for char in text:
        if stack and char == stack[-1]:
            stack.pop()
            if deepest - len(stack) >= 3:
                return True
        elif char in "\"'":
            stack.append(char)
            deepest = max(deepest, len(stack))
    return False


class OptionsArgs(Args):
    options: Phrase


def _split_options(options: str) -> tuple[list[str], bool]:
    """The options of ``options`` and whether they are letters answered exactly (``a), b), c)``)."""
    strict = re.match(r"\W*[aA]\W*[bB]\W*[cC]\W*", options) is not None
    separator = "/" if "/" in options else "or" if "or" in options else ","
    return [option.strip() for option in options.split(separator)], strict


@register("format:options", OptionsArgs)
def options(text: str, *, options: str) -> bool:
    """The response is one of the options (split on ``/``, else ``or``, else ``,``).

    Letter options must match exactly; others ignore case and outer punctuation.
    """
    choices, strict = _split_options(options)
    if strict:
        return text in choices
    answer = text.strip(_STRIP).lower()
    return any(choice.strip(_STRIP).lower() == answer for choice in choices)


@register("format:newline")
def newline(text: str) -> bool:
    """One word per line: as many non-empty lines as words, once punctuation is removed."""
    bare = tx.remove_punctuation(text).strip()
    lines = [line for line in bare.split("\n") if line != ""]
    return len(lines) == len(bare.split())


def _emoji_at(text: str, index: int) -> bool:
    import emoji

    return bool(emoji.is_emoji(text[index]))


@register("format:emoji", needs=("punkt",))
def emoji_sentences(text: str) -> bool:
    """Every Punkt sentence ends with an emoji (in its last two characters once punctuation is
    removed), or the next sentence starts with one."""
    found = [tx.remove_punctuation(sentence).strip() for sentence in tx.sentences(text)]
    for index, sentence in enumerate(found):
        if not sentence:
            return False
        if _emoji_at(sentence, -1) or _emoji_at(sentence, -2 if len(sentence) > 1 else -1):
            continue
        if index == len(found) - 1 or not found[index + 1] or not _emoji_at(found[index + 1], 0):
            return False
    return True


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@register("format:line_indent")
def line_indent(text: str) -> bool:
    """Each line is indented with more spaces than the one before (blank lines dropped).

    IFBench drops blank lines while iterating over the same list, so a blank line right after
    another blank line stays in; that is reproduced.
    """
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if not lines[index].strip():
            lines.remove(lines[index])
        index += 1
    return all(_indent(following) > _indent(current) for current, following in itertools.pairwise(lines))


_QUOTE_TRIM = string.digits + string.punctuation.replace('"', "")


@register("format:quote_unquote")
def quote_unquote(text: str) -> bool:
    """No two quoted phrases back to back and no quote at the very end (whitespace, digits and
    other punctuation aside)."""
    squeezed = "".join(text.replace("'\"'", "").split())
    if '""' in squeezed:
        return False
    trimmed = squeezed.strip(_QUOTE_TRIM)
    return not (trimmed and trimmed[-1] == '"')


class SeparatorArgs(Args):
    sep: Phrase


@register("format:list", SeparatorArgs)
def special_list(text: str, *, sep: str) -> bool:
    """The separator occurs at least twice (anywhere; IFBench does not look at line starts)."""
    return text.count(sep) >= 2


@register("format:thesis")
def thesis(text: str) -> bool:
    """An HTML ``<i>`` (else ``<em>``) span with text, followed by more text.

    Offsets are those of ``<i>``/``</i>`` even for ``<em>``, as in IFBench.
    """
    start = text.find("<i>")
    if start == -1:
        start = text.find("<em>")
        if start == -1:
            return False
    rest = text[start:]
    end = rest.find("</i>")
    if end == -1:
        end = rest.find("</em>")
        if end == -1:
            return False
    return bool(rest[3:end].strip()) and bool(rest[end + 4 :].strip())


@register("format:sub-bullets")
def sub_bullets(text: str) -> bool:
    """Every ``*`` is followed, before the next ``*``, by a ``-``."""
    return all("-" in piece for piece in text.split("*")[1:])


@register("format:no_bullets_bullets", needs=("punkt",))
def no_bullets_bullets(text: str) -> bool:
    """At least two Punkt sentences, then at least two ``*`` bullet lines, and nothing after them."""
    in_sentences, sentence_count, bullets = True, 0, 0
    for line in text.split("\n"):
        if line.strip().startswith("*"):
            in_sentences = False
            if sentence_count < 2:
                return False
            bullets += 1
        elif in_sentences:
            sentence_count += len(tx.sentences(line.strip()))
        else:
            return False
    return bullets >= 2


@register("format:title_case", needs=("punkt",))
def title_case(text: str) -> bool:
    """No NLTK token that starts with a letter is all lowercase or lowercase-then-capitals."""
    for token in tx.word_tokens(text):
        if not token or not token[0].isalpha():
            continue
        if len(token) == 1:
            if token.islower():
                return False
            continue
        if token[0].isupper() and token[1:].islower():
            continue
        if token[0].islower() and (token[1:].isupper() or token[1:].islower()):
            return False
    return True


@register("format:output_template")
def output_template(text: str) -> bool:
    """``My Answer:``, ``My Conclusion:`` and ``Future Outlook:`` all occur."""
    return all(label in text for label in ("My Answer:", "My Conclusion:", "Future Outlook:"))


@register("format:no_whitespace")
def no_whitespace(text: str) -> bool:
    """No whitespace character at all."""
    return not any(char.isspace() for char in text)
