"""IFEval's ``language:response_language`` and ``change_case:*`` instructions."""

from __future__ import annotations

from pydantic import field_validator

from .. import text as tx
from ..language import detect_language
from ..registry import Args, Count, Relation, compare, registrar

register = registrar("ifeval")


# The codes IFEval's response_language accepts (its LANGUAGE_CODES); any other fails to build there.
IFEVAL_LANGUAGES = {
    "en": "English", "es": "Spanish", "pt": "Portuguese", "ar": "Arabic", "hi": "Hindi", "fr": "French",
    "ru": "Russian", "de": "German", "ja": "Japanese", "it": "Italian", "bn": "Bengali", "uk": "Ukrainian",
    "th": "Thai", "ur": "Urdu", "ta": "Tamil", "te": "Telugu", "bg": "Bulgarian", "ko": "Korean",
    "pl": "Polish", "he": "Hebrew", "fa": "Persian", "vi": "Vietnamese", "ne": "Nepali", "sw": "Swahili",
    "kn": "Kannada", "mr": "Marathi", "gu": "Gujarati", "pa": "Punjabi", "ml": "Malayalam", "fi": "Finnish",
}  # fmt: skip


class LanguageArgs(Args):
    language: str

    @field_validator("language")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in IFEVAL_LANGUAGES:
            raise ValueError(
                f"unsupported language code {value!r}; IFEval knows: {', '.join(IFEVAL_LANGUAGES)}"
            )
        return value


@register("language:response_language", LanguageArgs, needs=("langdetect",))
def response_language(text: str, *, language: str) -> bool:
    """langdetect's top language is ``language``; text it cannot classify (no letters) passes (IFEval)."""
    detected = detect_language(text)
    return detected is None or detected == language


@register("change_case:english_capital", needs=("langdetect",))
def english_capital(text: str) -> bool:
    """All capital letters and detected as English (undetectable text passes, as in IFEval)."""
    return text.isupper() and detect_language(text) in ("en", None)


@register("change_case:english_lowercase", needs=("langdetect",))
def english_lowercase(text: str) -> bool:
    """All lowercase letters and detected as English (undetectable text passes, as in IFEval)."""
    return text.islower() and detect_language(text) in ("en", None)


class CapitalFrequencyArgs(Args):
    capital_frequency: Count
    capital_relation: Relation


@register("change_case:capital_word_frequency", CapitalFrequencyArgs, needs=("punkt",))
def capital_word_frequency(text: str, *, capital_frequency: int, capital_relation: str) -> bool:
    """NLTK word tokens in all capitals (``U.S.``, ``DO`` of ``DON'T``) ``less than``/``at least`` N."""
    capitals = sum(1 for token in tx.word_tokens(text) if token.isupper())
    return compare(capitals, capital_relation, capital_frequency)
