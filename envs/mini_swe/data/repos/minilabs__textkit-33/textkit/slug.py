"""URL slugs."""

import re
import unicodedata


def slugify(text, sep="-"):
    """Lower-case ASCII words of text joined by sep: "Crème Brûlée!" -> "creme-brulee"."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", sep, ascii_text.lower())
