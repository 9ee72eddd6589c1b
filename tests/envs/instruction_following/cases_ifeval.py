"""IFEval's 25 instructions: (id, kwargs, a text that follows it, a text that does not)."""

from __future__ import annotations

from typing import Any

Case = tuple[str, dict[str, Any] | None, str, str]

IFEVAL_CASES: list[Case] = [
    (
        "keywords:existence",
        {"keywords": ["Helmet", "route"]},
        "Wear a helmet on every ROUTE.",
        "Wear a helmet.",
    ),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "at least"},
        "Tea is good; green tea is better.",
        "Coffee is good; tea is better.",
    ),
    (
        "keywords:frequency",
        {"keyword": "tea", "frequency": 2, "relation": "less than"},
        "Coffee is good; tea is better.",
        "Tea is good; green tea is better.",
    ),
    ("keywords:forbidden_words", {"forbidden_words": ["easy"]}, "It takes work, not ease.", "It is Easy."),
    (
        "keywords:letter_frequency",
        {"letter": "z", "let_frequency": 2, "let_relation": "at least"},
        "Zebras zigzag.",
        "Zebras run.",
    ),
    (
        "language:response_language",
        {"language": "de"},
        "Das Wetter ist heute sehr schön und wir gehen in den Park spazieren.",
        "The weather is very nice today and we are going for a walk in the park.",
    ),
    (
        "length_constraints:number_sentences",
        {"num_sentences": 3, "relation": "less than"},
        "Dr. Smith came at 3.30 p.m. today. He left early!",
        "One. Two. Three.",
    ),
    (
        "length_constraints:number_paragraphs",
        {"num_paragraphs": 2},
        "First paragraph here.\n\n***\n\nSecond paragraph here.",
        "First.\n\n***\n\n***\n\nSecond.",
    ),
    (
        "length_constraints:number_words",
        {"num_words": 5, "relation": "at least"},
        "one two three four five",
        "one two three four",
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        'We start here.\n\n"Then, we finish.',
        "We start here.\n\nAnd we finish.",
    ),
    (
        "detectable_content:number_placeholders",
        {"num_placeholders": 2},
        "Dear [name], see you at [place].",
        "Dear [name], see you there.",
    ),
    (
        "detectable_content:postscript",
        {"postscript_marker": "P.S."},
        "Bye.\np. s. call me",
        "Bye.\nPS call me",
    ),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, "Bye.\nP.P.S call", "Bye.\nP.S. call"),
    (
        "detectable_format:number_bullet_lists",
        {"num_bullets": 3},
        "Tips:\n* one\n- two\n---\nDone.",
        "Tips:\n* one\n* two\n**bold** line",
    ),
    ("detectable_format:constrained_response", None, "My answer is maybe.", "My answer is: yes"),
    (
        "detectable_format:number_highlighted_sections",
        {"num_highlights": 2},
        "Use *water* and **salt**.",
        "Use *water* and ** ** salt.",
    ),
    (
        "detectable_format:multiple_sections",
        {"section_spliter": "SECTION", "num_sections": 2},
        "SECTION 1\nIntro\nSECTION 2\nBody",
        "SECTION 1\nIntro and body",
    ),
    ("detectable_format:json_format", {}, '```JSON\n{"a": [1, 2]}\n```', 'Here it is: {"a": 1}'),
    ("detectable_format:title", {}, "<<A Title>>\nText.", "<< >>\nText without a title."),
    ("combination:two_responses", {}, "Yes, indeed.\n******\nNo, never.", "Same.\n******\nSame."),
    (
        "combination:repeat_prompt",
        {"prompt_to_repeat": "Name a color."},
        "  name a color. Blue.",
        "Blue. Name a color.",
    ),
    (
        "startend:end_checker",
        {"end_phrase": "Any other questions?"},
        '"That is all. any other questions?"',
        "Any other questions? That is all.",
    ),
    ("startend:quotation", {}, '  "Quoted answer."  ', '"Half quoted.'),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "at least"},
        "This is VERY WELL-KNOWN.",
        "This is Very well known.",
    ),
    (
        "change_case:english_capital",
        {},
        "THIS ENTIRE ANSWER IS WRITTEN IN CAPITAL LETTERS.",
        "THIS ANSWER IS Mostly IN CAPITAL LETTERS.",
    ),
    (
        "change_case:english_lowercase",
        {},
        "this entire answer is written in lowercase letters.",
        "this answer is mostly in lowercase letters, except for English.",
    ),
    ("punctuation:no_comma", {}, "No commas here.", "Well, a comma."),
]
