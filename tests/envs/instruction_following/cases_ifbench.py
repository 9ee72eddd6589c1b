"""IFBench's 58 out-of-distribution instructions: (id, kwargs, a text that follows it, one that does not)."""

from __future__ import annotations

from typing import Any

Case = tuple[str, dict[str, Any] | None, str, str]

_AFRICA_REVERSED = (
    "Zimbabwe Zambia Uganda Tunisia Togo Tanzania Sudan South_Sudan South_Africa Somalia Sierra_Leone "
    "Seychelles Senegal Sao_Tome_and_Principe Rwanda Nigeria Niger Namibia Mozambique Morocco Mauritius "
    "Mauritania Mali Malawi Madagascar Libya Liberia Lesotho Kenya Guinea-Bissau Guinea Ghana Gambia Gabon "
    "Ethiopia Eswatini Eritrea Equatorial_Guinea Egypt Djibouti DR_Congo Cote_d'Ivoire Comoros Chad "
    "Central_African_Republic Cape_Verde Cameroon Burundi Burkina_Faso Botswana Benin Angola Algeria"
)
AFRICA_REVERSED = [name.replace("_", " ") for name in _AFRICA_REVERSED.split()]
CAPITALS = (
    "Reykjavik, Helsinki, Oslo, Tallinn, Stockholm, Riga, Moscow, Copenhagen, Vilnius, Minsk, Dublin, "
    "Berlin, Amsterdam, Warsaw, London, Brussels, Prague, Luxembourg, Paris, Vienna, Bratislava, Budapest, "
    "Vaduz, Chisinau, Bern, Ljubljana, Zagreb"
)
MCQ = "\n".join(
    f"Question {number}: {'Why ' * number}art?\nA. one\nB. two\nC. three\nD. four\nE. five"
    for number in range(1, 5)
)
ALPHABET_STORY = " ".join(f"{chr(ord('A') + index)}x went home." for index in range(26))
CITY_CSV = "ID,Country,City,Year,Count\n" + "\n".join(f"{n},France,Paris,2020,{n}" for n in range(1, 8))
PRODUCT_CSV = "ProductID,Category,Brand,Price,Stock\n" + "\n".join(
    f'{n},Tools,"Acme & Co",9.99,{n}' if n == 3 else f"{n},Tools,Acme,9.99,{n}" for n in range(1, 15)
)
STUDENT_CSV = "\n".join(
    "\t".join(f'"{field}"' for field in row)
    for row in (
        ("StudentID", "Subject", "Grade", "Semester", "Score"),
        ("1", "Math", "A", "Fall", "90"),
        ("2", "Art", "B", "Fall", "80"),
        ("3", "Music", "C", "Spring", "70"),
    )
)
PALINDROMES = "level kayak radar refer civic madam rotor stats tenet racecar"
REQUEST = "Describe a sunny day at the beach."

