"""Language identification with langdetect, the library IFEval uses, made deterministic.

langdetect samples n-grams at random; the module-level ``langdetect.detect`` is reproducible only
with the global ``DetectorFactory.seed`` set. We build our own factory with seed 0 instead, so
nothing global is touched. Loading the profiles takes ~0.5 s, once per process.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def _detector_factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.seed = 0
    return factory


def detect_language(text: str) -> str | None:
    """The most probable language code of ``text``, or ``None`` where langdetect finds no feature.

    Example:
        >>> detect_language("Das Wetter ist heute sehr schön."), detect_language("12345 !!!")
        ('de', None)
    """
    from langdetect.lang_detect_exception import LangDetectException

    detector = _detector_factory().create()
    detector.append(text)
    try:
        return detector.detect()
    except LangDetectException:
        return None
