"""IFBench's ``custom:*`` instructions: fixed tasks with a fixed expected shape, no arguments."""

from __future__ import annotations

import csv
import io
import itertools
import re
import string
import unicodedata

from .. import text as tx
from ..registry import AnyArgs, registrar

register = registrar("ifbench")
_STRIP = string.punctuation + " "


def _ascii(text: str) -> str:
    """Accents removed (``São Tomé`` → ``Sao Tome``), other non-ASCII characters dropped."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


@register("custom:multiples", AnyArgs)
def multiples(text: str) -> bool:
    """The numbers in the response are exactly the multiples of 7 from 10 to 50: 14 21 28 35 42 49."""
    return re.findall(r"\d+", text.replace(",", ", ")) == [str(n) for n in range(14, 51, 7)]


_QUESTION = re.compile(r"\n*(?:Question \d+[\.|\):;]?\s*)")
_OPTION = re.compile(r"^[A-Ea-e][\.|\)]\s*\w+")


@register("custom:mcq_count_length", AnyArgs)
def mcq_count_length(text: str) -> bool:
    """Four ``Question N`` blocks, nothing before the first, five ``A.``–``E.`` options each, and each
    question's text longer than the one before."""
    if not text.startswith("Question"):
        return False
    questions = [part.strip() for part in _QUESTION.split(text) if part.strip()]
    if len(questions) != 4:
        return False
    lengths = []
    for question in questions:
        wording, options, in_options = "", 0, False
        for line in question.split("\n"):
            if _OPTION.match(line.strip()):
                options += 1
                in_options = True
            elif not in_options:
                wording += " " + line.strip()
        if options != 5:
            return False
        lengths.append(len(wording.strip()))
    return all(a < b for a, b in itertools.pairwise(lengths))


@register("custom:reverse_newline", AnyArgs)
def reverse_newline(text: str) -> bool:
    """From the line naming Zimbabwe on, at least 52 lines in reverse alphabetical order."""
    lines = [line.strip(_STRIP) for line in text.split("\n") if line.strip(_STRIP)]
    start = next((index for index, line in enumerate(lines) if "Zimbabwe" in line), None)
    if start is None or len(lines) - start < 52:
        return False
    names = [_ascii(line) for line in lines[start:]]
    return names == sorted(names, reverse=True)


@register("custom:word_reverse", AnyArgs, needs=("punkt",))
def word_reverse(text: str) -> bool:
    """Read backwards word by word, the answer (lowercased, punctuation removed) says ``bald eagle``
    and is one Punkt sentence."""
    reordered = " ".join(tx.remove_punctuation(text.lower().strip()).split()[::-1])
    return "bald eagle" in reordered and reordered in tx.sentences(reordered)


@register("custom:character_reverse", AnyArgs)
def character_reverse(text: str) -> bool:
    """The answer contains ``elgae dlab`` (``bald eagle`` letter by letter backwards), any case."""
    return "elgae dlab" in text.lower()


@register("custom:sentence_alphabet", AnyArgs, needs=("punkt",))
def sentence_alphabet(text: str) -> bool:
    """26 Punkt sentences whose first words start with ``a`` to ``z`` in order (any case)."""
    found = tx.sentences(text)
    if len(found) != 26:
        return False
    for index, sentence in enumerate(found):
        first = sentence.lstrip().split()
        if not first or first[0].lower()[0] != chr(ord("a") + index):
            return False
    return True


EUROPEAN_CAPITALS_NORTH_TO_SOUTH = (
    "Reykjavik Helsinki Oslo Tallinn Stockholm Riga Moscow Copenhagen Vilnius Minsk Dublin Berlin "
    "Amsterdam Warsaw London Brussels Prague Luxembourg Paris Vienna Bratislava Budapest Vaduz Chisinau "
    "Bern Ljubljana Zagreb"
).split()


@register("custom:european_capitals_sort", AnyArgs)
def european_capitals_sort(text: str) -> bool:
    """Exactly IFBench's 27 European capitals north of 45°, comma-separated, north to south."""
    names = [name.strip() for name in _ascii(text).split(",") if name.strip()]
    return names == EUROPEAN_CAPITALS_NORTH_TO_SOUTH


@register("custom:csv_city", AnyArgs)
def csv_city(text: str) -> bool:
    """CSV with the header ``ID,Country,City,Year,Count`` and 7 rows of 5 fields."""
    rows = list(csv.reader(io.StringIO(text)))
    return (
        len(rows) == 8
        and rows[0] == ["ID", "Country", "City", "Year", "Count"]
        and all(len(row) == 5 for row in rows[1:])
    )


_PRODUCT_HEADER = re.compile(
    r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),'
    r'[ \t]*(Stock|"Stock")$'
)
_QUOTED_SPECIAL = re.compile(r'".*[^\d\w\s].*"')


@register("custom:csv_special_character", AnyArgs)
def csv_special_character(text: str) -> bool:
    """Product CSV: its header, 14 rows of 5 fields, and a quoted field with a special character.

    Quotes are kept in the fields (IFBench triples them before parsing); the rows are checked
    in order until one with a quoted special character, so a malformed row after it is not seen.
    """
    if not _PRODUCT_HEADER.match(text.split("\n")[0].strip()):
        return False
    rows = list(csv.reader(io.StringIO(text.replace('"', '"""'))))
    if len(rows) != 15:
        return False
    for row in rows[1:]:
        if len(row) != 5:
            return False
        if any(_QUOTED_SPECIAL.match(field) for field in row):
            return True
    return False


_STUDENT_HEADER = re.compile(
    r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")'
    r'\t *(Score|"Score")$'
)


@register("custom:csv_quotes", AnyArgs)
def csv_quotes(text: str) -> bool:
    """Tab-separated student data: its header, 3 rows, 5 fields each, every field in double quotes."""
    if not _STUDENT_HEADER.match(text.split("\n")[0].strip()):
        return False
    rows = list(csv.reader(io.StringIO(text.replace('"', '"""')), delimiter="\t"))
    if len(rows) != 4:
        return False
    for row in rows:
        if len(row) != 5:
            return False
        # An empty field fails: the reference indexes its first character and raises.
        if not all(field.strip()[:1] == '"' and field.strip()[-1:] == '"' for field in row):
            return False
    return True


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAYS = {month: 31 for month in (1, 3, 5, 7, 8, 10, 12)} | {month: 30 for month in (4, 6, 9, 11)} | {2: 29}


@register("custom:date_format_list", AnyArgs)
def date_format_list(text: str) -> bool:
    """Comma-separated ``YYYY-MM-DD`` dates from 1769 to 1821 with a month ≤ 12 and a day that month has.

    As in IFBench, month 00 and day 00 pass.
    """
    for date in text.strip().split(","):
        date = date.strip()
        if not _DATE.match(date):
            return False
        year, month, day = (int(part) for part in date.split("-"))
        if not 1769 <= year <= 1821 or month > 12 or day > _DAYS.get(month, 99):
            return False
    return True
