from textkit import slugify, truncate


def test_slugify_simple():
    assert slugify("Hello World") == "hello-world"


def test_slugify_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_truncate():
    assert truncate("abcdefgh", 6) == "abc..."
    assert truncate("abc", 6) == "abc"
