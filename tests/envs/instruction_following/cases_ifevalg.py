"""open-instruct's 29 IFEvalG additions: (id, kwargs, a text that follows it, a text that does not)."""

from __future__ import annotations

from typing import Any

Case = tuple[str, dict[str, Any] | None, str, str]

PROMPT = "Write a haiku about rain."

IFEVALG_CASES: list[Case] = [
    (
        "copy:repeat_phrase",
        {"phrase": "The early bird catches the worm", "small_n": 2},
        "The early cat catches the worm. The late bird catches the worm.",
        "The early cat catches the worm. The late bird catches the worm. The early dog catches the worm.",
    ),
    ("copy:copy", {"prompt_to_repeat": PROMPT}, "  write a haiku about rain. ", "Rain falls on the roof."),
    (
        "new:copy_span_idx",
        {"prompt_to_repeat": PROMPT, "n_start": 8, "n_end": 13},
        "haiku",
        "haiku about",
    ),
    (
        "detectable_format:sentence_hyphens",
        {},
        "I like tea.-You like coffee.",
        "I like tea. - You like coffee.",
    ),
    ("keywords:no_adjacent_consecutive", {}, "Cats run home.", "A bright day."),
    ("detectable_format:square_brackets", {}, "[Hello] [big] [world.]", "[Hello] big [world]"),
    ("keywords:word_once", {"keyword": "river"}, "The river runs.", "The river meets another river."),
    (
        "keywords:word_count_different_numbers",
        {"keyword": "sun", "frequency": 2, "relation": "at least"},
        "Sun, more sun.",
        "Only one sun.",
    ),
    ("keywords:exclude_word_harder", {"keyword": "cat"}, "A cat, a dog.", "A cat and a dog."),
    ("paragraphs:paragraphs", {}, "First part.\n***\nSecond part.", "Only one part."),
    ("paragraphs:paragraphs2", {}, "First part.\n\nSecond part.", "First.\n\n\n\nSecond."),
    (
        "first_word:first_word_sent",
        {"first_word": "we"},
        "We came. We saw! we won?",
        "We came. They saw.",
    ),
    ("first_word:first_word_answer", {"first_word": "Sure"}, "sure thing, here it is.", "Sure, here it is."),
    ("last_word:last_word_sent", {"last_word": "now"}, "Go now. Come back NOW!", "Go now. Come back later."),
    ("last_word:last_word_answer", {"last_word": "contest"}, "We won the CONTEST!", "The contest was won."),
    ("detectable_format:bigram_wrapping", {}, "<<I am>> <<at home>> <<now>>", "<<I am>> at <<home now>>"),
    ("copy:copying_simple", {"prompt_to_repeat": PROMPT}, PROMPT, PROMPT + " Rain."),
    (
        "copy:copying_multiple",
        {"prompt_to_repeat": PROMPT, "N": 2},
        f"{PROMPT}\n******\n{PROMPT}",
        f"{PROMPT}\n******\n{PROMPT}\n******\n{PROMPT}",
    ),
    ("punctuation:punctuation_dot", {}, "No dots here!", "A dot."),
    ("punctuation:punctuation_exclamation", {}, "Calm words.", "Wow!"),
    ("count:lowercase_counting", {"N": 2}, "Alpha beta gamma.", "Alpha beta gamma delta."),
    ("letters:letter_counting", {"N": 5, "relation": "less than"}, "Hi 123!", "Hello there"),
    (
        "letters:letter_counting2",
        {"letter": "e", "let_frequency": 3, "let_relation": "at least"},
        "Eerie tree.",
        "Red hat.",
    ),
    (
        "count:counting_composition",
        {"n_sent": 1, "n_words": 3},
        "Cats sleep.\n***\nDogs bark.\n***\nBirds sing.",
        "Cats sleep.\n***\nDogs bark loudly.\n***\nBirds sing.",
    ),
    ("count:count_unique", {}, "Every word here differs", "the cat and the dog"),
    (
        "count:count_increment_word",
        {"keyword1": "moon", "keyword2": "star"},
        "A moon, a star, another star.",
        "A moon, a star.",
    ),
    ("keywords:palindrome", {}, "Nice racecar there.", "Nice car there."),
    (
        "keywords:keyword_specific_position",
        {"keyword": "blue", "n": 2, "m": 3},
        "The sky. It is blue today.",
        "The sky is blue. It is grey today.",
    ),
    ("keywords:start_end", {}, "Hello my friend, hello", "Hello my friend, hello."),
]