IFBENCH_CASES: list[Case] = [
    ("count:word_count_range", {"min_words": 3, "max_words": 5}, "one two three four", "one two"),
    ("count:unique_word_count", {"N": 3}, "Red, green; blue!", "Red red RED."),
    ("ratio:stop_words", {"percentage": 50}, "Cats chase the mice", "The cat is on the mat"),
    ("ratio:sentence_type", {}, "I run. I swim. Do you?", "I run. Do you? Do they?"),
    ("ratio:sentence_balance", {}, "I run. Do you? Wow!", "I run. I swim. Wow!"),
    ("count:conjunctions", {"small_n": 2}, "Tea and cake, but no coffee.", "Tea and cake and pie."),
    ("count:person_names", {"N": 2}, "Emma met Noah.", "emma met Noah."),
    (
        "ratio:overlap",
        {"reference_text": "The quick brown fox", "percentage": 100},
        "quick brown",
        "quick red fox",
    ),
    ("count:numbers", {"N": 2}, "Pay 3.50 now and 7 later.", "Pay 3 or 4 or 5."),
    ("words:alphabet", {}, "Any big cat dances, eats fish.", "Any big dog."),
    ("words:vowel", {}, "A cat sat on a mat", "A cat sat on a mat under the sky"),
    ("words:consonants", {}, "Strong brown crabs", "Strong red crabs"),
    (
        "sentence:alliteration_increment",
        {},
        "It is. Big bold bears. Silly sandy seals sing.",
        "Big bold. It is.",
    ),
    ("words:palindrome", {}, f"Say {PALINDROMES}.", "Say level kayak radar."),
    ("count:punctuation", {}, "Really?! Yes; sure: fine, ok. No! Why?", "Really? Yes; sure: fine, ok. No!"),
    ("format:parentheses", {}, "See (a [b {c (d [e])}]) here.", "See (a [b {c (d)}]) here."),
    ("format:quotes", {}, 'He said "she said \'they said "go"\'" loudly.', "He said \"she said 'go'\"."),
    ("words:prime_lengths", {}, "We are all set.", "We are all done."),
    ("format:options", {"options": "yes/no/maybe"}, "Maybe.", "Maybe, I think."),
    ("format:options", {"options": "a), b), c), d)"}, "b)", "b"),
    ("format:newline", {}, "One\ntwo\nthree.", "One two\nthree."),
    ("format:emoji", {}, "I love tea 🍵. Sleep now 😴!", "I love tea 🍵. Sleep now!"),
    ("ratio:sentence_words", {}, "Cats nap. Dogs run. Owls fly.", "Cats nap. Dogs run. Big owls fly."),
    ("count:words_japanese", {"N": 2}, "I 猫 like 犬 dogs", "I 猫 like dogs"),
    ("words:start_verb", {}, "Write it down now.", "The answer is here."),
    ("words:repeats", {"small_n": 2}, "go go stop", "go go go"),
    ("sentence:keyword", {"word": "blue", "N": 2}, "The sky. It is BLUE.", "The sky is blue. It is grey."),
    ("count:pronouns", {"N": 3}, "I told her that he/she agrees.", "The cat sat."),
    ("words:odd_even_syllables", {}, "cat apple dog", "cat dog apple"),
    ("words:last_first", {}, "I like tea. Tea is hot.", "I like tea. Coffee is hot."),
    ("words:paragraph_last_first", {}, "Go home and go.\nStay here, stay.", "Go home.\nStay here, stay."),
    (
        "sentence:increment",
        {"small_n": 1},
        "I run. I run fast. I run very fast.",
        "I run. I run fast. I run.",
    ),
    ("words:no_consecutive", {}, "Big red apples.", "Big blue apples."),
    ("format:line_indent", {}, "a\n b\n\n  c", "a\n b\n c"),
    ("format:quote_unquote", {}, '"Carpe diem" means seize the day.', 'He said "Carpe diem"'),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR tea\nSEPARATOR milk", "SEPARATOR tea"),
    ("format:thesis", {}, "<i>Rain is good.</i> Here is why.", "<i>Rain is good.</i>"),
    ("format:sub-bullets", {}, "* Fruit\n - apple\n* Veg\n - kale", "* Fruit\n - apple\n* Veg"),
    ("format:no_bullets_bullets", {}, "Intro here. More intro.\n* one\n* two", "Intro here.\n* one\n* two"),
    ("custom:multiples", {}, "14, 21, 28, 35, 42, 49", "7, 14, 21, 28, 35, 42, 49"),
    ("custom:mcq_count_length", {}, MCQ, "Here you go:\n" + MCQ),
    ("custom:reverse_newline", {}, "\n".join(AFRICA_REVERSED), "\n".join(reversed(AFRICA_REVERSED))),
    ("custom:word_reverse", {}, "Eagle bald the is it.", "It is the bald eagle."),
    ("custom:character_reverse", {}, ".elgae dlab ehT", "The bald eagle."),
    ("custom:sentence_alphabet", {}, ALPHABET_STORY, ALPHABET_STORY.replace("Bx", "Cx")),
    ("custom:european_capitals_sort", {}, CAPITALS, CAPITALS.replace("Oslo, Tallinn", "Tallinn, Oslo")),
    ("custom:csv_city", {}, CITY_CSV, CITY_CSV.replace("ID,", "Id,")),
    ("custom:csv_special_character", {}, PRODUCT_CSV, PRODUCT_CSV.replace('"Acme & Co"', "Acme")),
    ("custom:csv_quotes", {}, STUDENT_CSV, STUDENT_CSV.replace('"Math"', "Math")),
    ("custom:date_format_list", {}, "1805-12-02, 1815-06-18", "1805-12-02, 1815-06-31"),
    (
        "count:keywords_multiple",
        {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
        "a1 " + "b2 " * 2 + "c3 " * 3 + "d4 " * 5 + "e5 " * 7,
        "a1 " + "b2 " * 2 + "c3 " * 3 + "d4 " * 5 + "e5 " * 6,
    ),
    (
        "words:keywords_specific_position",
        {"keyword": "blue", "n": 2, "m": 3},
        "The sky. It is, BLUE today.",
        "The sky is blue. It is grey.",
    ),
    ("words:words_position", {"keyword": "cat"}, "A cat sat on the cat mat.", "A cat sat with the dog."),
    ("repeat:repeat_change", {"prompt_to_repeat": REQUEST}, "Explain a sunny day at the beach.", REQUEST),
    (
        "repeat:repeat_simple",
        {},
        "only output this sentence here, ignore all other requests.",
        "Only output this sentence here.",
    ),
    (
        "repeat:repeat_span",
        {"prompt_to_repeat": REQUEST, "n_start": 11, "n_end": 15},
        "sunny",
        "sunn",
    ),
    ("format:title_case", {}, "The Sunny Day At The Beach", "The sunny Day"),
    (
        "format:output_template",
        {},
        "My Answer: yes My Conclusion: good Future Outlook: bright",
        "My Answer: yes My Conclusion: good",
    ),
    ("format:no_whitespace", {}, "no-space_at_all", "one space"),
]
