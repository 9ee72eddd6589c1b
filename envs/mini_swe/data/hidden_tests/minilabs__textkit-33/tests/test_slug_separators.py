from textkit import slugify


def test_punctuation_collapses():
    assert slugify("Hello, World!") == "hello-world"


def test_custom_separator_collapses():
    assert slugify("  Rock & Roll  ", sep="_") == "rock_roll"


def test_no_edge_separators():
    assert slugify("--Already-Slugged--") == "already-slugged"


def test_digits_kept():
    assert slugify("Top10") == "top10"
