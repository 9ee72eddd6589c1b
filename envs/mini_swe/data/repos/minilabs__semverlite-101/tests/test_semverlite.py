import pytest
from semverlite import Version, compare, parse


def test_parse():
    assert parse("v1.2.3-rc1") == Version(1, 2, 3, "rc1")


def test_parse_rejects_garbage():
    with pytest.raises(ValueError):
        parse("1.2")


def test_compare_equal():
    assert compare("1.2.3", "v1.2.3") == 0


def test_prerelease_is_older():
    assert compare("1.0.0-rc1", "1.0.0") == -1
