import pytest
from timestr import format_duration, parse_duration


def test_space_between_parts():
    assert parse_duration("1h 30m") == 5400


def test_several_spaces():
    assert parse_duration("2d  4h") == 187200


def test_roundtrip_with_spaces():
    assert format_duration(parse_duration(" 1d 1s ")) == "1d1s"


@pytest.mark.parametrize("text", ["1h 30", "30 m x"])
def test_still_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)
