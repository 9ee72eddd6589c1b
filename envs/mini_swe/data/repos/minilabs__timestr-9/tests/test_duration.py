import pytest
from timestr import format_duration, parse_duration


def test_parse_compact():
    assert parse_duration("1h30m") == 5400


@pytest.mark.parametrize("text", ["", "10", "5x", "h"])
def test_parse_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_format():
    assert format_duration(5400) == "1h30m"
    assert format_duration(0) == "0s"
